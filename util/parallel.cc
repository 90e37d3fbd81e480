#include "util/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace fbkit::util {

void ParallelFor(size_t n, int jobs, const std::function<void(size_t, int)>& fn) {
  int workers = static_cast<int>(std::min<size_t>(n, static_cast<size_t>(std::max(jobs, 1))));
  std::atomic<size_t> next{0};
  auto run = [&](int worker) {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i, worker);
  };
  if (workers <= 1) {
    run(0);
    return;
  }
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(run, w);
  run(0);
  for (auto& t : threads) t.join();
}

int DefaultJobs() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace fbkit::util

// The loop of every batch command (all, infer, eval, export, RACE's instance commands):
// items 0..n-1, `jobs` at a time (`earlier` and `run` are called from several threads at
// once, each item by one). Each item is resumed from an earlier run's result when `earlier`
// has one, else done now by `run` (which writes its result; `worker` in [0, jobs) tells which
// thread's resources to use); `report` is told of each finished item, one call at a time;
// once `stops` holds for a result, items not yet started are left undone.
// An exception out of `earlier` or `run` (a bug) is that item's `failed` result, so the other
// items go on; a batch without `failed` stops starting items and rethrows the first exception
// on the calling thread once the started ones have finished.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "util/parallel.h"

namespace fbkit::util {

// One finished item, as `report` sees it.
template <typename Result>
struct BatchItem {
  size_t index = 0;
  const Result* result = nullptr;
  bool resumed = false;  // from an earlier run
  size_t done = 0;       // items finished so far, this one included
  size_t total = 0;
};

template <typename Result>
struct Batch {
  int jobs = 1;
  std::function<std::optional<Result>(size_t)> earlier = [](size_t) { return std::nullopt; };
  std::function<Result(size_t index, int worker)> run;
  std::function<void(const BatchItem<Result>&)> report = nullptr;
  std::function<bool(const Result&)> stops = nullptr;
  std::function<Result(size_t index, const std::string& what)> failed = nullptr;
};

// The results of items 0..n-1, in order; items never started (after a stop) are nullopt.
template <typename Result>
std::vector<std::optional<Result>> RunBatch(size_t n, const Batch<Result>& b) {
  std::vector<std::optional<Result>> results(n);
  std::atomic<bool> stopped = false;
  std::mutex mu;
  std::exception_ptr first;
  size_t done = 0;
  ParallelFor(n, b.jobs < 1 ? 1 : b.jobs, [&](size_t i, int worker) {
    if (stopped) return;
    std::optional<Result> r;
    bool resumed = false;
    try {
      r = b.earlier(i);
      resumed = r.has_value();
      if (!r) r = b.run(i, worker);
    } catch (const std::exception& e) {
      if (!b.failed) {
        std::lock_guard<std::mutex> lock(mu);
        if (!first) first = std::current_exception();
        stopped = true;
        return;
      }
      r = b.failed(i, e.what());
    }
    if (b.stops && b.stops(*r)) stopped = true;
    std::lock_guard<std::mutex> lock(mu);
    results[i] = std::move(r);
    ++done;
    if (b.report) b.report(BatchItem<Result>{i, &*results[i], resumed, done, n});
  });
  if (first) std::rethrow_exception(first);
  return results;
}

}  // namespace fbkit::util

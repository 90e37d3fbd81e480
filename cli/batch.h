// The loop of the batch commands (infer, eval): the items of one shard, `jobs` at a time,
// each resumed from an earlier run's result when there is one, else done now; one line per
// item on stderr ("[k/n] ID: what (earlier run)") under a progress line; optionally stopping
// the items not yet started once one result says the rest would fail alike.
#pragma once

#include <atomic>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "util/parallel.h"

namespace fbkit::cli {

template <typename Result>
struct Batch {
  std::string label;  // the progress line's
  int jobs = 1;
  bool quiet = false;
  std::function<std::string(size_t)> id;                   // item i's name in its line
  std::function<std::optional<Result>(size_t)> earlier;   // a final result of an earlier run
  std::function<Result(size_t)> run;                       // does item i (and writes its result)
  std::function<std::string(const Result&)> describe;      // the rest of its line
  std::function<bool(const Result&)> stops = nullptr;      // no item starts after this one
};

// The results of items 0..n-1, in order; items never started (after a stop) are nullopt.
template <typename Result>
std::vector<std::optional<Result>> RunBatch(size_t n, const Batch<Result>& b) {
  std::vector<std::optional<Result>> results(n);
  std::atomic<bool> stopped = false;
  std::mutex mu;
  size_t done = 0;
  Progress progress(b.label, !b.quiet);
  util::ParallelFor(n, std::max(1, b.jobs), [&](size_t i, int) {
    if (stopped) return;
    std::optional<Result> r = b.earlier(i);
    bool resumed = r.has_value();
    if (!r) r = b.run(i);
    if (b.stops && b.stops(*r)) stopped = true;
    std::lock_guard<std::mutex> lock(mu);
    progress.Clear();
    ++done;
    if (!b.quiet) {
      std::fprintf(stderr, "[%zu/%zu] %s: %s%s\n", done, n, b.id(i).c_str(), b.describe(*r).c_str(),
                   resumed ? " (earlier run)" : "");
    }
    results[i] = std::move(r);
    progress.Update(done, n);
  });
  progress.Clear();
  return results;
}

}  // namespace fbkit::cli

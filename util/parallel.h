// Runs fn(index, worker) for every index in [0, n) on `jobs` threads (worker in [0, jobs)).
// Indices are handed out in increasing order; results go wherever fn puts them, so callers
// that store by index get deterministic output whatever the scheduling.
#pragma once

#include <cstddef>
#include <functional>

namespace fbkit::util {

void ParallelFor(size_t n, int jobs, const std::function<void(size_t index, int worker)>& fn);

// The default --jobs: the number of online processors (at least 1).
int DefaultJobs();

}  // namespace fbkit::util

// RACE-bench's Lite subset: a randomized local search for N instances on which every agent
// configuration's Resolved Rate and Patch Apply Rate match its rates on the full set.
// Objective: the largest absolute rate difference over configurations and both rates, ties
// broken by their sum; moves swap one chosen and one unchosen instance and are kept when
// the objective does not get worse. Deterministic for a seed (util::Rng).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "groundtruth/records.h"
#include "util/expected.h"

namespace fbkit::groundtruth {

struct LiteRates {
  std::string agent;
  double full_resolved = 0, full_applied = 0;
  double lite_resolved = 0, lite_applied = 0;
};

struct LiteResult {
  std::vector<std::string> instances;  // sorted
  double max_deviation = 0;
  double sum_deviation = 0;
  double start_max_deviation = 0;  // of the random starting subset
  int iterations = 0;              // moves tried
  std::vector<LiteRates> rates;
};

// The universe is the instances every run has, with both flags known (missing flags make
// an instance ineligible). Fails when it holds fewer than `size` instances.
util::Expected<LiteResult> ChooseLite(const std::vector<AgentRun>& runs, size_t size, uint64_t seed,
                                      int iterations);

// fbkit.race-lite/1 (keys sorted).
std::string LiteJson(const LiteResult& r, uint64_t seed);

}  // namespace fbkit::groundtruth

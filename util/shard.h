// Sharing a list of items among N jobs of a cluster array: a shard (part K of N), "K/N"
// parsed, which items belong to shard K when they are dealt round robin (item i, 0-based in
// the list's order, when i % N == K - 1), and the file name a shard writes its own summary to.
#pragma once

#include <cstddef>
#include <string>

#include "util/expected.h"

namespace fbkit::util {

// Part `index` (1-based) of `count` parts of a list; {1, 1} is the whole list. Tasks,
// candidates and instances are dealt round robin (InShard); traced test files in contiguous
// parts of about equal weight (tracer/run_trace.h).
struct Shard {
  int index = 1;
  int count = 1;
};

// "K/N" -> {K, N} with 1 <= K <= N ("" -> {1, 1}); anything else is an error naming it.
Expected<Shard> ParseShard(const std::string& text);

// "K/N".
std::string ShardName(const Shard& shard);

// Whether item `index` belongs to `shard`, dealt round robin.
bool InShard(size_t index, const Shard& shard);

// NAME.EXT for an unsharded run (N = 1), else NAME.K-of-N.EXT.
std::string ShardFileName(const std::string& name, const std::string& ext,
                          const Shard& shard);

}  // namespace fbkit::util

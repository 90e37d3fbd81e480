// Sharing a list of items among N jobs of a cluster array: "K/N" parsed, which items belong
// to shard K (item i, 0-based in the list's order, when i % N == K - 1), and the file name
// a shard writes its own summary to.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "util/expected.h"

namespace fbkit::util {

// "K/N" -> {K, N} with 1 <= K <= N ("" -> {1, 1}); anything else is an error naming it.
Expected<std::pair<int, int>> ParseShard(const std::string& text);

bool InShard(size_t index, const std::pair<int, int>& shard);

// NAME.EXT for an unsharded run (N = 1), else NAME.K-of-N.EXT.
std::string ShardFileName(const std::string& name, const std::string& ext,
                          const std::pair<int, int>& shard);

}  // namespace fbkit::util

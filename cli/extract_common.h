// Pieces fb-extract's commands share: finding task directories, and sharding.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "util/env.h"
#include "util/expected.h"

namespace fbkit::cli {

// instance id -> task directory: TASKS itself when it is one, the directories a task list
// names (a file: one directory per line, relative to the list; # comments), else TASKS's
// subdirectories that hold an instance.json.
util::Expected<std::map<std::string, std::string>> FindTasks(util::Env& env, const std::string& tasks);

// "K/N" -> {K, N} with 1 <= K <= N ("" -> {1, 1}); item i (0-based, in sorted order) belongs
// to shard K when i % N == K - 1.
util::Expected<std::pair<int, int>> ParseShard(const std::string& s);
bool InShard(size_t index, const std::pair<int, int>& shard);

}  // namespace fbkit::cli

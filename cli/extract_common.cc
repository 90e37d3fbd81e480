#include "cli/extract_common.h"

#include <stdexcept>
#include <vector>

#include "extract/verify.h"

namespace fbkit::cli {

util::Expected<std::map<std::string, std::string>> FindTasks(util::Env& env, const std::string& tasks) {
  auto root = env.RealPath(tasks);
  if (!root.ok()) return util::Error{tasks + ": " + root.error()};
  std::vector<std::string> dirs;
  if (env.Stat(util::JoinPath(*root, "instance.json"), true).ok()) {
    dirs.push_back(*root);
  } else {
    auto entries = env.ListDir(*root);
    if (!entries.ok()) return util::Error{tasks + ": " + entries.error()};
    for (const auto& e : *entries) {
      std::string dir = util::JoinPath(*root, e.name);
      if (e.type == util::FileType::kDirectory && env.Stat(util::JoinPath(dir, "instance.json"), true).ok()) {
        dirs.push_back(dir);
      }
    }
  }
  std::map<std::string, std::string> out;
  for (const auto& dir : dirs) {
    auto text = env.ReadFile(util::JoinPath(dir, "instance.json"));
    auto info = text.ok() ? extract::ReadInstance(*text)
                          : util::Expected<extract::InstanceInfo>(util::Error{text.error()});
    if (!info.ok()) return util::Error{util::JoinPath(dir, "instance.json") + ": " + info.error()};
    out[info->instance_id] = dir;
  }
  if (out.empty()) return util::Error{tasks + ": no task directories (with instance.json) found"};
  return out;
}

util::Expected<std::pair<int, int>> ParseShard(const std::string& s) {
  if (s.empty()) return std::pair{1, 1};
  size_t slash = s.find('/');
  try {
    int k = std::stoi(s.substr(0, slash)), n = std::stoi(s.substr(slash + 1));
    if (slash == std::string::npos || k < 1 || n < 1 || k > n) throw std::invalid_argument(s);
    return std::pair{k, n};
  } catch (const std::exception&) {
    return util::Error{"--shard must be K/N with 1 <= K <= N, got '" + s + "'"};
  }
}

bool InShard(size_t index, const std::pair<int, int>& shard) {
  return static_cast<int>(index % static_cast<size_t>(shard.second)) == shard.first - 1;
}

}  // namespace fbkit::cli

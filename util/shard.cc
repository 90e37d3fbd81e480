#include "util/shard.h"

#include <charconv>

namespace fbkit::util {
namespace {

bool ParseInt(std::string_view s, int* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

Expected<std::pair<int, int>> ParseShard(const std::string& text) {
  if (text.empty()) return std::pair{1, 1};
  size_t slash = text.find('/');
  int k = 0, n = 0;
  if (slash != std::string::npos && ParseInt(std::string_view(text).substr(0, slash), &k) &&
      ParseInt(std::string_view(text).substr(slash + 1), &n) && k >= 1 && k <= n) {
    return std::pair{k, n};
  }
  return Error{"--shard must be K/N with 1 <= K <= N (e.g. 2/4), got '" + text + "'"};
}

bool InShard(size_t index, const std::pair<int, int>& shard) {
  return static_cast<int>(index % static_cast<size_t>(shard.second)) == shard.first - 1;
}

std::string ShardFileName(const std::string& name, const std::string& ext,
                          const std::pair<int, int>& shard) {
  if (shard.second == 1) return name + "." + ext;
  return name + "." + std::to_string(shard.first) + "-of-" + std::to_string(shard.second) + "." +
         ext;
}

}  // namespace fbkit::util

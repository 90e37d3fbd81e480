#include "util/shard.h"

#include <charconv>

namespace fbkit::util {
namespace {

bool ParseInt(std::string_view s, int* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

Expected<Shard> ParseShard(const std::string& text) {
  if (text.empty()) return Shard{};
  size_t slash = text.find('/');
  int k = 0, n = 0;
  if (slash != std::string::npos && ParseInt(std::string_view(text).substr(0, slash), &k) &&
      ParseInt(std::string_view(text).substr(slash + 1), &n) && k >= 1 && k <= n) {
    return Shard{k, n};
  }
  return Error{"--shard must be K/N with 1 <= K <= N (e.g. 2/4), got '" + text + "'"};
}

std::string ShardName(const Shard& shard) {
  return std::to_string(shard.index) + "/" + std::to_string(shard.count);
}

bool InShard(size_t index, const Shard& shard) {
  return static_cast<int>(index % static_cast<size_t>(shard.count)) == shard.index - 1;
}

std::string ShardFileName(const std::string& name, const std::string& ext,
                          const Shard& shard) {
  if (shard.count == 1) return name + "." + ext;
  return name + "." + std::to_string(shard.index) + "-of-" + std::to_string(shard.count) + "." +
         ext;
}

}  // namespace fbkit::util

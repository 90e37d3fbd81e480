// Reading helpers for nlohmann documents that never throw (for modules that already parse
// with nlohmann; the library stays an implementation detail of their .cc files).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fbkit::util {

// The strings of the array j[key]; empty when there is no such array, non-strings skipped.
inline std::vector<std::string> JsonStringList(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.is_object() || !j.contains(key) || !j[key].is_array()) return out;
  for (const auto& x : j[key]) {
    if (x.is_string()) out.push_back(x.get<std::string>());
  }
  return out;
}

}  // namespace fbkit::util

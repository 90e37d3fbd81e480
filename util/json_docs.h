// Reading JSON, JSON Lines and the common wrappers into nlohmann documents, with errors
// naming the file and line (for modules that parse with nlohmann inside their .cc files).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/expected.h"

namespace fbkit::util {

// The records of `text`: the elements of a top-level array, of a "key" array inside an
// object holding one, the object itself otherwise, or one record per non-empty line (JSON
// Lines). Errors read "PATH:LINE: message".
Expected<std::vector<nlohmann::json>> ReadRecords(const std::string& text,
                                                        const std::string& path,
                                                        const std::string& key,
                                                        nlohmann::json* wrapper = nullptr);

// Helpers that throw nlohmann::json exceptions on a wrong type; callers catch them.
std::string StrOr(const nlohmann::json& j, const char* key, const std::string& fallback = "");
std::vector<std::string> StrList(const nlohmann::json& j, const char* key);
// For foreign files read leniently: the string at `key`, else `fallback` (never throws).
std::string TextOr(const nlohmann::json& j, const char* key, const std::string& fallback = "");

}  // namespace fbkit::util

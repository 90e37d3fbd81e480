#include "util/json_docs.h"

#include <algorithm>

namespace fbkit::util {
namespace {

int LineOf(const std::string& text, size_t byte) {
  byte = std::min(byte, text.size());
  return 1 +
         static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(byte), '\n'));
}

}  // namespace

Expected<std::vector<nlohmann::json>> ReadRecords(const std::string& text,
                                                        const std::string& path,
                                                        const std::string& key,
                                                        nlohmann::json* wrapper) {
  std::vector<nlohmann::json> out;
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_discarded()) {
    if (doc.is_array()) {
      for (auto& x : doc) out.push_back(std::move(x));
    } else if (doc.is_object() && doc.contains(key) && doc[key].is_array()) {
      for (auto& x : doc[key]) out.push_back(std::move(x));
      if (wrapper) *wrapper = std::move(doc);
    } else {
      out.push_back(std::move(doc));
    }
    return out;
  }
  size_t line_start = 0;
  int line = 1;
  bool several = false;
  while (line_start < text.size()) {
    size_t e = text.find('\n', line_start);
    if (e == std::string::npos) e = text.size();
    std::string l = text.substr(line_start, e - line_start);
    if (l.find_first_not_of(" \t\r") != std::string::npos) {
      try {
        out.push_back(nlohmann::json::parse(l));
        several = true;
      } catch (const nlohmann::json::parse_error& err) {
        if (!several && out.empty()) {
          // Not JSON Lines either: report the whole document's error position.
          try {
            auto unused = nlohmann::json::parse(text);
            (void)unused;
          } catch (const nlohmann::json::parse_error& whole) {
            return Error{path + ":" + std::to_string(LineOf(text, whole.byte)) +
                               ": invalid JSON: " + whole.what()};
          }
        }
        return Error{path + ":" + std::to_string(line) + ": invalid JSON: " + err.what()};
      }
    }
    line_start = e + 1;
    ++line;
  }
  if (out.empty()) return Error{path + ": no JSON record"};
  return out;
}

std::string StrOr(const nlohmann::json& j, const char* key, const std::string& fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->get<std::string>();
}

std::string TextOr(const nlohmann::json& j, const char* key, const std::string& fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::vector<std::string> StrList(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  return it->get<std::vector<std::string>>();
}

}  // namespace fbkit::util

// Reading helpers for nlohmann documents that never throw (for modules that already parse
// with nlohmann; the library stays an implementation detail of their .cc files).
#pragma once

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
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

// The sizes, decoded, of the strings of a JSON text, found without parsing it: a caller
// refuses a document whose strings pass its bounds before the parser copies them.
struct JsonStringSizes {
  uint64_t longest = 0;  // bytes of the longest string (keys included)
  uint64_t total = 0;    // bytes of all strings together
};

inline JsonStringSizes MeasureJsonStrings(std::string_view text) {
  JsonStringSizes out;
  auto hex = [&](size_t at) -> int {
    if (at + 4 > text.size()) return -1;
    int v = 0;
    for (size_t k = at; k < at + 4; ++k) {
      char c = text[k];
      int d = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    return v;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"') continue;
    uint64_t bytes = 0;
    for (++i; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] != '\\') {
        ++bytes;
        continue;
      }
      if (++i < text.size() && text[i] == 'u') {
        int v = hex(i + 1);
        // A surrogate pair is four bytes of UTF-8: its high half counts them all.
        bytes += v < 0 ? 1 : v < 0x80 ? 1 : v < 0x800 ? 2 : v >= 0xDC00 && v < 0xE000 ? 0
                 : v >= 0xD800 && v < 0xDC00 ? 4 : 3;
        if (v >= 0) i += 4;
      } else {
        ++bytes;
      }
    }
    out.longest = std::max(out.longest, bytes);
    out.total += bytes;
  }
  return out;
}

// A JSON text's brackets outside its strings, found without parsing it.
struct JsonBrackets {
  int deepest = 0;                            // the deepest nesting
  size_t first_end = std::string_view::npos;  // just past the bracket closing the first value
  size_t values = 1;  // at least the number of values (brackets and commas, plus one)
};

inline JsonBrackets ScanJsonBrackets(std::string_view text) {
  JsonBrackets out;
  int open = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      out.deepest = std::max(out.deepest, ++open);
      ++out.values;
    } else if (c == ',') {
      ++out.values;
    } else if ((c == ']' || c == '}') && --open == 0 && out.first_end == std::string_view::npos) {
      out.first_end = i + 1;
    }
  }
  return out;
}

// Parses JSON that code fbkit does not trust wrote (an agent's logs, trajectories, usage):
// never throws, and what it returns is bounded: a document nested deeper than `max_depth`
// or holding more values than `max_values` is discarded whole (is_discarded()), judged by a
// linear scan before parsing, so a hostile document can neither exhaust memory nor make a
// later dump() or walk recurse without end. A document that is not JSON is discarded too.
// (nlohmann's callback parser, which could drop only the excess, rescans a container at the
// end of each object in it: a 2 MiB array of small objects took minutes, red team round 11.)
inline nlohmann::json ParseUntrustedJson(std::string_view text, int max_depth = 64,
                                         size_t max_values = 1u << 20) {
  JsonBrackets brackets = ScanJsonBrackets(text);
  if (brackets.deepest > max_depth || brackets.values > max_values) {
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  return nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
}

}  // namespace fbkit::util

#include "parser/docstring.h"

#include <algorithm>
#include <vector>

namespace fbkit::parser {
namespace {

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses exactly n hex digits at s[i]; returns -1 when they are not all there.
int64_t ParseHex(std::string_view s, size_t i, size_t n) {
  if (i + n > s.size()) return -1;
  int64_t v = 0;
  for (size_t k = 0; k < n; ++k) {
    int d = HexValue(s[i + k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

std::string ExpandTabs(std::string_view line) {
  std::string out;
  for (char c : line) {
    if (c == '\t') {
      out.append(8 - out.size() % 8, ' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string DecodeEscapes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out.push_back(s[i]);
      continue;
    }
    char c = s[++i];
    static const std::string_view kSimple = "ntr\\'\"abfv";
    static const char kValue[] = "\n\t\r\\'\"\a\b\f\v";
    if (size_t k = kSimple.find(c); k != kSimple.npos) {
      out.push_back(kValue[k]);
    } else if (c == '\n') {
      // backslash-newline: a line continuation inside the literal
    } else if (c == '\r') {
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else if (c >= '0' && c <= '7') {
      uint32_t v = 0;
      size_t n = 0;
      for (; n < 3 && i < s.size() && s[i] >= '0' && s[i] <= '7'; ++n, ++i) v = v * 8 + (s[i] - '0');
      --i;
      AppendUtf8(v, &out);
    } else if (c == 'x' || c == 'u' || c == 'U') {
      size_t n = c == 'x' ? 2 : (c == 'u' ? 4 : 8);
      int64_t v = ParseHex(s, i + 1, n);
      if (v < 0 || v > 0x10FFFF) {
        out.push_back('\\');
        out.push_back(c);
      } else {
        AppendUtf8(static_cast<uint32_t>(v), &out);
        i += n;
      }
    } else {
      out.push_back('\\');
      out.push_back(c);
    }
  }
  return out;
}

std::string CleanDocstring(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (;;) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == text.npos ? text.npos : nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(ExpandTabs(line));
    if (nl == text.npos) break;
    start = nl + 1;
  }
  static const char kSpace[] = " \t\n\r\v\f";
  size_t margin = std::string::npos;
  for (size_t i = 1; i < lines.size(); ++i) {
    size_t indent = lines[i].find_first_not_of(kSpace);
    if (indent != std::string::npos) margin = std::min(margin, indent);
  }
  size_t first = lines[0].find_first_not_of(kSpace);
  lines[0] = first == std::string::npos ? "" : lines[0].substr(first);
  if (margin != std::string::npos) {
    for (size_t i = 1; i < lines.size(); ++i) {
      lines[i] = lines[i].size() > margin ? lines[i].substr(margin) : "";
    }
  }
  size_t b = 0, e = lines.size();
  while (e > b && lines[e - 1].empty()) --e;
  while (b < e && lines[b].empty()) ++b;
  std::string out;
  for (size_t i = b; i < e; ++i) {
    if (i > b) out.push_back('\n');
    out += lines[i];
  }
  return out;
}

}  // namespace fbkit::parser

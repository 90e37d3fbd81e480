#include "util/strings.h"

#include <cctype>

#include <algorithm>

namespace fbkit::util {

std::string Tail(const std::string& text, size_t n) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

std::string AsciiLower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::pair<size_t, std::string>> NumberedLines(const std::string& text) {
  std::vector<std::pair<size_t, std::string>> out;
  size_t line_no = 0;
  for (size_t b = 0; b < text.size();) {
    size_t e = std::min(text.find('\n', b), text.size());
    out.emplace_back(++line_no, text.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t e = s.find(sep); e != std::string::npos; b = e + 1, e = s.find(sep, b)) {
    out.push_back(s.substr(b, e - b));
  }
  out.push_back(s.substr(b));
  return out;
}

std::vector<std::string_view> Records(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t b = 0; b < s.size();) {
    size_t e = std::min(s.find(sep, b), s.size());
    out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

bool IsFileName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 255) return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '/' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

std::string Printable(std::string_view s) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 && c != '\n' && c != '\t') || u == 0x7f ? '?' : c;
  }
  return out;
}

bool InTestsDirectory(std::string_view path) {
  std::string p = "/" + std::string(path);
  return p.find("/tests/") != std::string::npos || p.find("/test/") != std::string::npos;
}

std::string Base64Lines(std::string_view data) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out, line;
  auto byte = [&](size_t i) { return static_cast<unsigned>(static_cast<unsigned char>(data[i])); };
  for (size_t i = 0; i < data.size(); i += 3) {
    unsigned n = byte(i) << 16;
    if (i + 1 < data.size()) n |= byte(i + 1) << 8;
    if (i + 2 < data.size()) n |= byte(i + 2);
    line += kAlphabet[(n >> 18) & 63];
    line += kAlphabet[(n >> 12) & 63];
    line += i + 1 < data.size() ? kAlphabet[(n >> 6) & 63] : '=';
    line += i + 2 < data.size() ? kAlphabet[n & 63] : '=';
    if (line.size() == 76) out += line + "\n", line.clear();
  }
  if (!line.empty()) out += line + "\n";
  return out;
}

std::vector<std::string_view> LinesWithEnds(std::string_view s) {
  std::vector<std::string_view> out;
  size_t b = 0;
  while (b < s.size()) {
    size_t e = s.find('\n', b);
    if (e == std::string_view::npos) e = s.size() - 1;
    out.push_back(s.substr(b, e - b + 1));
    b = e + 1;
  }
  return out;
}

}  // namespace fbkit::util

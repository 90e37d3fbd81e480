#include "parser/modules.h"

#include <cctype>
#include <string_view>
#include <vector>

namespace fbkit::parser {

std::string PackageOf(const FileTable& table) {
  if (table.path.ends_with("__init__.py")) return table.module;
  size_t dot = table.module.rfind('.');
  return dot == std::string::npos ? "" : table.module.substr(0, dot);
}

std::string AbsoluteModule(const FileTable& table, const Import& imp) {
  if (imp.level == 0) return imp.module;
  std::string base = PackageOf(table);
  for (int i = 1; i < imp.level && !base.empty(); ++i) {
    size_t dot = base.rfind('.');
    base = dot == std::string::npos ? "" : base.substr(0, dot);
  }
  if (!imp.module.empty()) base += (base.empty() ? "" : ".") + imp.module;
  return base;
}

std::vector<std::string> PositionalBases(const std::string& signature) {
  std::vector<std::string> out;
  if (signature.size() < 2 || signature.front() != '(') return out;
  int depth = 0;
  std::string cur;
  auto flush = [&] {
    std::string name;
    for (char c : cur) {
      if (!std::isspace(static_cast<unsigned char>(c))) name += c;
    }
    if (!name.empty() && name.find_first_of("=[(*") == std::string::npos) out.push_back(name);
    cur.clear();
  };
  for (char c : std::string_view(signature).substr(1, signature.size() - 2)) {
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
  return out;
}

}  // namespace fbkit::parser

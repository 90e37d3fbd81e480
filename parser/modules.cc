#include "parser/modules.h"

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

}  // namespace fbkit::parser

// Names shared by the graph builder and the extractor: the package a module's relative
// imports start from, the absolute module an import statement names, and a class's bases.
#pragma once

#include <string>
#include <vector>

#include "parser/entity.h"

namespace fbkit::parser {

// "pkg.sub" for pkg/sub/mod.py and for pkg/sub/__init__.py; "" for a top-level module.
std::string PackageOf(const FileTable& table);

// The absolute dotted module of `from ...x import y` / `import x` in `table`.
std::string AbsoluteModule(const FileTable& table, const Import& imp);

// The plain positional bases of a class signature as written, dotted names whole and without
// spaces: "(Base, mod.Other, Generic[T], *extra, metaclass=Meta)" gives Base and mod.Other (a
// subscript, a call, a starred or a keyword argument is no plain base).
std::vector<std::string> PositionalBases(const std::string& signature);

}  // namespace fbkit::parser

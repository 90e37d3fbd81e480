// Module-name arithmetic shared by the graph builder and the extractor: the package a
// module's relative imports start from, and the absolute module an import statement names.
#pragma once

#include <string>

#include "parser/entity.h"

namespace fbkit::parser {

// "pkg.sub" for pkg/sub/mod.py and for pkg/sub/__init__.py; "" for a top-level module.
std::string PackageOf(const FileTable& table);

// The absolute dotted module of `from ...x import y` / `import x` in `table`.
std::string AbsoluteModule(const FileTable& table, const Import& imp);

}  // namespace fbkit::parser

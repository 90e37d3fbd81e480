#include "groundtruth/paths.h"

#include <cctype>
#include <string>

namespace fbkit::groundtruth {

bool IsTestPath(std::string_view path) {
  size_t slash = path.find_last_of('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  std::string_view dir = slash == std::string_view::npos ? "" : path.substr(0, slash + 1);
  for (std::string_view d : {"tests/", "test/", "testing/"}) {
    if (dir.starts_with(d) ||
        dir.find(std::string("/") + std::string(d)) != std::string_view::npos) {
      return true;
    }
  }
  bool py = name.ends_with(".py");
  return py && (name.starts_with("test_") || name.ends_with("_test.py") || name == "conftest.py");
}

bool IsDocPath(std::string_view path) {
  if (path.starts_with("doc/") || path.starts_with("docs/")) return true;
  for (std::string_view ext : {".rst", ".md", ".txt", ".adoc"}) {
    if (path.ends_with(ext)) return true;
  }
  size_t slash = path.find_last_of('/');
  std::string name(slash == std::string_view::npos ? path : path.substr(slash + 1));
  for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::string_view n : {"CHANGES", "CHANGELOG", "NEWS", "AUTHORS", "HISTORY"}) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace fbkit::groundtruth

// Files embedded into a library at build time (cmake/embed_files.cmake): non-C++ sources
// (the tracing agent, the L2 probe, the report's script and style) kept as files in the
// repository and shipped inside the binaries, so users install nothing.
#pragma once

#include <string_view>
#include <vector>

namespace fbkit::util {

struct EmbeddedFile {
  std::string_view name;  // the file's name, without its directory
  std::string_view content;
};

// The content of `name` in `files`; "" when absent (a build error in practice: the list is
// made from the source tree).
inline std::string_view FindEmbedded(const std::vector<EmbeddedFile>& files, std::string_view name) {
  for (const auto& f : files) {
    if (f.name == name) return f.content;
  }
  return "";
}

}  // namespace fbkit::util

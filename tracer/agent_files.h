// The tracing agent's Python (and C accelerator) sources, embedded at build time from
// tracer/agent/ so that users install nothing; the runner writes them to a private dir.
#pragma once

#include <string_view>
#include <vector>

namespace fbkit::tracer {

struct EmbeddedFile {
  std::string_view name;
  std::string_view content;
};

const std::vector<EmbeddedFile>& AgentFiles();

}  // namespace fbkit::tracer

// The tracing agent's Python (and C accelerator) sources, embedded at build time from
// tracer/agent/ so that users install nothing; the runner writes them to a private dir.
#pragma once

#include <vector>

#include "util/embedded.h"

namespace fbkit::tracer {

const std::vector<util::EmbeddedFile>& AgentFiles();

}  // namespace fbkit::tracer

// extract/'s non-C++ sources, embedded at build time from extract/embedded/: the L2 import
// probe (l2_probe.py), a pytest plugin `eval` runs against an agent's agent_code.
#pragma once

#include <vector>

#include "util/embedded.h"

namespace fbkit::extract {

const std::vector<util::EmbeddedFile>& ExtractFiles();

}  // namespace fbkit::extract

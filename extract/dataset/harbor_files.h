// The files of a Harbor task's verifier, embedded at build time from extract/dataset/harbor/:
// grade.py (puts test code back, scores the outcomes) and fbkit_outcomes.py (the pytest
// plugin that records them).
#pragma once

#include <vector>

#include "util/embedded.h"

namespace fbkit::extract::dataset {

const std::vector<util::EmbeddedFile>& HarborFiles();

}  // namespace fbkit::extract::dataset

// groundtruth/'s non-C++ sources, embedded at build time from groundtruth/embedded/: the
// HTML score report's script (report.js) and style (report.css).
#pragma once

#include <vector>

#include "util/embedded.h"

namespace fbkit::groundtruth {

const std::vector<util::EmbeddedFile>& ReportFiles();

}  // namespace fbkit::groundtruth

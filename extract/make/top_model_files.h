// The learned top-object model, embedded at build time: top_model.json (fbkit.top-model/1,
// written by bench/top_objects_learn.py; read by extract/make/top_model.h).
#pragma once

#include <vector>

#include "util/embedded.h"

namespace fbkit::extract::make {

const std::vector<util::EmbeddedFile>& TopModelFiles();

}  // namespace fbkit::extract::make

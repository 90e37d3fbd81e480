// The prompts of fb-extract's model steps for the built-in providers, embedded at build time
// from extract/make/prompts/*.md: one per request task (classify_top_objects, docstring,
// task_statement; llm.h asks them).
#pragma once

#include <vector>

#include "util/embedded.h"

namespace fbkit::extract::make {

const std::vector<util::EmbeddedFile>& StepPrompts();

}  // namespace fbkit::extract::make

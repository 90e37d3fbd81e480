// The built-in providers' own prompt, embedded at build time from model/prompts/: common.md,
// said before the prompt of each request's task (the steps' prompts live beside the steps:
// extract/make/prompts/, groundtruth/prompts/; llm_provider.h's StepPrompts).
#pragma once

#include <vector>

#include "util/embedded.h"

namespace fbkit::model {

const std::vector<util::EmbeddedFile>& PromptFiles();

}  // namespace fbkit::model

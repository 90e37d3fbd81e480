// The prompts of fb-race's model steps for the built-in providers, from
// groundtruth/prompts/*.md (embedded at build time): one per request task, "TASK.md", with
// match.md serving both match_tasks and match_steps (matcher.h).
#pragma once

#include <vector>

#include "util/embedded.h"

namespace fbkit::groundtruth {

// The files as embedded.
const std::vector<util::EmbeddedFile>& PromptFiles();

// One per request task.
const std::vector<util::EmbeddedFile>& StepPrompts();

}  // namespace fbkit::groundtruth

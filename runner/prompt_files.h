// The built-in providers' prompts, embedded at build time from runner/prompts/*.md: one per
// request task (match.md for both matching tasks) and common.md, said before each.
#pragma once

#include <vector>

#include "util/embedded.h"

namespace fbkit::runner {

const std::vector<util::EmbeddedFile>& PromptFiles();

}  // namespace fbkit::runner

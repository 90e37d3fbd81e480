// What an applied patch changed in a git work tree, and putting paths back (the test files
// `eval` restores after an agent's patch). Applying patches is runner::Git::Apply's job.
#pragma once

#include <string>
#include <vector>

#include "runner/git.h"
#include "sandbox/process.h"
#include "util/env.h"

namespace fbkit::extract::eval {

// Paths (relative, sorted) the work tree differs in from HEAD: modified, added, deleted
// and untracked files.
util::Expected<std::vector<std::string>> ChangedPaths(runner::Git& git, const std::string& tree);

// Puts `paths` back as they are at HEAD (deleting those HEAD does not have), all through
// `git` (confined for an agent's tree).
util::Status RestorePaths(runner::Git& git, const std::string& tree,
                          const std::vector<std::string>& paths);

}  // namespace fbkit::extract::eval

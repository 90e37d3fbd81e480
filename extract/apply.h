// Applying a patch someone else wrote (an agent's) to a git work tree, the way SWE-bench's
// harness learned to: plain `git apply`, then a 3-way merge, then GNU patch with fuzz,
// resetting the tree between attempts. CRLF line ends and a missing final newline are
// normalised first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracer/git.h"
#include "tracer/process.h"
#include "util/env.h"

namespace fbkit::extract {

// The patch text with CRLF line ends turned into LF and a final newline.
std::string NormalizePatch(std::string_view patch);

struct ApplyResult {
  bool applied = false;
  std::string method;  // "git apply", "git apply --3way", "patch --fuzz", or "" when none
  std::string error;   // the last attempt's complaint when nothing applied
};

// Why a patch's binary parts are not applied, or "": its `literal N` hunks inflate to more
// than `max_bytes` together, or it holds a `delta` hunk (a delta can copy its base many
// times over, so its size bounds nothing). git applies patches outside any sandbox: a
// 2 MB patch must not write a 300 MB file.
std::string BinaryPatchProblem(std::string_view patch, uint64_t max_bytes);
inline constexpr uint64_t kMaxBinaryPatchBytes = 64ull << 20;

// Applies `patch` to the git work tree `tree` (clean at HEAD), unless BinaryPatchProblem. On failure the tree is back
// at HEAD. `scratch` holds the patch file and logs.
ApplyResult ApplyPatch(util::Env& env, tracer::Launcher& launcher, const std::string& tree,
                       std::string_view patch, const std::string& scratch);

// Paths (relative, sorted) the work tree differs in from HEAD: modified, added, deleted
// and untracked files.
util::Expected<std::vector<std::string>> ChangedPaths(tracer::Git& git, const std::string& tree);

// Puts `paths` back as they are at HEAD (deleting those HEAD does not have).
util::Status RestorePaths(util::Env& env, tracer::Git& git, const std::string& tree,
                          const std::vector<std::string>& paths);

}  // namespace fbkit::extract

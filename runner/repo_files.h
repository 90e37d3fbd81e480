// The files of a repository that fbkit copies (task trees, the trace's private copy): git's
// view when ROOT is a checkout (tracked, and untracked but not ignored), else every file
// outside version-control and cache directories; sorted, root-relative. A checkout git
// fails to list is an error.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runner/git.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::runner {

// Files under `skip_dir` (absolute; e.g. an output directory inside ROOT) and in
// __pycache__ directories are left out, and so are paths that are not there to read, paths
// that are not plainly inside ROOT (`..`, `.`, empty parts: a crafted git index lists them),
// paths through a linked directory, and regular files with other hard links (they may be
// any file of the host's).
// `tracked_only`: in a checkout, the files git tracks alone (what a task publishes: no build
// tree, backup or stray .pyc of the original code beside them).
util::Expected<std::vector<std::string>> ListRepoFiles(util::Env& env, Git& git,
                                                       const std::string& root,
                                                       const std::string& skip_dir,
                                                       bool tracked_only = false);

// Whether `path` is relative with no empty, `.` or `..` part: it names a place inside
// whatever it is joined to.
bool InsideRelative(std::string_view path);

// Whether `path` is a regular file with no other hard link (not a link: never followed), the
// only kind fbkit reads into what it publishes.
bool PlainFile(util::Env& env, const std::string& path);

// Copies `files` (root-relative, InsideRelative) from `root` into `dest`, keeping the
// executable bit; symlinks are copied as links.
util::Status CopyRepoFiles(util::Env& env, const std::string& root,
                           const std::vector<std::string>& files, const std::string& dest);

}  // namespace fbkit::runner

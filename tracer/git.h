// The few git operations ground-truth construction needs, with a fixed identity and no
// user hooks: read a file at a commit, make a private checkout of a commit, apply or
// revert a patch in a work tree. Processes go through Launcher (fakeable); the
// user's repository is only ever read.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tracer/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::tracer {

class Git {
 public:
  // `scratch` is a directory for command logs and patch files (created on demand).
  Git(util::Env& env, Launcher& launcher, std::string scratch)
      : env_(env), launcher_(launcher), scratch_(std::move(scratch)) {}

  // Runs `git ARGS` in `cwd`; its output on success, else an error naming the command and
  // the end of its output.
  util::Expected<std::string> Run(const std::string& cwd, const std::vector<std::string>& args);

  // The bytes of `path` at `commit`, nullopt when the commit has no such file; an error
  // when `repo` is no repository or `commit` does not exist.
  util::Expected<std::optional<std::string>> Show(const std::string& repo,
                                                  const std::string& commit,
                                                  const std::string& path);

  // A fresh checkout of `commit` of `repo` in `dir` (removed first), sharing its objects.
  util::Status Checkout(const std::string& repo, const std::string& commit, const std::string& dir);

  // Applies (or, with reverse, reverts) `patch` to the work tree `dir`.
  util::Status Apply(const std::string& dir, const std::string& patch, bool reverse = false);

 private:
  // Exit code (-1: could not start) and output of `git ARGS`.
  std::pair<int, std::string> Exec(const std::string& cwd, const std::vector<std::string>& args);

  util::Env& env_;
  Launcher& launcher_;
  std::string scratch_;
  // Process-wide, so that Git objects sharing a scratch directory (threads of one run)
  // never write the same log file.
  static std::atomic<int> counter_;
};

// "owner/repo" of a remote URL (https://host/owner/repo.git, git@host:owner/repo), "" when
// `url` is a local path (or file:// URL) or has no owner part.
std::string OwnerRepo(std::string url);

// "owner/repo" for ids and statements: from the origin remote's URL; when origin is a local
// clone (a mirror), from that clone's own origin, and so on (at most 5 hops); else
// "local/<ROOT's directory name>". A local path itself never becomes the name.
std::string RepoName(Git& git, const std::string& root);

}  // namespace fbkit::tracer

// A runner::Git for unit tests that works on a FakeEnv's files, in memory: a repository is a
// directory with a `.git/HEAD` file and its one commit a copy of its files in its .git. It knows the
// commands fbkit's pipelines run over task trees and work copies (init, add, commit, tag,
// check-ref-format, diff, checkout -- ., read-tree, clone, apply, show, ls-tree, cat-file,
// log); any other command is an error that names it. Its diffs replace a file's lines whole
// (a valid patch for git too); it applies unified diffs strictly, at their line numbers.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runner/git.h"
#include "util/env.h"

namespace fbkit::testing {

class FakeGit : public runner::Git {
 public:
  // When every commit was made (what `log` says, as %cI or as "%Y-%m-%d %H:%M:%S").
  static constexpr char kCommitDate[] = "2026-12-03T10:00:00+00:00";

  explicit FakeGit(util::Env& env) : Git(env) {}

  void Confine(sandbox::Sandbox sandbox) override { sandbox_ = std::move(sandbox); }
  bool confined() const override { return sandbox_.kind != sandbox::SandboxKind::kNone; }
  util::Expected<std::string> Run(const std::string& cwd, const std::vector<std::string>& args,
                                  const std::string& input = "") override;
  using Git::Apply;
  runner::ApplyResult Apply(const std::string& dir, std::string_view patch,
                            const runner::ApplyOptions& options) override;

  // Every command run, as "git ARG ..." (in order; all FakeGits of one maker share it).
  std::vector<std::string>& commands() { return *commands_; }

  // A maker for runner::Services whose Gits share this one's command list.
  runner::GitMaker Maker();

 private:
  using Tree = std::map<std::string, std::string>;  // path -> bytes

  FakeGit(util::Env& env, std::shared_ptr<std::vector<std::string>> commands)
      : Git(env), commands_(std::move(commands)) {}

  // The repository `dir` is in (the nearest directory with a .git/HEAD), or an error. What a
  // repository holds is in its .git, so that it moves and goes with its directory: HEAD's
  // files under .git/head/, the paths `add -N` named in .git/intent.
  util::Expected<std::string> Top(const std::string& dir) const;
  Tree Files(const std::string& dir, bool skip_git) const;
  Tree Head(const std::string& top) const { return Files(util::JoinPath(top, ".git/head"), false); }
  util::Status SetHead(const std::string& top, const Tree& tree);
  std::set<std::string> Intent(const std::string& top) const;
  util::Status SetIntent(const std::string& top, const std::set<std::string>& paths);
  util::Status Init(const std::string& dir);
  util::Status WriteTree(const std::string& top, const Tree& tree);
  std::string Diff(const std::string& top);
  util::Status ApplyText(const std::string& top, std::string_view patch, bool reverse);

  sandbox::Sandbox sandbox_;
  std::shared_ptr<std::vector<std::string>> commands_ = std::make_shared<std::vector<std::string>>();
};

}  // namespace fbkit::testing

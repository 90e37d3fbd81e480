// The few git operations fbkit needs, with a fixed identity and no user hooks: read a file
// at a commit, make a private checkout of a commit, apply or revert a patch in a work tree
// (fbkit's own exactly, an agent's as leniently as SWE-bench's harness). Processes go through Launcher (fakeable); the
// user's repository is only ever read.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <cstdint>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::runner {

// How hard Git::Apply tries.
enum class Leniency {
  kExact,    // `git apply` as the patch is: fbkit's own patches (gold, test, ablated), which
             // must apply
  kLenient,  // an agent's patch, the way SWE-bench's harness learned to apply them: CRLF line
             // ends and a missing final newline normalised, binary parts bounded
             // (BinaryPatchProblem), then `git apply`, `git apply --3way` and GNU `patch
             // --fuzz=3`, the tree reset to HEAD between attempts and after the last
};

struct ApplyOptions {
  Leniency leniency = Leniency::kExact;
  bool reverse = false;  // revert the patch instead (kExact only)
};

struct ApplyResult {
  bool applied = false;
  std::string method;  // "git apply", "git apply --3way", "patch --fuzz", or "" when none
  std::string error;   // the last attempt's complaint when nothing applied
  // The patch names a path outside the work copy or inside a git directory (refused before
  // any attempt; a grader flags it).
  bool unsafe_path = false;
};

// The patch text with CRLF line ends turned into LF and a final newline.
std::string NormalizePatch(std::string_view patch);

// Why a patch may not be applied to a work copy, or "": a file it names (in `---`/`+++`,
// `diff --git`, rename, copy or `Index:` headers, C-quoted names unquoted) is absolute, climbs
// out with `..`, or has a `.git` component (git's own configuration, hooks and index, whose
// contents would make a later git command run a program). Hunk bodies are skipped by count.
std::string PatchPathProblem(std::string_view patch);

// Why a path a dataset or task names inside a work copy is unsafe, or "": empty, absolute,
// climbing out with `..`, or inside a `.git` directory.
std::string TreePathProblem(const std::string& path);

// Why a patch's binary parts are not applied, or "": its `literal N` hunks inflate to more
// than `max_bytes` together, or it holds a `delta` hunk (a delta can copy its base many
// times over, so its size bounds nothing). git applies patches outside any sandbox: a
// 2 MB patch must not write a 300 MB file.
std::string BinaryPatchProblem(std::string_view patch, uint64_t max_bytes);
inline constexpr uint64_t kMaxBinaryPatchBytes = 64ull << 20;

// The first of a git configuration's settings (as `git config --list --name-only` names
// them: "section.name" or "section.subsection.name") that is not on fbkit's list of inert
// ones, "" when all are. An allow-list: anything git may grow that runs a program, fetches
// (a promisor remote's lazy fetch through an `ext::` URL), or reads more configuration is
// refused without being named here.
std::string UninertSetting(const std::vector<std::string>& keys);

// The git operations the pipelines run over work copies and task trees: GitProgram runs the
// git program; tests give a fake (tests/testing/fake_git.h) that works in a FakeEnv.
class Git {
 public:
  explicit Git(util::Env& env) : env_(env) {}
  virtual ~Git() = default;
  Git(const Git&) = delete;
  Git& operator=(const Git&) = delete;

  // How long a confined command may run: a tree the tested code wrote may hold what makes
  // git wait for ever (a FIFO where git reads a file); then it is killed and fails.
  static constexpr double kConfinedSeconds = 300;

  // From now on every command runs inside `sandbox` (GitProgram: when its kind is kBwrap,
  // with fbkit's configuration alone).
  virtual void Confine(sandbox::Sandbox sandbox) = 0;
  virtual bool confined() const = 0;

  // Runs `git ARGS` in `cwd` (its stdin the file `input` when given); its output on success,
  // else an error naming the command and the end of its output.
  virtual util::Expected<std::string> Run(const std::string& cwd, const std::vector<std::string>& args,
                                          const std::string& input = "") = 0;

  // Applies `patch` to the work tree `dir` as `options` say (an empty patch applies). A
  // lenient application needs `dir` clean at HEAD and leaves it there when nothing applied.
  virtual ApplyResult Apply(const std::string& dir, std::string_view patch, const ApplyOptions& options) = 0;

  // Applies (or, with reverse, reverts) `patch` exactly; the error is git's own output.
  util::Status Apply(const std::string& dir, const std::string& patch, bool reverse = false);

  // The bytes of `path` at `commit`, nullopt when the commit has no such file; an error
  // when `repo` is no repository or `commit` does not exist.
  util::Expected<std::optional<std::string>> Show(const std::string& repo,
                                                  const std::string& commit,
                                                  const std::string& path);

  // A fresh checkout of `commit` of `repo` in `dir` (removed first), sharing its objects.
  util::Status Checkout(const std::string& repo, const std::string& commit, const std::string& dir);

  // A repository in the existing directory `dir` holding one empty commit (`message`): an
  // empty project, or a place whose code asks git about itself.
  util::Status InitEmpty(const std::string& dir, const std::string& message);

 protected:
  util::Env& env_;
};

// Makes the Git of a scratch directory (GitProgram's logs and patch files go there).
using GitMaker = std::function<std::unique_ptr<Git>(const std::string& scratch)>;

// The git program, with a fixed identity and no user hooks (see the file's comment).
class GitProgram final : public Git {
 public:
  // `scratch` is a directory for command logs and patch files (created on demand).
  GitProgram(util::Env& env, sandbox::Launcher& launcher, std::string scratch)
      : Git(env), launcher_(launcher), scratch_(std::move(scratch)) {}

  // From now on every command (git, and GNU patch for a lenient application) runs inside
  // `sandbox` when its kind is kBwrap: what git may change are its writable paths, the
  // scratch dir is read-only, and the configuration git reads is fbkit's alone: none of the
  // system, the user or the work copy (the .git/config of the command's directory, or of its
  // --git-dir, is replaced by a fixed one, read-only). For work copies that repository or
  // agent code has written: no host process ever interprets them (docs/repo-spec.md).
  void Confine(sandbox::Sandbox sandbox) override { sandbox_ = std::move(sandbox); }
  bool confined() const override { return sandbox_.kind != sandbox::SandboxKind::kNone; }

  util::Expected<std::string> Run(const std::string& cwd, const std::vector<std::string>& args,
                                  const std::string& input = "") override;
  using Git::Apply;
  ApplyResult Apply(const std::string& dir, std::string_view patch, const ApplyOptions& options) override;

 private:
  // Exit code (-1: could not start) and output of `git ARGS`.
  std::pair<int, std::string> Exec(const std::string& cwd, const std::vector<std::string>& args,
                                   const std::string& input = "");
  // Unconfined, git runs on the host over the user's repository and reads its own
  // .git/config: an error when that configuration holds a setting not known to be inert
  // (UninertSetting), checked once per file version.
  util::Status VetRepositoryConfig(const std::string& cwd, const std::vector<std::string>& args);
  // `argv` (a git command that reads a repository but runs nothing: rev-parse, config
  // --file) on the host with no system or user configuration; its output when it succeeds.
  util::Expected<std::string> PlainGit(const std::string& cwd,
                                       const std::vector<std::string>& argv);
  // The settings of a configuration file, as git itself parses it (no includes followed).
  util::Expected<std::vector<std::string>> ConfigKeys(const std::string& config);
  // `patch` written to a fresh file of the scratch directory; its path.
  util::Expected<std::string> PatchFile(std::string_view patch);
  ApplyResult ApplyLeniently(const std::string& dir, std::string_view patch);
  util::Status Reset(const std::string& tree);
  // GNU patch with fuzz; rejects discarded (a partial application counts as a failure).
  util::Status FuzzyPatch(const std::string& tree, const std::string& file);

  // The sandbox of a confined command run in `cwd` with `args` (the fixed configuration
  // written on first use); kNone when not confined.
  util::Expected<sandbox::Sandbox> CommandSandbox(const std::string& cwd,
                                         const std::vector<std::string>& args);
  // The global configuration file of confined git (safe.directory=*), in the scratch dir.
  std::string FixedGlobalConfig() const { return util::JoinPath(scratch_, "fixed-global.gitconfig"); }

  std::map<std::string, std::string> vetted_;  // config file -> the version vetted
  // cwd and --git-dir -> the git and common directories git uses there (none outside one)
  std::map<std::string, std::vector<std::string>> git_dirs_;
  sandbox::Launcher& launcher_;
  std::string scratch_;
  sandbox::Sandbox sandbox_;
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

}  // namespace fbkit::runner

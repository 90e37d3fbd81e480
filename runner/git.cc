#include "runner/git.h"

#include <unistd.h>

#include <mutex>

#include "util/strings.h"

namespace fbkit::runner {

std::atomic<int> Git::counter_{0};

namespace {

// The safe.directory entries of the user's own global git configuration: host-side git
// reads no global or system configuration (a filter or diff driver defined there would run
// on content sandboxed code wrote, and options like diff.noprefix would change patches),
// but the repositories the user declared safe stay safe. Read once per process.
const std::vector<std::string>& UserSafeDirectories(Launcher& launcher, util::Env& env,
                                                    const std::string& scratch) {
  static std::once_flag once;
  static std::vector<std::string> dirs;
  std::call_once(once, [&] {
    ProcessSpec spec;
    spec.argv = {"git", "config", "--global", "--get-all", "safe.directory"};
    spec.cwd = "/";
    if (!env.MakeDirs(scratch).ok()) return;
    spec.log_path = util::JoinPath(scratch, "git-safe-" + std::to_string(::getpid()) + ".log");
    auto exit = RunToCompletion(launcher, spec);
    auto out = env.ReadFile(spec.log_path);
    (void)env.RemoveAll(spec.log_path);  // a leftover log costs nothing; the entries matter
    if (!exit.ok() || exit->code != 0 || !out.ok()) return;
    for (const auto& line : util::Split(*out, '\n')) {
      if (!line.empty()) dirs.push_back(line);
    }
  });
  return dirs;
}

}  // namespace

std::pair<int, std::string> Git::Exec(const std::string& cwd,
                                      const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv = {"git",
               "-c",
               "core.hooksPath=/dev/null",
               "-c",
               "commit.gpgsign=false",
               "-c",
               "core.autocrlf=false",
               "-c",
               "core.safecrlf=false",
               "-c",
               "core.quotepath=false",
               "-c",
               "advice.detachedHead=false",
               "-c",
               "init.defaultBranch=main",
               // Work trees fbkit reads back may hold what sandboxed code wrote: nothing in
               // them (nested repositories included) may make git run a program.
               "-c",
               "core.fsmonitor=false",
               "-c",
               "diff.ignoreSubmodules=all",
               "-c",
               "submodule.recurse=false",
               "-c",
               "core.attributesFile=/dev/null"};
  for (const auto& dir : UserSafeDirectories(launcher_, env_, scratch_)) {
    spec.argv.insert(spec.argv.end(), {"-c", "safe.directory=" + dir});
  }
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd;
  spec.env = {{"GIT_AUTHOR_NAME", "fbkit"},
              {"GIT_AUTHOR_EMAIL", "fbkit@localhost"},
              {"GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z"},
              {"GIT_COMMITTER_NAME", "fbkit"},
              {"GIT_COMMITTER_EMAIL", "fbkit@localhost"},
              {"GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z"},
              {"GIT_CONFIG_NOSYSTEM", "1"},
              {"GIT_CONFIG_GLOBAL", "/dev/null"},
              {"GIT_ATTR_NOSYSTEM", "1"},
              {"GIT_TERMINAL_PROMPT", "0"},
              {"LC_ALL", "C"}};
  if (auto s = env_.MakeDirs(scratch_); !s.ok()) return {-1, s.error()};
  spec.log_path = util::JoinPath(
      scratch_, "git-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++) + ".log");
  auto exit = RunToCompletion(launcher_, spec);
  if (!exit.ok()) return {-1, "git: " + exit.error()};
  auto out = env_.ReadFile(spec.log_path);
  (void)env_.RemoveAll(spec.log_path);
  return {exit->code, out.ok() ? *out : ""};
}

util::Expected<std::string> Git::Run(const std::string& cwd, const std::vector<std::string>& args) {
  auto [code, text] = Exec(cwd, args);
  if (code == 0) return text;
  std::string cmd = "git";
  for (const auto& a : args) cmd += " " + a;
  if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return util::Error{cmd + " failed in " + cwd + ": " + text};
}

util::Expected<std::optional<std::string>> Git::Show(const std::string& repo,
                                                     const std::string& commit,
                                                     const std::string& path) {
  auto tree = Run(repo, {"ls-tree", "--name-only", commit, "--", path});
  if (!tree.ok()) return util::Error{tree.error()};
  if (tree->empty()) return std::optional<std::string>();
  auto blob = Run(repo, {"cat-file", "blob", commit + ":" + path});
  if (!blob.ok()) return util::Error{blob.error()};
  return std::optional<std::string>(std::move(*blob));
}

util::Status Git::Checkout(const std::string& repo, const std::string& commit,
                           const std::string& dir) {
  (void)env_.RemoveAll(dir);
  if (auto s = env_.MakeDirs(util::DirName(dir)); !s.ok()) return s;
  auto clone = Run(util::DirName(dir), {"clone", "-q", "--shared", "--no-checkout", repo, dir});
  if (!clone.ok()) return util::Error{clone.error()};
  auto co = Run(dir, {"checkout", "-q", "--detach", commit});
  if (!co.ok()) return util::Error{co.error()};
  return {};
}

std::string NormalizePatch(std::string_view patch) {
  std::string out;
  out.reserve(patch.size() + 1);
  for (size_t i = 0; i < patch.size(); ++i) {
    if (patch[i] == '\r' && i + 1 < patch.size() && patch[i + 1] == '\n') continue;
    out.push_back(patch[i]);
  }
  if (!out.empty() && out.back() != '\n') out.push_back('\n');
  return out;
}

std::string BinaryPatchProblem(std::string_view patch, uint64_t max_bytes) {
  uint64_t total = 0;
  for (size_t b = 0; b < patch.size();) {
    size_t e = patch.find('\n', b);
    if (e == std::string_view::npos) e = patch.size();
    std::string_view line = patch.substr(b, e - b);
    b = e + 1;
    if (line.starts_with("delta ")) {
      return "the patch holds a binary delta, whose output size the patch does not bound "
             "(binary deltas are not applied)";
    }
    if (!line.starts_with("literal ")) continue;
    uint64_t n = 0;
    for (char c : line.substr(8)) {
      if (c < '0' || c > '9' || n > (UINT64_MAX - 9) / 10) break;
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    total += n;
    if (total > max_bytes) {
      return "the patch's binary files inflate to more than " + std::to_string(max_bytes >> 20) +
             " MiB (not applied)";
    }
  }
  return "";
}

util::Expected<std::string> Git::PatchFile(std::string_view patch) {
  if (auto s = env_.MakeDirs(scratch_); !s.ok()) return util::Error{s.error()};
  std::string file = util::JoinPath(
      scratch_, "patch-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++) + ".diff");
  if (auto s = env_.WriteFileAtomic(file, patch); !s.ok()) return util::Error{s.error()};
  return file;
}

util::Status Git::Apply(const std::string& dir, const std::string& patch, bool reverse) {
  ApplyResult r = Apply(dir, patch, ApplyOptions{Leniency::kExact, reverse});
  if (r.applied) return util::Status::Ok();
  return util::Error{r.error};
}

ApplyResult Git::Apply(const std::string& dir, std::string_view patch, const ApplyOptions& options) {
  if (options.leniency == Leniency::kLenient) return ApplyLeniently(dir, patch);
  ApplyResult result;
  if (patch.empty()) {
    result.applied = true;
    return result;
  }
  auto file = PatchFile(patch);
  if (!file.ok()) return result.error = file.error(), result;
  std::vector<std::string> args = {"apply", "--whitespace=nowarn"};
  if (options.reverse) args.push_back("-R");
  args.push_back(*file);
  auto [code, text] = Exec(dir, args);
  (void)env_.RemoveAll(*file);
  if (code == 0) {
    result.applied = true;
    result.method = "git apply";
    return result;
  }
  // The output names files of the patch, not scratch paths: keep it whole but short.
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > 1000) text = text.substr(0, 1000) + "...";
  result.error = text;
  return result;
}

util::Status Git::Reset(const std::string& tree) {
  if (auto r = Run(tree, {"reset", "-q", "--hard", "HEAD"}); !r.ok()) return util::Error{r.error()};
  if (auto r = Run(tree, {"clean", "-q", "-f", "-d"}); !r.ok()) return util::Error{r.error()};
  return util::Status::Ok();
}

util::Status Git::FuzzyPatch(const std::string& tree, const std::string& file) {
  ProcessSpec spec;
  spec.argv = {"patch", "--batch", "--forward", "-p1", "--fuzz=3", "--no-backup-if-mismatch",
               "--reject-file=-", "-i", file};
  spec.cwd = tree;
  spec.env = {{"LC_ALL", "C"}};
  spec.log_path = util::JoinPath(scratch_, "patch-fuzz.log");
  auto exit = RunToCompletion(launcher_, spec);
  if (!exit.ok()) return util::Error{"patch: " + exit.error()};
  if (exit->code == 0) return util::Status::Ok();
  auto log = env_.ReadFile(spec.log_path);
  return util::Error{"patch --fuzz=3: " + util::Tail(log.ok() ? *log : "", 1500)};
}

ApplyResult Git::ApplyLeniently(const std::string& tree, std::string_view patch) {
  ApplyResult result;
  if (std::string why = BinaryPatchProblem(patch, kMaxBinaryPatchBytes); !why.empty()) {
    result.error = why;
    return result;
  }
  if (auto s = env_.MakeDirs(scratch_); !s.ok()) return result.error = s.error(), result;
  std::string file = util::JoinPath(scratch_, "agent.patch");
  if (auto s = env_.WriteFileAtomic(file, NormalizePatch(patch)); !s.ok()) {
    result.error = s.error();
    return result;
  }
  struct Attempt {
    std::string method;
    std::vector<std::string> args;
  };
  const std::vector<Attempt> attempts = {
      {"git apply", {"apply", "--whitespace=nowarn", file}},
      {"git apply --3way", {"apply", "--3way", "--whitespace=nowarn", file}},
  };
  for (const auto& a : attempts) {
    auto r = Run(tree, a.args);
    if (r.ok()) {
      result.applied = true;
      result.method = a.method;
      return result;
    }
    result.error = r.error();
    if (auto s = Reset(tree); !s.ok()) {
      result.error = s.error();
      return result;
    }
  }
  if (FuzzyPatch(tree, file).ok()) {
    result.applied = true;
    result.method = "patch --fuzz";
    return result;
  }
  (void)Reset(tree);
  return result;
}

std::string OwnerRepo(std::string u) {
  u = u.substr(0, u.find_last_not_of(" \n\r") + 1);
  bool remote = u.find("://") != std::string::npos ? !u.starts_with("file://")
                                                   : u.find(':') != std::string::npos &&
                                                         !u.starts_with("/") && !u.starts_with(".");
  if (!remote) return "";
  if (u.ends_with(".git")) u.resize(u.size() - 4);
  while (u.ends_with("/")) u.pop_back();
  size_t slash = u.find_last_of('/');
  if (slash == std::string::npos) return "";
  size_t prev = u.find_last_of("/:", slash - 1);
  if (prev == std::string::npos) return "";
  return u.substr(prev + 1);
}

std::string RepoName(Git& git, const std::string& root) {
  std::string at = root;
  for (int hop = 0; hop < 5; ++hop) {
    auto url = git.Run(at, {"config", "--get", "remote.origin.url"});
    if (!url.ok() || url->empty()) break;
    std::string u = url->substr(0, url->find_last_not_of(" \n\r") + 1);
    if (std::string name = OwnerRepo(u); !name.empty()) return name;
    if (u.starts_with("file://")) u = u.substr(7);
    if (!u.starts_with("/")) u = util::JoinPath(at, u);
    at = u;
  }
  std::string base = root.substr(root.find_last_of('/') + 1);
  return "local/" + base;
}

}  // namespace fbkit::runner

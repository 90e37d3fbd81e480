#include "runner/git.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/testing/fake_launcher.h"
#include "tests/testing/run.h"

namespace fbkit::runner {
namespace {

namespace fs = std::filesystem;
using testing::FakeLauncher;
using testing::ReadFileOrDie;
using testing::RunCommand;
using testing::RunResult;
using testing::ScratchDir;
using testing::WriteFileOrDie;

// Sets HOME (and XDG_CONFIG_HOME) for the scope of a test.
class HomeFor {
 public:
  explicit HomeFor(const std::string& home) {
    if (const char* h = ::getenv("HOME")) old_ = h;
    ::setenv("HOME", home.c_str(), 1);
    ::setenv("XDG_CONFIG_HOME", (home + "/.config").c_str(), 1);
  }
  ~HomeFor() {
    ::setenv("HOME", old_.c_str(), 1);
    ::unsetenv("XDG_CONFIG_HOME");
  }

 private:
  std::string old_;
};

// A user's global git configuration that would run a program on every file (a filter and a
// diff driver, named by the tree's own .gitattributes, as sandboxed code could write it) and
// would change patches (no a/ b/ prefixes): fbkit's host-side git reads none of it.
TEST(GitTest, HostGitReadsNoGlobalConfigurationAndRunsNoDriverTheTreeNames) {
  ScratchDir tmp;
  std::string home = tmp / "home", tree = tmp / "tree", marker = tmp / "driver-ran";
  fs::create_directories(home + "/.config/git");
  fs::create_directories(tree);
  std::string driver = tmp / "driver.sh";
  WriteFileOrDie(driver, "#!/bin/sh\ntouch " + marker + "\nif [ $# -gt 0 ]; then cat \"$1\"; else cat; fi\n");
  fs::permissions(driver, fs::perms::owner_all);
  WriteFileOrDie(home + "/.gitconfig", "[diff]\n\tnoprefix = true\n[filter \"x\"]\n\tclean = " +
                                           driver + "\n\tsmudge = " + driver + "\n[diff \"x\"]\n\ttextconv = " +
                                           driver + "\n");
  WriteFileOrDie(home + "/.config/git/attributes", "*.py filter=x diff=x\n");
  WriteFileOrDie(tree + "/.gitattributes", "*.txt filter=x diff=x\n");
  WriteFileOrDie(tree + "/f.txt", "one\n");
  WriteFileOrDie(tree + "/g.py", "one\n");
  HomeFor scope(home);
  GitProgram git(util::RealEnv(), sandbox::RealLauncher(), tmp / "scratch");
  ASSERT_TRUE(git.Run(tree, {"init", "-q"}).ok());
  ASSERT_TRUE(git.Run(tree, {"add", "-A"}).ok());
  ASSERT_TRUE(git.Run(tree, {"commit", "-q", "-m", "one"}).ok());
  WriteFileOrDie(tree + "/f.txt", "two\n");
  WriteFileOrDie(tree + "/g.py", "two\n");
  auto diff = git.Run(tree, {"diff"});
  ASSERT_TRUE(diff.ok()) << diff.error();
  EXPECT_NE(diff->find("--- a/f.txt\n+++ b/f.txt"), std::string::npos) << *diff;
  EXPECT_NE(diff->find("+two"), std::string::npos) << *diff;
  EXPECT_FALSE(fs::exists(marker)) << "a driver of the user's configuration ran";

  // The same configuration does run its driver for a plain git: the test can fail.
  RunResult plain = RunCommand({"/usr/bin/env", "HOME=" + home, "git", "-C", tree, "diff"});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(fs::exists(marker));
  EXPECT_NE(plain.out.find("--- f.txt"), std::string::npos) << plain.out;
}

// Ids and task directories are named from it: a URL whose last parts climb names nothing.
TEST(GitTest, OwnerRepoIsTwoPlainPartsOfARemoteUrl) {
  EXPECT_EQ(OwnerRepo("https://github.com/pallets/click.git\n"), "pallets/click");
  EXPECT_EQ(OwnerRepo("git@github.com:sympy/sympy"), "sympy/sympy");
  EXPECT_EQ(OwnerRepo("/work/mirror/x"), "");
  EXPECT_EQ(OwnerRepo("https://evil/../.."), "");
  EXPECT_EQ(OwnerRepo("https://evil/a/.hidden"), "");
}

// An allow-list: what a fresh clone writes is inert; anything else (programs, includes, a
// promisor remote's lazy fetch, settings git may grow) is not.
TEST(GitTest, OnlySettingsKnownToBeInertPass) {
  EXPECT_EQ(UninertSetting({"core.repositoryformatversion", "core.filemode", "core.bare",
                            "core.logallrefupdates", "remote.origin.url", "remote.origin.fetch",
                            "branch.main.remote", "branch.main.merge", "extensions.worktreeconfig",
                            "core.sparsecheckout", "color.ui", "lfs.Some.Url.access"}),
            "");
  for (std::string key : {"gpg.program", "log.showsignature", "filter.lfs.clean", "include.path",
                          "includeif.gitdir:/x/.path", "core.sshcommand", "core.fsmonitor",
                          "core.excludesfile", "extensions.partialclone", "remote.origin.promisor",
                          "remote.origin.uploadpack", "protocol.ext.allow", "url.ext::x.insteadof",
                          "diff.external", "diff.py.textconv", "credential.helper", "nosection",
                          "a-new-section.setting"}) {
    EXPECT_EQ(UninertSetting({"core.bare", key}), key);
  }
}


// Host-side git over the user's repository refuses to run when the repository's own
// configuration names a program (red team: `log.showSignature` and `gpg.program`, a script
// of the repository's, made `git log` run it as fbkit's user); it runs once it is removed.
TEST(GitTest, HostGitRefusesARepositoryWhoseConfigurationNamesAProgram) {
  ScratchDir tmp;
  std::string tree = tmp / "tree";
  fs::create_directories(tree);
  GitProgram git(util::RealEnv(), sandbox::RealLauncher(), tmp / "scratch");
  ASSERT_TRUE(git.Run(tree, {"init", "-q"}).ok());
  ASSERT_TRUE(git.Run(tree, {"status", "--porcelain"}).ok());
  std::string config = ReadFileOrDie(tree + "/.git/config");
  WriteFileOrDie(tree + "/.git/config", config + "[gpg]\n\tprogram = ./evil.sh\n");
  auto refused = git.Run(tree, {"status", "--porcelain"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("sets gpg.program"), std::string::npos) << refused.error();
  // Read as git reads it: a setting on its section's line, and a promisor remote (red team
  // round 3: its `ext::` URL ran a command when git lazily fetched a missing object).
  WriteFileOrDie(tree + "/.git/config", config + "[extensions] partialClone = origin\n");
  refused = git.Run(tree, {"status", "--porcelain"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("sets extensions.partialclone"), std::string::npos)
      << refused.error();
  WriteFileOrDie(tree + "/.git/config", config + "[core\n");
  refused = git.Run(tree, {"status", "--porcelain"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("cannot be read as git configuration"), std::string::npos)
      << refused.error();
  fs::create_directories(tree + "/sub");
  EXPECT_FALSE(git.Run(tree + "/sub", {"status", "--porcelain"}).ok()) << "found from below";
  WriteFileOrDie(tree + "/.git/config", config);
  EXPECT_TRUE(git.Run(tree, {"status", "--porcelain"}).ok());
  // A configuration file that is a link to a device is refused unread (red team round 5,
  // H6: /dev/zero read until the host's memory ran out).
  fs::create_symlink("/dev/zero", tree + "/.git/config.worktree");
  refused = git.Run(tree, {"status", "--porcelain"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("config.worktree: cannot open"), std::string::npos)
      << refused.error();
  fs::remove(tree + "/.git/config.worktree");
  // The configuration vetted is the one git reads (red team round 4: `gitdir:  g`, with two
  // spaces, is " g" to git; fbkit's own reading took "g").
  std::string odd = tmp / "odd";
  fs::create_directories(odd);
  ASSERT_EQ(std::system(("git -C " + odd + " init -q").c_str()), 0);
  fs::rename(odd + "/.git", odd + "/ g");
  WriteFileOrDie(odd + "/.git", "gitdir:  g\n");
  WriteFileOrDie(odd + "/ g/config", ReadFileOrDie(odd + "/ g/config") + "[gpg]\n\tprogram = ./x\n");
  GitProgram fresh(util::RealEnv(), sandbox::RealLauncher(), tmp / "scratch2");
  refused = fresh.Run(odd, {"status", "--porcelain"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find(" g/config sets gpg.program"), std::string::npos) << refused.error();
}

// Git's error messages and its hermetic configuration, seen through a fake launcher.
TEST(GitTest, AFailedCommandIsAnErrorNamingItAndTheEndOfItsOutput) {
  ScratchDir tmp;
  FakeLauncher fake([](const sandbox::ProcessSpec& spec) -> std::optional<FakeLauncher::Outcome> {
    if (std::find(spec.argv.begin(), spec.argv.end(), "status") != spec.argv.end()) {
      return FakeLauncher::Exit(128, std::string(3000, 'x') + "\nfatal: detected dubious ownership\n");
    }
    return FakeLauncher::Exit(1);  // the user's safe.directory entries: none
  });
  GitProgram git(util::RealEnv(), fake, tmp / "scratch");
  auto r = git.Run("/w", {"status", "--short"});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().starts_with("git status --short failed in /w: ...x")) << r.error().substr(0, 80);
  EXPECT_TRUE(r.error().ends_with("\nfatal: detected dubious ownership")) << "the end of the output, trimmed";
  const sandbox::ProcessSpec spec = fake.answered().back();
  auto env_has = [&](const std::string& k, const std::string& v) {
    return std::find(spec.vars.begin(), spec.vars.end(), std::pair<std::string, std::string>{k, v}) != spec.vars.end();
  };
  EXPECT_TRUE(env_has("GIT_CONFIG_GLOBAL", "/dev/null"));
  EXPECT_TRUE(env_has("GIT_CONFIG_NOSYSTEM", "1"));
  EXPECT_NE(std::find(spec.argv.begin(), spec.argv.end(), "core.hooksPath=/dev/null"), spec.argv.end());
  EXPECT_NE(std::find(spec.argv.begin(), spec.argv.end(), "core.fsmonitor=false"), spec.argv.end());
  EXPECT_EQ(spec.sandbox.kind, sandbox::SandboxKind::kNone) << "fbkit's own git runs on the host";
}

// One applier, two leniencies: fbkit's own patches exactly, an agent's as SWE-bench's harness.
TEST(GitTest, ExactAndLenientApplication) {
  ScratchDir tmp;
  std::string repo = tmp / "repo";
  fs::create_directories(repo);
  std::string lines;
  for (int i = 1; i <= 12; ++i) lines += "line " + std::to_string(i) + "\n";
  WriteFileOrDie(repo + "/a.txt", lines);
  GitProgram git(util::RealEnv(), sandbox::RealLauncher(), tmp / "scratch");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "start"}}) {
    ASSERT_TRUE(git.Run(repo, args).ok());
  }
  const std::string patch =
      "--- a/a.txt\n+++ b/a.txt\n@@ -5,3 +5,3 @@\n line 5\n-line 6\n+line six\n line 7\n";
  // CRLF line ends, as some agents write them: git refuses, the lenient applier normalises.
  std::string crlf;
  for (char c : patch) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  ApplyResult exact = git.Apply(repo, crlf, ApplyOptions{});
  EXPECT_FALSE(exact.applied);
  EXPECT_NE(exact.error.find("patch"), std::string::npos) << exact.error;
  EXPECT_EQ(ReadFileOrDie(repo + "/a.txt"), lines) << "nothing half-applied";
  ApplyResult lenient = git.Apply(repo, crlf, ApplyOptions{Leniency::kLenient});
  EXPECT_TRUE(lenient.applied) << lenient.error;
  EXPECT_EQ(lenient.method, "git apply");
  EXPECT_NE(ReadFileOrDie(repo + "/a.txt").find("line six\n"), std::string::npos);
  EXPECT_TRUE(git.Apply(repo, patch, true).ok()) << "reverted exactly";
  EXPECT_EQ(ReadFileOrDie(repo + "/a.txt"), lines);
  // Context off by a line: only GNU patch's fuzz takes it.
  const std::string fuzzy =
      "--- a/a.txt\n+++ b/a.txt\n@@ -5,3 +5,3 @@\n line 4\n-line 6\n+line six\n line 7\n";
  EXPECT_FALSE(git.Apply(repo, fuzzy).ok());
  ApplyResult fuzzed = git.Apply(repo, fuzzy, ApplyOptions{Leniency::kLenient});
  EXPECT_TRUE(fuzzed.applied) << fuzzed.error;
  EXPECT_EQ(fuzzed.method, "patch --fuzz");
  // What applies nowhere leaves the tree at HEAD; an empty patch applies.
  ASSERT_TRUE(git.Run(repo, {"checkout", "-q", "--", "."}).ok());
  ApplyResult none = git.Apply(repo, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-nope\n+x\n",
                               ApplyOptions{Leniency::kLenient});
  EXPECT_FALSE(none.applied);
  EXPECT_EQ(ReadFileOrDie(repo + "/a.txt"), lines);
  EXPECT_TRUE(git.Apply(repo, "", ApplyOptions{}).applied);
}

}  // namespace
}  // namespace fbkit::runner

namespace fbkit::runner {
namespace {

// A patch may not name a path outside its work copy or inside a git directory, however the
// name is spelled; hunk bodies that look like headers are not names.
TEST(GitTest, PatchPathsOutsideTheTreeOrInGitDirectoriesAreRefused) {
  auto file = [](const std::string& name) {
    return "diff --git a/" + name + " b/" + name + "\n--- a/" + name + "\n+++ b/" + name +
           "\n@@ -1 +1 @@\n-a\n+b\n";
  };
  EXPECT_EQ(PatchPathProblem(file("src/x.py")), "");
  EXPECT_EQ(PatchPathProblem(file("a.git/x.py") + file("git/.gitignore")), "");
  EXPECT_NE(PatchPathProblem(file(".git/config")).find("inside a git directory"), std::string::npos);
  EXPECT_NE(PatchPathProblem(file("sub/.GIT/hooks/pre-commit")), "");
  EXPECT_NE(PatchPathProblem(file(".git./config")), "");  // trailing dots, as on Windows
  EXPECT_NE(PatchPathProblem("--- a/x\n+++ \"b/\\056git/config\"\n@@ -1 +1 @@\n-a\n+b\n"), "");
  EXPECT_NE(PatchPathProblem(file("../outside.py")).find("climbs out"), std::string::npos);
  EXPECT_NE(PatchPathProblem("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n")
                .find("absolute"), std::string::npos);
  EXPECT_NE(PatchPathProblem("diff --git a/x b/y\nrename from x\nrename to .git/config\n"), "");
  EXPECT_NE(PatchPathProblem("Index: .git/config\n--- x\n+++ x\n"), "");
  EXPECT_EQ(PatchPathProblem("--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n"), "");
  // Symbolic links: into the tree is fine, out of it or into .git is not.
  auto link = [](const std::string& name, const std::string& target) {
    return "diff --git a/" + name + " b/" + name + "\nnew file mode 120000\nindex 0000000..1111111\n"
           "--- /dev/null\n+++ b/" + name + "\n@@ -0,0 +1 @@\n+" + target +
           "\n\\ No newline at end of file\n";
  };
  EXPECT_EQ(PatchPathProblem(link("docs/img", "../assets/img")), "");
  EXPECT_NE(PatchPathProblem(link("lnk", ".git")).find("git directory"), std::string::npos);
  EXPECT_NE(PatchPathProblem(link("a/lnk", "../..")).find("climbs out"), std::string::npos);
  EXPECT_NE(PatchPathProblem(link("lnk", "/tmp")).find("absolute"), std::string::npos);
  // A second diff of the same link retargets it with only the index line's mode.
  std::string retarget = "diff --git a/lnk b/lnk\nindex 1111111..2222222 120000\n--- a/lnk\n+++ b/lnk\n"
                         "@@ -1 +1 @@\n-ok\n\\ No newline at end of file\n+/etc/shadow\n"
                         "\\ No newline at end of file\n";
  EXPECT_NE(PatchPathProblem(link("lnk", "ok") + retarget).find("absolute"), std::string::npos);
  // A chain of links, each inside on its own, that leads out together.
  EXPECT_NE(PatchPathProblem(link("u1", "d") + link("d/u2", "..") + link("u3", "u1/u2/..")),
            "");
  EXPECT_NE(PatchPathProblem(link("d/x", ".") + link("y", "d/x/x/x/../..")).find("climbs out"),
            std::string::npos);
  EXPECT_EQ(PatchPathProblem(link("d/x", "..") + link("y", "d/x/d")), "");
  // The same chains with the link they go through made later in the patch.
  EXPECT_NE(PatchPathProblem(link("y", "d/x/d/x/../../..") + link("d/x", "..")).find("climbs out"),
            std::string::npos);
  EXPECT_NE(PatchPathProblem(link("leak.py", "d.py/d.py/d.py/../../../../etc/passwd") +
                             link("d.py", ".")).find("climbs out"),
            std::string::npos);
  // Paths a dataset names inside a work copy.
  EXPECT_EQ(TreePathProblem("tests/test_x.py"), "");
  for (const char* bad : {"", "/etc/passwd", "../x", "a/../../x", ".git/config", "a/.GIT/x"}) {
    EXPECT_NE(TreePathProblem(bad), "") << bad;
  }
  // A removed line "-- .git/x" and an added line "++ ../y" inside a hunk are content.
  EXPECT_EQ(PatchPathProblem("--- a/doc.md\n+++ b/doc.md\n@@ -1,2 +1,2 @@\n--- .git/x\n+++ ../y\n"
                             " same\n"), "");
}

// A work copy whose own .git/config defines a filter (as a patch applied by GNU patch could
// write it) and whose .gitattributes names it: host-side git runs the filter on every file;
// confined git, which sees fbkit's fixed configuration, does not, and refuses a patch that
// writes into .git.
// A repository whose files inflate past the sandbox's disk limit (a task's presolved/ of
// highly compressible files: red team round 9): the clone fails (killed if it still runs)
// and the error says why.
TEST(GitTest, ACloneThatPassesTheDiskLimitFailsAndSaysSo) {
  if (!sandbox::CheckBwrap().ok()) GTEST_SKIP() << sandbox::CheckBwrap().error();
  ScratchDir tmp;
  std::string repo = tmp / "repo";
  fs::create_directories(repo);
  // 40 MiB of one letter (not zeros: git writes zero runs as holes, which take no disk).
  ASSERT_EQ(std::system(("head -c 41943040 /dev/zero | tr '\\0' y > " + repo + "/big.txt").c_str()), 0);
  GitProgram host(util::RealEnv(), sandbox::RealLauncher(), tmp / "scratch-host");
  ASSERT_TRUE(host.Run(repo, {"init", "-q"}).ok());
  ASSERT_TRUE(host.Run(repo, {"add", "-A"}).ok());
  ASSERT_TRUE(host.Run(repo, {"commit", "-q", "-m", "big"}).ok());
  fs::create_directories(tmp / "work");
  GitProgram confined(util::RealEnv(), sandbox::RealLauncher(), tmp / "scratch");
  sandbox::Sandbox sandbox;
  sandbox.kind = sandbox::SandboxKind::kBwrap;
  sandbox.writable = {tmp / "work"};
  sandbox.read_only = {repo};
  sandbox.limits.disk_mb = 4;
  confined.Confine(sandbox);
  auto cloned = confined.Run(tmp / "work", {"clone", "-q", "--no-hardlinks", repo, tmp / "work/copy"});
  ASSERT_FALSE(cloned.ok());
  EXPECT_NE(cloned.error().find("more than the 4 MiB the sandbox's disk limit allows"), std::string::npos)
      << cloned.error();
}

TEST(GitTest, ConfinedGitReadsNoConfigurationOfTheWorkCopy) {
  if (!sandbox::CheckBwrap().ok()) GTEST_SKIP() << sandbox::CheckBwrap().error();
  ScratchDir tmp;
  std::string tree = tmp / "work/tree", marker = tmp / "work/filter-ran";
  fs::create_directories(tree);
  WriteFileOrDie(tree + "/f.txt", "one\n");
  GitProgram host(util::RealEnv(), sandbox::RealLauncher(), tmp / "scratch-host");
  ASSERT_TRUE(host.Run(tree, {"init", "-q"}).ok());
  ASSERT_TRUE(host.Run(tree, {"add", "-A"}).ok());
  ASSERT_TRUE(host.Run(tree, {"commit", "-q", "-m", "one"}).ok());
  std::string config = ReadFileOrDie(tree + "/.git/config");
  WriteFileOrDie(tree + "/.git/config",
                 config + "[filter \"x\"]\n\tclean = touch " + marker + " && cat\n");
  WriteFileOrDie(tree + "/.gitattributes", "* filter=x\n");
  WriteFileOrDie(tree + "/f.txt", "two\n");

  GitProgram confined(util::RealEnv(), sandbox::RealLauncher(), tmp / "scratch");
  sandbox::Sandbox sandbox;
  sandbox.kind = sandbox::SandboxKind::kBwrap;
  sandbox.writable = {tmp / "work"};
  confined.Confine(sandbox);
  ASSERT_TRUE(confined.confined());
  auto status = confined.Run(tree, {"status", "--porcelain"});
  ASSERT_TRUE(status.ok()) << status.error();
  ASSERT_TRUE(confined.Run(tree, {"add", "-A"}).ok());
  auto diff = confined.Run(tree, {"diff", "--cached"});
  ASSERT_TRUE(diff.ok()) << diff.error();
  EXPECT_NE(diff->find("+two"), std::string::npos) << *diff;
  EXPECT_FALSE(fs::exists(marker)) << "the work copy's own filter ran";
  EXPECT_EQ(ReadFileOrDie(tree + "/.git/config").find("[filter \"x\"]") != std::string::npos, true);

  ApplyResult refused = confined.Apply(tree, "--- a/.git/config\n+++ b/.git/config\n@@ -1 +1,2 @@\n"
                                             " [core]\n+\tfsmonitor = touch /tmp/x\n",
                                       {Leniency::kLenient});
  EXPECT_FALSE(refused.applied);
  EXPECT_TRUE(refused.unsafe_path);

  // fbkit's host-side git refuses the tree (its configuration names a program); plain git
  // does run the filter: the test can fail.
  auto refused_host = host.Run(tree, {"add", "-A"});
  ASSERT_FALSE(refused_host.ok());
  EXPECT_NE(refused_host.error().find("sets filter.x.clean"), std::string::npos)
      << refused_host.error();
  EXPECT_FALSE(fs::exists(marker));
  ASSERT_EQ(std::system(("cd " + tree + " && git reset -q && git add -A").c_str()), 0);
  EXPECT_TRUE(fs::exists(marker));
}

}  // namespace
}  // namespace fbkit::runner

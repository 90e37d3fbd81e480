#include "tracer/git.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "tests/testing/fake_launcher.h"
#include "tests/testing/run.h"

namespace fbkit::tracer {
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
  Git git(util::RealEnv(), RealLauncher(), tmp / "scratch");
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

// Git's error messages and its hermetic configuration, seen through a fake launcher.
TEST(GitTest, AFailedCommandIsAnErrorNamingItAndTheEndOfItsOutput) {
  ScratchDir tmp;
  FakeLauncher fake([](const ProcessSpec& spec) -> std::optional<FakeLauncher::Outcome> {
    if (std::find(spec.argv.begin(), spec.argv.end(), "status") != spec.argv.end()) {
      return FakeLauncher::Exit(128, std::string(3000, 'x') + "\nfatal: detected dubious ownership\n");
    }
    return FakeLauncher::Exit(1);  // the user's safe.directory entries: none
  });
  Git git(util::RealEnv(), fake, tmp / "scratch");
  auto r = git.Run("/w", {"status", "--short"});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().starts_with("git status --short failed in /w: ...x")) << r.error().substr(0, 80);
  EXPECT_TRUE(r.error().ends_with("\nfatal: detected dubious ownership")) << "the end of the output, trimmed";
  const ProcessSpec spec = fake.answered().back();
  auto env_has = [&](const std::string& k, const std::string& v) {
    return std::find(spec.env.begin(), spec.env.end(), std::pair<std::string, std::string>{k, v}) != spec.env.end();
  };
  EXPECT_TRUE(env_has("GIT_CONFIG_GLOBAL", "/dev/null"));
  EXPECT_TRUE(env_has("GIT_CONFIG_NOSYSTEM", "1"));
  EXPECT_NE(std::find(spec.argv.begin(), spec.argv.end(), "core.hooksPath=/dev/null"), spec.argv.end());
  EXPECT_NE(std::find(spec.argv.begin(), spec.argv.end(), "core.fsmonitor=false"), spec.argv.end());
  EXPECT_EQ(spec.sandbox.kind, SandboxKind::kNone) << "fbkit's own git runs on the host";
}

}  // namespace
}  // namespace fbkit::tracer

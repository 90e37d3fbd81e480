#include "tracer/git.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "tests/testing/run.h"

namespace fbkit::tracer {
namespace {

namespace fs = std::filesystem;
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

}  // namespace
}  // namespace fbkit::tracer

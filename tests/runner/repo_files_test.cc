// The files of a repository fbkit copies (runner/repo_files.h): only paths plainly inside the
// repository, and never a regular file with other hard links (it may be any host file).
#include "runner/repo_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "runner/git.h"
#include "runner/process.h"
#include "tests/testing/run.h"

namespace fbkit::runner {
namespace {

using testing::ScratchDir;
using testing::WriteFileOrDie;

TEST(RepoFilesTest, OnlyPlainRelativePathsAreInside) {
  EXPECT_TRUE(InsideRelative("pkg/data.txt"));
  EXPECT_TRUE(InsideRelative("a..b/c.d"));
  for (const char* bad : {"", "/etc/shadow", "pkg/../../x", "..", "./pkg", "pkg//x", "pkg/",
                          "pkg/."}) {
    EXPECT_FALSE(InsideRelative(bad)) << bad;
  }
}

TEST(RepoFilesTest, AHardLinkedFileIsNeverListed) {
  ScratchDir tmp;
  std::string root = tmp / "repo";
  std::filesystem::create_directories(root + "/pkg");
  WriteFileOrDie(root + "/pkg/mod.py", "x = 1\n");
  WriteFileOrDie(tmp / "host-secret", "SECRET\n");
  std::filesystem::create_hard_link(tmp / "host-secret", root + "/pkg/notes.txt");
  Git git(util::RealEnv(), RealLauncher(), tmp / "git");
  auto files = ListRepoFiles(util::RealEnv(), git, root, "");
  ASSERT_TRUE(files.ok()) << files.error();
  EXPECT_EQ(*files, std::vector<std::string>{"pkg/mod.py"});
  EXPECT_FALSE(CopyRepoFiles(root, {"pkg/../../host-secret"}, tmp / "copy").ok());
  EXPECT_FALSE(std::filesystem::exists(tmp / "copy"));
}

}  // namespace
}  // namespace fbkit::runner

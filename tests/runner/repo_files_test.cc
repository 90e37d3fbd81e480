// The files of a repository fbkit copies (runner/repo_files.h): only paths plainly inside the
// repository, and never a regular file with other hard links (it may be any host file).
#include "runner/repo_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "runner/git.h"
#include "sandbox/process.h"
#include "tests/testing/fake_env.h"
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
  GitProgram git(util::RealEnv(), sandbox::RealLauncher(), tmp / "git");
  auto files = ListRepoFiles(util::RealEnv(), git, root, "");
  ASSERT_TRUE(files.ok()) << files.error();
  EXPECT_EQ(*files, std::vector<std::string>{"pkg/mod.py"});
  EXPECT_FALSE(CopyRepoFiles(util::RealEnv(), root, {"pkg/../../host-secret"}, tmp / "copy").ok());
  EXPECT_FALSE(std::filesystem::exists(tmp / "copy"));
}

// A file listed below a linked directory (the link put where git lists a directory) would be
// read from wherever the link points: never listed; the link itself still is.
TEST(RepoFilesTest, NothingIsListedThroughALinkedDirectory) {
  ScratchDir tmp;
  std::string root = tmp / "repo";
  std::filesystem::create_directories(root + "/pkg");
  std::filesystem::create_directories(tmp / "host");
  WriteFileOrDie(root + "/pkg/mod.py", "x = 1\n");
  WriteFileOrDie(tmp / "host/secret.txt", "SECRET\n");
  std::filesystem::create_directory_symlink(tmp / "host", root + "/pkg/lnk");
  GitProgram git(util::RealEnv(), sandbox::RealLauncher(), tmp / "git");
  // No git here: the walk lists pkg/lnk (a link) but nothing below it.
  auto files = ListRepoFiles(util::RealEnv(), git, root, "");
  ASSERT_TRUE(files.ok()) << files.error();
  EXPECT_EQ(*files, (std::vector<std::string>{"pkg/lnk", "pkg/mod.py"}));
  // A git index naming pkg/lnk/secret.txt (added before the directory became a link).
  ASSERT_EQ(testing::RunCommand({"/usr/bin/git", "-C", root, "init", "-q"}).exit_code, 0);
  std::filesystem::remove(root + "/pkg/lnk");
  std::filesystem::create_directories(root + "/pkg/lnk");
  WriteFileOrDie(root + "/pkg/lnk/secret.txt", "DECOY\n");
  ASSERT_EQ(testing::RunCommand({"/usr/bin/git", "-C", root, "add", "-A"}).exit_code, 0);
  std::filesystem::remove_all(root + "/pkg/lnk");
  std::filesystem::create_directory_symlink(tmp / "host", root + "/pkg/lnk");
  auto listed = ListRepoFiles(util::RealEnv(), git, root, "");
  ASSERT_TRUE(listed.ok()) << listed.error();
  for (const auto& f : *listed) EXPECT_FALSE(f.starts_with("pkg/lnk/")) << f;
}

// The copy keeps modes and links and goes wholly through the Env it is given (no disk).
TEST(RepoFilesTest, ACopyKeepsModesAndLinksThroughTheEnv) {
  testing::FakeEnv env;
  env.AddFile("/repo/pkg/mod.py", "x = 1\n");
  env.AddFile("/repo/bin/run.sh", "#!/bin/sh\n");
  env.SetMode("/repo/bin/run.sh", 0755);
  env.AddSymlink("/repo/pkg/alias.py", "mod.py");
  ASSERT_TRUE(CopyRepoFiles(env, "/repo", {"bin/run.sh", "pkg/alias.py", "pkg/mod.py"}, "/copy").ok());
  EXPECT_EQ(env.Contents("/copy/pkg/mod.py"), "x = 1\n");
  EXPECT_EQ(env.Stat("/copy/bin/run.sh", false)->mode, 0755u);
  EXPECT_EQ(env.Stat("/copy/pkg/mod.py", false)->mode, 0644u);
  EXPECT_EQ(*env.ReadLink("/copy/pkg/alias.py"), "mod.py");
  auto missing = CopyRepoFiles(env, "/repo", {"pkg/gone.py"}, "/copy");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("/repo/pkg/gone.py"), std::string::npos) << missing.error();
  EXPECT_FALSE(CopyRepoFiles(env, "/repo", {"../etc/passwd"}, "/copy").ok());
}

}  // namespace
}  // namespace fbkit::runner

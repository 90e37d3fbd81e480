// Splitting unified diffs per file.
#include "util/patch.h"

#include <gtest/gtest.h>

namespace fbkit::util {
namespace {

const char* kGitDiff =
    "diff --git a/src/a.py b/src/a.py\n"
    "index 1..2 100644\n"
    "--- a/src/a.py\n"
    "+++ b/src/a.py\n"
    "@@ -1 +1 @@\n"
    "-x = 1\n"
    "+x = 2\n"
    "diff --git a/new.py b/new.py\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/new.py\n"
    "@@ -0,0 +1 @@\n"
    "+y = 1\n"
    "diff --git a/old.py b/old.py\n"
    "deleted file mode 100644\n"
    "--- a/old.py\n"
    "+++ /dev/null\n"
    "@@ -1 +0,0 @@\n"
    "-z = 1\n"
    "diff --git a/p.py b/q.py\n"
    "similarity index 100%\n"
    "rename from p.py\n"
    "rename to q.py\n"
    "diff --git a/empty.txt b/empty.txt\n"
    "new file mode 100644\n"
    "index 0000000..e69de29\n";

TEST(PatchTest, SplitsGitDiff) {
  auto files = ParsePatch(kGitDiff);
  ASSERT_TRUE(files.ok()) << files.error();
  ASSERT_EQ(files->size(), 5u);
  EXPECT_EQ((*files)[0].path(), "src/a.py");
  EXPECT_FALSE((*files)[0].is_new());
  EXPECT_TRUE((*files)[1].is_new());
  EXPECT_EQ((*files)[1].path(), "new.py");
  EXPECT_TRUE((*files)[2].is_deleted());
  EXPECT_EQ((*files)[2].path(), "old.py");
  EXPECT_EQ((*files)[3].old_path, "p.py");
  EXPECT_EQ((*files)[3].new_path, "q.py");
  EXPECT_TRUE((*files)[4].is_new());
  EXPECT_EQ((*files)[4].path(), "empty.txt");
  EXPECT_EQ(JoinPatch(*files), kGitDiff);
  EXPECT_EQ((*files)[0].text.substr(0, 30), "diff --git a/src/a.py b/src/a.");
}

TEST(PatchTest, PlainUnifiedDiffAndErrors) {
  auto files = ParsePatch("--- a/x.py\t2020\n+++ b/x.py\t2020\n@@ -1 +1 @@\n-a\n+b\n");
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0].path(), "x.py");
  auto empty = ParsePatch("\n");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_FALSE(ParsePatch("hello world\n").ok());
}

}  // namespace
}  // namespace fbkit::util

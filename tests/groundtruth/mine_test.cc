// Mining's rules: a commit's intent and the issues it names.
#include "groundtruth/mine.h"

#include <gtest/gtest.h>

namespace fbkit::groundtruth {
namespace {

TEST(MineRules, IntentByRule) {
  std::string why;
  EXPECT_EQ(IntentByRule("feat(core): stream rows", {}, &why), "new feature");
  EXPECT_EQ(why, "conventional prefix \"feat:\"");
  EXPECT_EQ(IntentByRule("Fix crash when adding rows", {}, &why), "bug fix") << "fix before add";
  EXPECT_EQ(IntentByRule("Add support for tabs", {}, &why), "new feature");
  EXPECT_EQ(IntentByRule("Refactor the parser", {"p.py::New"}, &why), "refactor");
  EXPECT_EQ(IntentByRule("Streaming rows", {"p.py::stream"}, &why), "new feature");
  EXPECT_EQ(why, "adds public p.py::stream");
  EXPECT_EQ(IntentByRule("Streaming rows", {}, &why), "other");
}

TEST(MineRules, IssueNumbers) {
  EXPECT_EQ(IssueNumbers("Fixes #12, closes #7 (#30)\nsee https://github.com/o/r/issues/9", 30),
            (std::vector<int>{7, 9, 12}));
  EXPECT_TRUE(IssueNumbers("color: &#35; a#1", 0).empty()) << "no reference inside words";
}

}  // namespace
}  // namespace fbkit::groundtruth

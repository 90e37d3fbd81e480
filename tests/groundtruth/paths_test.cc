// The path rules RACE uses for tests and documentation.
#include "groundtruth/paths.h"

#include <gtest/gtest.h>

namespace fbkit::groundtruth {
namespace {

TEST(PathsTest, TestFilesAndDocs) {
  EXPECT_TRUE(IsTestPath("tests/test_a.py"));
  EXPECT_TRUE(IsTestPath("src/pkg/tests/helpers.py"));
  EXPECT_TRUE(IsTestPath("test_x.py"));
  EXPECT_TRUE(IsTestPath("pkg/x_test.py"));
  EXPECT_TRUE(IsTestPath("conftest.py"));
  EXPECT_FALSE(IsTestPath("src/pkg/testing_utils.py"));
  EXPECT_FALSE(IsTestPath("src/contest.py"));
  EXPECT_TRUE(IsDocPath("docs/api.py"));
  EXPECT_TRUE(IsDocPath("CHANGES.rst"));
  EXPECT_TRUE(IsDocPath("CHANGES"));
  EXPECT_FALSE(IsDocPath("src/a.py"));
}

}  // namespace
}  // namespace fbkit::groundtruth

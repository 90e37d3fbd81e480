// What a test run reports (runner/test_run.h): the combined outcome of a test's phases, the
// id -> outcome map every caller reads, and one test's outcome inside a run.
#include "runner/test_run.h"

#include <gtest/gtest.h>

#include "tests/testing/fake_test_runner.h"

namespace fbkit::runner {
namespace {

TEST(TestRunTest, CombineOutcomeFollowsPytestsSummary) {
  EXPECT_EQ(CombineOutcome({{"setup", ""}, {"call", "passed"}, {"teardown", ""}}), Outcome::kPassed);
  EXPECT_EQ(CombineOutcome({{"setup", ""}, {"call", "failed"}, {"teardown", "error"}}),
            Outcome::kError);
  EXPECT_EQ(CombineOutcome({{"setup", "skipped"}, {"teardown", ""}}), Outcome::kSkipped);
  EXPECT_EQ(CombineOutcome({{"setup", ""}, {"call", "xpassed"}}), Outcome::kXpassed);
  EXPECT_EQ(CombineOutcome({{"setup", ""}}), Outcome::kError);  // never got to run its call
}

TEST(TestRunTest, OutcomesOfNamesEveryTestReported) {
  TestRun run = testing::RunWith({{"a.py::x", "passed"}, {"a.py::y", "xfailed"}});
  run.files["b.py"].status = FileStatus::kCollectError;
  run.files["c.py"].status = FileStatus::kTimeout;
  run.files["c.py"].tests["c.py::z"].outcome = Outcome::kFailed;
  EXPECT_EQ(OutcomesOf(run), (std::map<std::string, Outcome>{{"a.py::x", Outcome::kPassed},
                                                             {"a.py::y", Outcome::kXfailed},
                                                             {"c.py::z", Outcome::kFailed}}));
}

TEST(TestRunTest, ReportedOutcomeIsMissingForATestTheRunDidNotReport) {
  std::map<std::string, Outcome> outcomes = {{"a.py::x", Outcome::kXfailed}};
  EXPECT_EQ(ReportedOutcome(outcomes, "a.py::x"), Outcome::kXfailed);
  EXPECT_EQ(ReportedOutcome(outcomes, "a.py::y"), std::nullopt);
}

TEST(TestRunTest, OutcomeOfFallsBackToTheFileThenMissing) {
  TestRun run = testing::RunWith({{"a.py::x", "skipped"}});
  run.files["b.py"].status = FileStatus::kCrashed;
  EXPECT_EQ(OutcomeOf(run, "a.py::x"), "skipped");
  EXPECT_EQ(OutcomeOf(run, "a.py::gone"), "missing");
  EXPECT_EQ(OutcomeOf(run, "b.py::t[1]"), "crashed");
  EXPECT_EQ(OutcomeOf(run, "c.py::t"), "missing");
}

}  // namespace
}  // namespace fbkit::runner

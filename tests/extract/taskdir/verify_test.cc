// Post-verification's decisions (extract/taskdir/verify.h) on a task directory built here,
// with real git and a FakeTestRunner standing in for pytest: which runs are made, on what code, and
// which check fails with which reason.
#include "extract/taskdir/verify.h"

#include "extract/taskdir/task_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "runner/environment.h"
#include "runner/git.h"
#include "sandbox/process.h"
#include "tests/testing/fake_test_runner.h"
#include "tests/testing/run.h"
#include "tests/testing/tiny_task.h"

namespace fbkit::extract::taskdir {
namespace {

using testing::FakeTestRunner;
using testing::ReadFileOrDie;
using testing::RunWith;
using testing::ScratchDir;
using testing::WriteFileOrDie;

constexpr const char* kF2p = testing::kTinyF2p;
constexpr const char* kP2p = testing::kTinyP2p;

// TASK/presolved (a git repository without g), patch.diff (adds g), test_patch.diff (adds
// the F2P file) and instance.json.
class VerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    task_ = tmp_.path() + "/task.lv1";
    ASSERT_TRUE(testing::WriteTinyTask(task_, tmp_.path() + "/git"));
    options_.work_dir = tmp_.path() + "/work";
  }

  // Answers as a repository whose F2P test passes once g exists (and `f2p_without_g` says
  // whether it passes before), whose P2P test has the outcome `p2p`.
  void Answer(const std::string& p2p, bool f2p_without_g = false, bool gold_fixes = true) {
    tests_.respond = [=](const runner::TestRunRequest& r) -> util::Expected<runner::TestRun> {
      bool has_g = ReadFileOrDie(r.root + "/pkg/core.py").find("def g") != std::string::npos;
      bool f2p = (has_g && gold_fixes) || f2p_without_g;
      auto run = RunWith({{kF2p, f2p ? "passed" : "failed"}, {kP2p, p2p}});
      if (!f2p) {
        run.files["tests/test_feature.py"].tests[kF2p].message =
            "def test_g():\nE   AttributeError: no g\n";
      }
      return run;
    };
  }

  VerifyReport Verify() {
    return VerifyTask({util::RealEnv(), sandbox::RealLauncher(), tests_}, task_, options_);
  }

  ScratchDir tmp_;
  std::string task_;
  VerifyOptions options_;
  FakeTestRunner tests_;
};

TEST_F(VerifyTest, AGoodTaskRunsTwiceOnTheWorkCopyWithTheTestPatch) {
  Answer("passed");
  VerifyReport r = Verify();
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.pytest_runs, 2);
  EXPECT_EQ(r.f2p_pass_before, 0);
  ASSERT_EQ(tests_.requests.size(), 2u);
  EXPECT_EQ(tests_.requests[0].files,
            (std::vector<std::string>{"tests/test_feature.py", "tests/test_core.py"}));
  EXPECT_EQ(tests_.requests[0].root, options_.work_dir + "/repo");
  EXPECT_EQ(tests_.requests[0].spec.python, "/usr/bin/python3");
  EXPECT_NE(tests_.requests[0].work_dir, tests_.requests[1].work_dir);
}

// A test that hands the library its own path (click's File options) has the gold's run read
// a grader's file through files the gold changed: the gold round runs with the grader's files
// protected as eval's runs are, and the reads it journals are the task's (eval does not flag
// them); the round on the pre-solved code records nothing.
TEST_F(VerifyTest, TheGoldRunsReadsOfItsTestFilesAreRecorded) {
  Answer("passed");
  auto plain = tests_.respond;
  tests_.respond = [=](const runner::TestRunRequest& r) -> util::Expected<runner::TestRun> {
    auto run = plain(r);
    if (run.ok()) {
      run->hooks.insert({"pkg/core.py", "reads the grader's test file tests/test_feature.py"});
      run->hooks.insert({"pkg/core.py", "pytest_collection_modifyitems"});
    }
    return run;
  };
  VerifyReport r = Verify();
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.gold_test_file_reads,
            (std::set<std::pair<std::string, std::string>>{
                {"pkg/core.py", "reads the grader's test file tests/test_feature.py"}}));
  ASSERT_EQ(tests_.requests.size(), 2u);
  EXPECT_TRUE(tests_.requests[0].protect.empty());
  // The grader's files, as eval protects them (taskdir::GraderFiles): sorted.
  EXPECT_EQ(tests_.requests[1].protect,
            (std::vector<std::string>{"tests/test_core.py", "tests/test_feature.py"}));
}

TEST_F(VerifyTest, AFailingP2PTestFailsOnThePresolvedCode) {
  Answer("error");
  VerifyReport r = Verify();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.failure, VerifyFailure::kP2P);
  EXPECT_EQ(r.failures, (std::vector<std::string>{std::string("P2P ") + kP2p + " error"}));
  // Run once more before it rejects, on the same code; failing both times is no flake.
  ASSERT_EQ(tests_.requests.size(), 2u);
  EXPECT_EQ(tests_.requests[0].root, tests_.requests[1].root);
  EXPECT_NE(tests_.requests[0].work_dir, tests_.requests[1].work_dir);
  EXPECT_TRUE(r.flaky.empty());
}

// The gold patch must keep the P2P tests passing too.
TEST_F(VerifyTest, AP2PTestTheGoldPatchBreaksFailsTheGoldRound) {
  tests_.respond = [](const runner::TestRunRequest& r) -> util::Expected<runner::TestRun> {
    bool has_g = ReadFileOrDie(r.root + "/pkg/core.py").find("def g") != std::string::npos;
    return RunWith({{kF2p, has_g ? "passed" : "failed"}, {kP2p, has_g ? "failed" : "passed"}});
  };
  VerifyReport r = Verify();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.failure, VerifyFailure::kGold);
  EXPECT_EQ(r.failures, (std::vector<std::string>{std::string("P2P ") + kP2p + " failed"}));
  EXPECT_NE(r.reason.find("with patch.diff applied 1 tests still fail"), std::string::npos) << r.reason;
}

// A P2P test that fails once and passes when run again is flaky: left out, not decisive.
TEST_F(VerifyTest, AP2PTestThatFailsOnceIsFlakyAndDoesNotDecide) {
  int calls = 0;
  tests_.respond = [&](const runner::TestRunRequest& r) -> util::Expected<runner::TestRun> {
    bool has_g = ReadFileOrDie(r.root + "/pkg/core.py").find("def g") != std::string::npos;
    return RunWith({{kF2p, has_g ? "passed" : "failed"}, {kP2p, ++calls == 1 ? "failed" : "passed"}});
  };
  VerifyReport r = Verify();
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.flaky, (std::set<std::string>{kP2p}));
  EXPECT_EQ(r.pytest_runs, 3);
}

// Flaky F2P tests are left out too; when none is left the task is rejected.
TEST_F(VerifyTest, AnF2PFileWhoseEveryTestIsFlakyIsRejected) {
  int calls = 0;
  tests_.respond = [&](const runner::TestRunRequest& r) -> util::Expected<runner::TestRun> {
    bool has_g = ReadFileOrDie(r.root + "/pkg/core.py").find("def g") != std::string::npos;
    ++calls;
    return RunWith({{kF2p, has_g && calls == 3 ? "passed" : "failed"}, {kP2p, "passed"}});
  };
  VerifyReport r = Verify();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.flaky, (std::set<std::string>{kF2p}));
  EXPECT_EQ(r.reason, "every F2P test is flaky");
}

// A test parametrised by the clock has another id in every run (marshmallow's
// test_invalid_datetime_deserialization[08:28:59 2026-12-03]): with the gold patch neither
// run reports the traced id while its file runs, so it is left out as a flaky one; a file
// that reports nothing at all still fails the gold round.
TEST_F(VerifyTest, AnIdNoGoldRunReproducesIsLeftOut) {
  const std::string stamped = "tests/test_feature.py::test_at[08:28:59]";
  auto info = ReadInstance(util::RealEnv(), TaskDir{task_});
  ASSERT_TRUE(info.ok()) << info.error();
  info->f2p_tests.push_back(stamped);
  WriteFileOrDie(task_ + "/instance.json", InstanceJson(*info));
  int calls = 0;
  bool silent_gold = false;
  tests_.respond = [&](const runner::TestRunRequest& r) -> util::Expected<runner::TestRun> {
    bool has_g = ReadFileOrDie(r.root + "/pkg/core.py").find("def g") != std::string::npos;
    std::string now = "tests/test_feature.py::test_at[08:3" + std::to_string(calls++) + ":00]";
    if (has_g && silent_gold) return RunWith({{kP2p, "passed"}});
    return RunWith({{kF2p, has_g ? "passed" : "failed"}, {now, has_g ? "passed" : "failed"},
                    {kP2p, "passed"}});
  };
  VerifyReport r = Verify();
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.flaky, (std::set<std::string>{stamped}));
  calls = 0;
  silent_gold = true;
  VerifyReport silent = Verify();
  EXPECT_FALSE(silent.ok);
  EXPECT_TRUE(silent.flaky.empty());
  EXPECT_NE(silent.reason.find("with patch.diff applied 2 tests still fail"), std::string::npos)
      << silent.reason;
}

TEST_F(VerifyTest, AnF2PFileThatPassesBeforeIsUnderExtracted) {
  Answer("passed", /*f2p_without_g=*/true);
  VerifyReport r = Verify();
  EXPECT_EQ(r.failure, VerifyFailure::kF2PPasses);
  EXPECT_EQ(r.f2p_pass_before, 1.0);
}

TEST_F(VerifyTest, AGoldPatchThatDoesNotFixNamesTheFirstErrorLine) {
  Answer("passed", false, /*gold_fixes=*/false);
  VerifyReport r = Verify();
  EXPECT_EQ(r.failure, VerifyFailure::kGold);
  EXPECT_NE(r.reason.find("E   AttributeError: no g"), std::string::npos) << r.reason;
}

// The harness counts an xpassed F2P test as failing: so does the gold round.
TEST_F(VerifyTest, AnF2PTestThatXpassesWithTheGoldPatchFailsTheGoldRound) {
  tests_.respond = [](const runner::TestRunRequest& r) -> util::Expected<runner::TestRun> {
    bool has_g = ReadFileOrDie(r.root + "/pkg/core.py").find("def g") != std::string::npos;
    return RunWith({{kF2p, has_g ? "xpassed" : "failed"}, {kP2p, "passed"}});
  };
  VerifyReport r = Verify();
  EXPECT_EQ(r.failure, VerifyFailure::kGold);
  EXPECT_NE(r.reason.find("F2P " + std::string(kF2p) + " xpassed"), std::string::npos)
      << r.reason;
}

TEST_F(VerifyTest, PytestThatCannotRunIsAP2PFailureWithItsOutput) {
  tests_.respond = [](const runner::TestRunRequest&) -> util::Expected<runner::TestRun> {
    return util::Error{"ImportError: cannot import name 'g'"};
  };
  VerifyReport r = Verify();
  EXPECT_EQ(r.failure, VerifyFailure::kP2P);
  EXPECT_EQ(r.messages, (std::vector<std::string>{"ImportError: cannot import name 'g'"}));
}

TEST_F(VerifyTest, AGoldPatchThatDoesNotApplyIsASetupFailure) {
  Answer("passed");
  WriteFileOrDie(task_ + "/patch.diff", "diff --git a/none.py b/none.py\n--- a/none.py\n+++ "
                                        "b/none.py\n@@ -1 +1 @@\n-x\n+y\n");
  VerifyReport r = Verify();
  EXPECT_EQ(r.failure, VerifyFailure::kSetup);
  EXPECT_NE(r.reason.find("patch.diff does not apply"), std::string::npos) << r.reason;
}

// The environment of a task's runs is built from the repository it was cut from, rebuilt
// from the task: every task of one commit has the same tree, so the same environment key
// (from its own presolved/, each task built an environment of its own).
TEST_F(VerifyTest, TheEnvironmentIsBuiltFromTheRepositoryTheTaskWasCutFrom) {
  runner::GitProgram git(util::RealEnv(), sandbox::RealLauncher(), tmp_.path() + "/git2");
  std::filesystem::create_directories(tmp_.path() + "/work");
  std::string tree = EnvironmentTree(git, TaskDir{task_}, tmp_.path() + "/work/original");
  ASSERT_EQ(tree, tmp_.path() + "/work/original");
  EXPECT_NE(ReadFileOrDie(tree + "/pkg/core.py").find("def g"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(tree + "/tests/test_feature.py"));
  // The repository itself, as another task of it would rebuild it.
  std::string repo = tmp_.path() + "/repo";
  std::filesystem::create_directories(repo);
  std::filesystem::copy(tree + "/pkg", repo + "/pkg", std::filesystem::copy_options::recursive);
  std::filesystem::copy(tree + "/tests", repo + "/tests", std::filesystem::copy_options::recursive);
  runner::RepoSpec spec;
  spec.install = {"true"};
  auto key = [&](const std::string& root) {
    auto k = runner::EnvironmentKey(util::RealEnv(), spec, root);
    EXPECT_TRUE(k.ok()) << k.error();
    return k.ok() ? *k : "";
  };
  EXPECT_EQ(key(tree), key(repo));
  EXPECT_NE(key(tree), key(task_ + "/presolved"));
  // A task whose patches do not apply: its own presolved/, as before.
  WriteFileOrDie(task_ + "/patch.diff", "diff --git a/none.py b/none.py\n--- a/none.py\n+++ "
                                        "b/none.py\n@@ -1 +1 @@\n-x\n+y\n");
  EXPECT_EQ(EnvironmentTree(git, TaskDir{task_}, tmp_.path() + "/work/again"),
            task_ + "/presolved");
}

}  // namespace
}  // namespace fbkit::extract::taskdir

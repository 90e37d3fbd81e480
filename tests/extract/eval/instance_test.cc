// Evaluation and verification (extract/eval/instance.h, extract/taskdir/verify.h) never run a
// host-side process over a work copy that an agent's patch or the tests have written: every
// command is seen by a fake launcher that fails the test when an unsandboxed one names a path
// of the work dir (then the real launcher runs it). Tests are a FakeTestRunner; git and patch are real.
#include "extract/eval/instance.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "extract/taskdir/verify.h"
#include "sandbox/sandbox.h"
#include "tests/testing/fake_env.h"
#include "tests/testing/fake_git.h"
#include "tests/testing/fake_launcher.h"
#include "tests/testing/fake_test_runner.h"
#include "tests/testing/no_launcher.h"
#include "tests/testing/run.h"
#include "tests/testing/tiny_task.h"

namespace fbkit::extract::eval {
namespace {

using testing::FakeLauncher;
using testing::FakeTestRunner;
using testing::ReadFileOrDie;
using testing::RunWith;
using testing::ScratchDir;

class HostCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!sandbox::CheckBwrap().ok()) GTEST_SKIP() << sandbox::CheckBwrap().error();
    task_ = tmp_.path() + "/task.lv1";
    ASSERT_TRUE(testing::WriteTinyTask(task_, tmp_.path() + "/git"));
    gold_ = ReadFileOrDie(task_ + "/patch.diff");
    tests_.respond = [](const runner::TestRunRequest& r) -> util::Expected<runner::TestRun> {
      bool has_g = ReadFileOrDie(r.root + "/pkg/core.py").find("def g") != std::string::npos;
      return RunWith({{testing::kTinyF2p, has_g ? "passed" : "failed"},
                      {testing::kTinyP2p, "passed"}});
    };
  }

  // The guard: an unsandboxed process whose directory or arguments name the work dir fails
  // the test.
  FakeLauncher Guard(const std::string& work) {
    return FakeLauncher(
        [work](const sandbox::ProcessSpec& spec) -> std::optional<FakeLauncher::Outcome> {
          if (spec.sandbox.kind != sandbox::SandboxKind::kNone) return std::nullopt;
          bool touches = spec.cwd.starts_with(work);
          for (const auto& a : spec.argv) touches = touches || a.find(work) != std::string::npos;
          if (touches) {
            std::string cmd;
            for (const auto& a : spec.argv) cmd += a + " ";
            ADD_FAILURE() << "a host-side process over the work copy: " << cmd << "in " << spec.cwd;
          }
          return std::nullopt;
        },
        &sandbox::RealLauncher());
  }

  EvalReport Evaluate(const std::string& patch) {
    EvalOptions options;
    options.work_dir = tmp_.path() + "/work";
    FakeLauncher guard = Guard(options.work_dir);
    return EvaluateInstance({util::RealEnv(), guard, tests_}, task_, {"x.lv1", "m", patch, "p"},
                            options);
  }

  ScratchDir tmp_;
  std::string task_;
  std::string gold_;
  FakeTestRunner tests_;
};

TEST_F(HostCommandsTest, EveryWayAPatchIsAppliedRunsSandboxed) {
  EvalReport gold = Evaluate(gold_);
  EXPECT_TRUE(gold.resolved) << gold.error << gold.apply_error;
  EXPECT_EQ(gold.apply_method, "git apply");

  // A context line the tree does not have: only GNU patch's fuzz applies it.
  std::string bent = gold_;
  bent.replace(bent.find(" def f():"), 9, " def f():  # bent");
  EvalReport fuzzy = Evaluate(bent);
  EXPECT_TRUE(fuzzy.resolved) << fuzzy.error << fuzzy.apply_error;
  EXPECT_EQ(fuzzy.apply_method, "patch --fuzz");

  // Test files the patch adds or edits are put back (checked out, or removed).
  std::string with_tests = gold_ +
      "diff --git a/tests/test_feature.py b/tests/test_feature.py\nnew file mode 100644\n"
      "--- /dev/null\n+++ b/tests/test_feature.py\n@@ -0,0 +1 @@\n+x = 1\n"
      "diff --git a/tests/test_core.py b/tests/test_core.py\n--- a/tests/test_core.py\n"
      "+++ b/tests/test_core.py\n@@ -1,2 +1,2 @@\n-def test_f():\n+def test_other():\n     pass\n";
  EvalReport reverted = Evaluate(with_tests);
  EXPECT_TRUE(reverted.resolved) << reverted.error << reverted.apply_error;
  EXPECT_EQ(reverted.test_files_reverted,
            (std::vector<std::string>{"tests/test_core.py", "tests/test_feature.py"}));

  // A patch into git's own files is refused before any tool sees it, and flagged.
  EvalReport into_git = Evaluate(gold_ +
      "diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n"
      "@@ -1 +1,2 @@\n [core]\n+\tfsmonitor = touch /tmp/fbkit-host-ran\n");
  EXPECT_FALSE(into_git.applied);
  EXPECT_TRUE(into_git.suspicious);
  EXPECT_FALSE(into_git.resolved);
}

// The environment an agent's patch is scored in is built from the task's own pre-solved tree:
// built from the repository the task was cut from (as verify's is), its entry, which the
// tests' sandbox holds, would have the gold solution for the agent's code to read.
TEST_F(HostCommandsTest, TheGradersEnvironmentNeverHoldsTheGold) {
  auto inst = nlohmann::json::parse(ReadFileOrDie(task_ + "/instance.json"));
  runner::RepoSpec spec;
  spec.python = "/usr/bin/python3";
  spec.install = {"true"};
  inst["repo_settings"] = runner::RepoSpecJson(spec);
  testing::WriteFileOrDie(task_ + "/instance.json", inst.dump());
  std::string seen;
  tests_.respond = [&](const runner::TestRunRequest& r) -> util::Expected<runner::TestRun> {
    seen += ReadFileOrDie((r.env_root.empty() ? r.root : r.env_root) + "/pkg/core.py");
    return RunWith({{testing::kTinyF2p, "failed"}, {testing::kTinyP2p, "passed"}});
  };
  EvalReport stub = Evaluate("diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n"
                             "+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n-def f():\n+def f():  # x\n"
                             "     return 1\n");
  EXPECT_TRUE(stub.applied) << stub.error << stub.apply_error;
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.find("def g"), std::string::npos) << seen;
}

TEST_F(HostCommandsTest, VerificationRunsGitOverTheTestedCopySandboxed) {
  taskdir::VerifyOptions options;
  options.work_dir = tmp_.path() + "/verify";
  FakeLauncher guard = Guard(options.work_dir);
  taskdir::VerifyReport r = taskdir::VerifyTask({util::RealEnv(), guard, tests_}, task_, options);
  EXPECT_TRUE(r.ok) << r.reason;
}

// EvaluateInstance wholly in memory: the task in a FakeEnv, git a FakeGit, pytest a
// FakeTestRunner answering from the code each run sees; no process starts.
class EvaluateInMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(testing::WriteTinyTask(env_, git_, kTask));
    gold_ = *env_.ReadFile(std::string(kTask) + "/patch.diff");
    tests_.respond = [this](const runner::TestRunRequest& r) -> util::Expected<runner::TestRun> {
      auto core = env_.ReadFile(r.root + "/pkg/core.py");
      bool has_g = core.ok() && core->find("def g") != std::string::npos;
      bool test_f = env_.ReadFile(r.root + "/tests/test_core.py")->find("def test_f") != std::string::npos;
      return RunWith({{testing::kTinyF2p, has_g ? "passed" : "failed"},
                      {testing::kTinyP2p, test_f ? "passed" : "failed"}});
    };
  }
  void TearDown() override { EXPECT_EQ(none_.starts, 0) << "a process was started"; }

  EvalReport Evaluate(const std::string& patch) {
    EvalOptions options;
    options.work_dir = "/work/eval";
    EvalReport r = EvaluateInstance({env_, none_, tests_, &maker_}, kTask, {"x.lv1", "m", patch, "p"},
                                    options);
    EXPECT_FALSE(env_.Exists(options.work_dir)) << "the work dir is left behind";
    return r;
  }

  static constexpr char kTask[] = "/tasks/x.lv1";
  testing::FakeEnv env_;
  testing::FakeGit git_{env_};
  runner::GitMaker maker_ = git_.Maker();
  testing::NoLauncher none_;
  FakeTestRunner tests_;
  std::string gold_;
};

TEST_F(EvaluateInMemoryTest, GoldResolvesAndWhatIsNotTheFeatureDoesNot) {
  EvalReport gold = Evaluate(gold_);
  EXPECT_TRUE(gold.resolved) << gold.error << gold.apply_error;
  EXPECT_EQ(gold.f2p.at(testing::kTinyF2p), "passed");
  ASSERT_EQ(tests_.requests.size(), 1u);
  const runner::TestRunRequest& run = tests_.requests[0];
  EXPECT_EQ(run.root, "/work/eval/repo");
  EXPECT_EQ(run.env_root, std::string(kTask) + "/presolved") << "the environment holds no gold";
  EXPECT_EQ(run.files, (std::vector<std::string>{"tests/test_feature.py", "tests/test_core.py"}));
  EXPECT_NE(std::find(run.protect.begin(), run.protect.end(), "tests/test_feature.py"), run.protect.end());
  EXPECT_NE(std::find(git_.commands().begin(), git_.commands().end(), "apply (lenient)"),
            git_.commands().end()) << "the agent's patch is applied as SWE-bench's harness does";

  EvalReport empty = Evaluate("");
  EXPECT_TRUE(empty.empty_patch);
  EXPECT_FALSE(empty.resolved);
  EXPECT_EQ(tests_.requests.size(), 1u) << "an empty patch runs no tests";

  EvalReport stub = Evaluate("diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n"
                             "+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n-def f():\n+def f():  # x\n"
                             "     return 1\n");
  EXPECT_TRUE(stub.applied) << stub.apply_error;
  EXPECT_FALSE(stub.resolved);
  EXPECT_EQ(stub.f2p.at(testing::kTinyF2p), "failed");

  EvalReport broken = Evaluate("diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n"
                               "+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n-def nothing_here():\n+x\n"
                               "     return 1\n");
  EXPECT_FALSE(broken.applied);
  EXPECT_FALSE(broken.apply_error.empty());
  EXPECT_FALSE(broken.resolved);
}

TEST_F(EvaluateInMemoryTest, TestFilesArePutBackAndWhatSteersPytestIsFlagged) {
  // The patch rewrites the P2P test (which would fail without its test_f) and adds the F2P
  // file: both are put back before the tests run, and the gold in it still resolves.
  std::string with_tests = gold_ +
      "diff --git a/tests/test_feature.py b/tests/test_feature.py\nnew file mode 100644\n"
      "--- /dev/null\n+++ b/tests/test_feature.py\n@@ -0,0 +1 @@\n+x = 1\n"
      "diff --git a/tests/test_core.py b/tests/test_core.py\n--- a/tests/test_core.py\n"
      "+++ b/tests/test_core.py\n@@ -1,2 +1,2 @@\n-def test_f():\n+def test_other():\n     pass\n";
  EvalReport reverted = Evaluate(with_tests);
  EXPECT_TRUE(reverted.resolved) << reverted.error << reverted.apply_error;
  EXPECT_EQ(reverted.test_files_reverted,
            (std::vector<std::string>{"tests/test_core.py", "tests/test_feature.py"}));

  EvalReport conftest = Evaluate(gold_ +
      "diff --git a/conftest.py b/conftest.py\nnew file mode 100644\n--- /dev/null\n"
      "+++ b/conftest.py\n@@ -0,0 +1 @@\n+import pytest\n");
  EXPECT_TRUE(conftest.suspicious);
  EXPECT_FALSE(conftest.resolved);

  EvalReport into_git = Evaluate(gold_ +
      "diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n"
      "@@ -1 +1,2 @@\n [core]\n+\tfsmonitor = touch /tmp/fbkit-host-ran\n");
  EXPECT_FALSE(into_git.applied);
  EXPECT_TRUE(into_git.suspicious);
  EXPECT_FALSE(into_git.resolved);
}

}  // namespace
}  // namespace fbkit::extract::eval

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
#include "tests/testing/fake_launcher.h"
#include "tests/testing/fake_test_runner.h"
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

}  // namespace
}  // namespace fbkit::extract::eval

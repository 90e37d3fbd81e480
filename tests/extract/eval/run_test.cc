// EvaluateRun over the fakes, in memory: which predictions are evaluated, which an earlier
// report for the same patch, model and sandbox keeps, what RUN_DIR holds after (each
// instance's patch.diff, test_output.txt and report.json; the summary).
#include "extract/eval/run.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "agents/run_dir.h"
#include "extract/eval/report.h"
#include "tests/testing/fake_env.h"
#include "tests/testing/fake_test_runner.h"
#include "tests/testing/no_launcher.h"
#include "util/hash.h"

namespace fbkit::extract::eval {
namespace {

const std::string kRoot = "/fbkit-fake-eval";  // exists only in the FakeEnv

EvalReport Resolved(const Prediction& p, const EvalOptions& o) {
  EvalReport r;
  r.instance_id = p.instance_id;
  r.model = p.model;
  r.patch_sha256 = util::Sha256Hex(p.patch);
  r.sandbox = sandbox::SandboxKindName(o.sandbox);
  r.applied = true;
  r.f2p = {{"tests/test_x.py::test_a", "passed"}};
  r.f2p_passed = 1;
  r.pass_rate = 1;
  r.resolved = true;
  r.test_output = "1 passed\n";
  return r;
}

TEST(EvalRunTest, EvaluatesKeepsEarlierReportsAndWritesTheRunDirectoryInMemory) {
  testing::FakeEnv env;
  testing::NoLauncher launcher;
  testing::FakeTestRunner tests;
  const std::string run = kRoot + "/run";
  env.AddDir(run);
  EvalRunOptions o;
  for (const char* id : {"t.a", "t.b", "t.c"}) o.tasks[id] = kRoot + "/tasks/" + id;
  o.predictions = {{"t.a", "agent-x", "patch a\n", "p:1"}, {"t.b", "agent-x", "patch b\n", "p:2"}};
  o.run_dir = run;
  // t.a was evaluated before, for the same patch, model and sandbox: kept.
  agents::EvalRunDir dir{run};
  env.AddFile(util::JoinPath(dir.instance("t.a"), agents::kReportFile),
              ReportJson(Resolved(o.predictions[0], o.eval)));
  std::mutex mu;
  std::vector<std::string> evaluated;
  EvalStep step = [&](const std::string& task, const Prediction& p, const EvalOptions& eo) {
    std::lock_guard<std::mutex> lock(mu);
    evaluated.push_back(task);
    EXPECT_EQ(eo.work_dir, dir.work(p.instance_id));
    return Resolved(p, eo);
  };
  auto out = EvaluateRun({env, launcher, tests}, o, [](const auto&) {}, step);
  EXPECT_EQ(evaluated, std::vector<std::string>{kRoot + "/tasks/t.b"});
  EXPECT_EQ(out.error, "");
  EXPECT_TRUE(out.write_errors.empty());
  ASSERT_EQ(out.reports.size(), 2u);
  std::string b = dir.instance("t.b");
  EXPECT_EQ(env.Contents(util::JoinPath(b, agents::kPatchFile)), "patch b\n");
  EXPECT_EQ(env.Contents(util::JoinPath(b, agents::kTestOutputFile)), "1 passed\n");
  auto report = ParseReport(env.Contents(util::JoinPath(b, agents::kReportFile)));
  ASSERT_TRUE(report.ok()) << report.error();
  EXPECT_TRUE(report->resolved);
  EXPECT_EQ(env.Contents(dir.summary()), out.summary_json);
  EXPECT_EQ(out.summary_json, SummaryJson(out.reports, 1));  // t.c: a task without a prediction

  // Another patch for t.a is evaluated anew; --rerun evaluates both.
  o.predictions[0].patch = "patch a, second try\n";
  evaluated.clear();
  EvaluateRun({env, launcher, tests}, o, [](const auto&) {}, step);
  EXPECT_EQ(evaluated, std::vector<std::string>{kRoot + "/tasks/t.a"});
  o.rerun = true;
  evaluated.clear();
  EvaluateRun({env, launcher, tests}, o, [](const auto&) {}, step);
  EXPECT_EQ(evaluated.size(), 2u);

  EXPECT_EQ(launcher.starts, 0);
  EXPECT_TRUE(tests.requests.empty());
  EXPECT_FALSE(std::filesystem::exists(kRoot)) << "the run touched the disk";
}

}  // namespace
}  // namespace fbkit::extract::eval

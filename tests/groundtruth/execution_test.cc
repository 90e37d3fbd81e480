// Execution filtering's classification rule, entity reverts for ablation, step checks,
// the Lite search and the readers' errors.
#include <gtest/gtest.h>

#include <memory>

#include "groundtruth/ablation.h"
#include "groundtruth/assemble.h"
#include "groundtruth/execution.h"
#include "groundtruth/lite.h"
#include "groundtruth/records.h"
#include "tests/testing/fake_test_runner.h"
#include "tests/testing/run.h"

namespace fbkit::groundtruth {
namespace {

TEST(ClassifyTest, EveryCase) {
  auto runs = [](std::map<std::string, std::string> names) {
    Outcomes out;
    for (const auto& [id, name] : names) out[id] = runner::ParseOutcome(name);
    return out;
  };
  Outcomes before = runs({{"t::f2p", "failed"},  {"t::err", "error"},   {"t::p2p", "passed"},
                          {"t::broken", "passed"}, {"t::still", "failed"}, {"t::gone", "passed"},
                          {"t::skip", "skipped"}, {"t::flaky", "failed"}});
  Outcomes a1 = runs({{"t::f2p", "passed"},  {"t::err", "passed"},   {"t::p2p", "passed"},
                      {"t::broken", "failed"}, {"t::still", "error"},  {"t::skip", "passed"},
                      {"t::flaky", "passed"}, {"t::new", "passed"},   {"t::xf", "xfailed"}});
  Outcomes a2 = a1;
  a2["t::flaky"] = runner::Outcome::kFailed;
  Validation v;
  Classify(before, {a1, a2}, &v);
  EXPECT_EQ(v.fail_to_pass, (std::vector<std::string>{"t::err", "t::f2p", "t::new"}));
  EXPECT_EQ(v.pass_to_pass, (std::vector<std::string>{"t::p2p"}));
  EXPECT_EQ(v.broken, (std::vector<std::string>{"t::broken"}));
  EXPECT_EQ(v.still_failing, (std::vector<std::string>{"t::still"}));
  EXPECT_EQ(v.removed, (std::vector<std::string>{"t::gone"}));
  EXPECT_EQ(v.flaky, (std::vector<std::string>{"t::flaky"}));
  EXPECT_EQ(v.ignored, (std::vector<std::string>{"t::skip", "t::xf"}));
}

// RACE's test runs go through the runner's TestRunner: the instance's pythonpath after the
// spec's, outcomes by test id, the scratch directory removed, pytest's failure passed on.
TEST(TestOutcomesTest, RunsThroughTheTestRunnerAndCleansUp) {
  testing::ScratchDir tmp;
  std::string work = tmp.path() + "/runs";
  testing::FakeTestRunner tests;
  tests.respond = [&](const runner::TestRunRequest& r) -> util::Expected<runner::TestRun> {
    EXPECT_TRUE(util::RealEnv().MakeDirs(r.work_dir).ok());
    if (r.files.empty()) return util::Error{"no tests ran"};
    return testing::RunWith({{r.files[0] + "::t", "failed"}});
  };
  runner::RepoSpec spec;
  spec.pythonpath = {"src"};
  auto o = TestOutcomes(util::RealEnv(), tests, "/repo", "", spec, {"lib"}, {"t.py"}, work);
  ASSERT_TRUE(o.ok()) << o.error();
  EXPECT_EQ(*o, (Outcomes{{"t.py::t", runner::Outcome::kFailed}}));
  ASSERT_EQ(tests.requests.size(), 1u);
  EXPECT_EQ(tests.requests[0].root, "/repo");
  EXPECT_EQ(tests.requests[0].spec.pythonpath, (std::vector<std::string>{"src"}));
  EXPECT_EQ(tests.requests[0].extra_pythonpath, (std::vector<std::string>{"lib"}));
  EXPECT_FALSE(util::RealEnv().Stat(work, false).ok()) << "the scratch directory is left";
  auto bad = TestOutcomes(util::RealEnv(), tests, "/repo", "", spec, {}, {}, work);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "no tests ran");
}

// A run takes the spec's environment from the instance's one checkout (EnvironmentSource)
// while its tree declares the same dependencies; an ablation of a dependency file builds
// from its own tree.
TEST(TestOutcomesTest, TheEnvironmentComesFromTheSourceWhileTheDependenciesAgree) {
  testing::ScratchDir tmp;
  std::string run = tmp.path() + "/run", source = tmp.path() + "/source";
  for (const auto& dir : {run, source}) {
    ASSERT_TRUE(util::RealEnv().MakeDirs(dir).ok());
    testing::WriteFileOrDie(dir + "/requirements.txt", "a==1\n");
  }
  testing::WriteFileOrDie(run + "/m.py", "x = 1  # the feature, ablated\n");
  testing::FakeTestRunner tests;
  tests.respond = [&](const runner::TestRunRequest&) -> util::Expected<runner::TestRun> {
    return testing::RunWith({{"t.py::t", "passed"}});
  };
  runner::RepoSpec spec;
  auto once = [&] {
    auto o = TestOutcomes(util::RealEnv(), tests, run, source, spec, {}, {"t.py"},
                          tmp.path() + "/work");
    EXPECT_TRUE(o.ok()) << o.error();
    return tests.requests.back().env_root;
  };
  EXPECT_EQ(once(), "") << "no install steps: no environment to build";
  spec.install = {"pip install -r requirements.txt"};
  EXPECT_EQ(once(), source);
  testing::WriteFileOrDie(run + "/requirements.txt", "a==2\n");
  EXPECT_EQ(once(), "") << "a dependency file differs: the run's own tree";
}

TEST(ClassifyTest, RunnableTests) {
  std::string patch =
      "diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n+++ b/tests/test_a.py\n"
      "diff --git a/tests/conftest.py b/tests/conftest.py\n--- a/tests/conftest.py\n+++ b/tests/conftest.py\n"
      "diff --git a/pkg/b_test.py b/pkg/b_test.py\n--- /dev/null\n+++ b/pkg/b_test.py\n"
      "diff --git a/tests/test_old.py b/tests/test_old.py\n--- a/tests/test_old.py\n+++ /dev/null\n";
  EXPECT_EQ(RunnableTests(patch), (std::vector<std::string>{"pkg/b_test.py", "tests/test_a.py"}));
}

class RevertTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = parser::PythonParser::Create();
    ASSERT_TRUE(p.ok());
    parser_ = std::move(p.value());
  }
  // Reverts the change of `entity` in the one-file diff before -> after.
  util::Expected<std::string> Revert(const std::string& before, const std::string& after,
                                     const std::string& entity) {
    FileVersions f{"m.py", before, after};
    for (const auto& c : DiffEntities(*parser_, {f}).entities) {
      if (c.entity == entity) return RevertEntity(*parser_, f, c);
    }
    return util::Error{"no change of " + entity};
  }
  std::unique_ptr<parser::PythonParser> parser_;
};

TEST_F(RevertTest, EachChangeType) {
  std::string before = "def a():\n    return 1\n\n\ndef gone():\n    return 2\n";
  std::string after = "def a():\n    return 10\n\n\ndef b():\n    return 3\n";
  EXPECT_EQ(*Revert(before, after, "m.py::a"), "def a():\n    return 1\n\n\ndef b():\n    return 3\n");
  EXPECT_EQ(*Revert(before, after, "m.py::b"), "def a():\n    return 10\n\n\n");
  EXPECT_EQ(*Revert(before, after, "m.py::gone"),
            "def a():\n    return 10\n\ndef gone():\n    return 2\n\n\ndef b():\n    return 3\n");
}

TEST_F(RevertTest, EmptiedBlockGetsPassAndUnparsableIsAnError) {
  std::string before = "class C:\n    x = 1\n";
  std::string after = "class C:\n    def m(self):\n        return 1\n";
  EXPECT_EQ(*Revert("", after, "m.py::C.m"), "class C:\n    pass\n");
  EXPECT_EQ(*Revert(before + "\n", before + "\n    def n(self):\n        pass\n", "m.py::C.n"),
            "class C:\n    x = 1\n\n");
  // A method whose class is gone cannot be put back.
  auto r = Revert("class D:\n    def m(self):\n        pass\n", "x = 1\n", "m.py::D.m");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "its parent no longer exists");
}

TEST(StepsTest, CheckSteps) {
  std::vector<GtTask> tasks(1);
  tasks[0].entity = "a.py::f";
  std::vector<Step> ok = {{"", "introduce new capability", {"a.py::f"}, "x"}};
  EXPECT_TRUE(CheckSteps(tasks, &ok).ok());
  EXPECT_EQ(ok[0].id, "S1");
  std::vector<Step> bad_type = {{"S1", "refactor", {"a.py::f"}, ""}};
  EXPECT_EQ(CheckSteps(tasks, &bad_type).error(),
            "step S1 has type \"refactor\", which is not in the taxonomy");
  std::vector<Step> bad_task = {{"S1", "reuse existing semantics", {"a.py::g"}, ""}};
  EXPECT_EQ(CheckSteps(tasks, &bad_task).error(), "step S1 names a.py::g, which is no task");
}

AgentRun MakeRun(const std::string& name, int n, int resolved_every, int apply_every) {
  AgentRun r;
  r.agent = name;
  for (int i = 0; i < n; ++i) {
    AgentInstance a;
    a.instance_id = "i" + std::to_string(100 + i);
    a.resolved = i % resolved_every == 0;
    a.applied = i % apply_every != 1;
    r.instances.push_back(a);
  }
  return r;
}

TEST(LiteTest, MatchesRatesAndIsDeterministic) {
  std::vector<AgentRun> runs = {MakeRun("a", 200, 2, 5), MakeRun("b", 200, 3, 7), MakeRun("c", 200, 4, 3)};
  auto r1 = ChooseLite(runs, 40, 7, 20000);
  ASSERT_TRUE(r1.ok()) << r1.error();
  auto r2 = ChooseLite(runs, 40, 7, 20000);
  EXPECT_EQ(r1->instances, r2->instances);
  EXPECT_EQ(LiteJson(*r1, 7), LiteJson(*r2, 7));
  EXPECT_EQ(r1->instances.size(), 40u);
  EXPECT_LE(r1->max_deviation, r1->start_max_deviation);
  EXPECT_LE(r1->max_deviation, 0.02);
  EXPECT_FALSE(ChooseLite(runs, 201, 7, 10).ok());
}

TEST(RecordsTest, ErrorsNameFileAndLine) {
  auto bad = ParseGroundTruths("{\"instance_id\": \"a\"}\n{oops\n", "gt.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().substr(0, 20), "gt.jsonl:2: invalid ");
  auto missing = ParseAgentRun("{\"instances\": [{\"patch\": \"\"}]}", "/x/bot.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("/x/bot.json: record 1"), std::string::npos) << missing.error();
  auto range = ParseAgentRun("[{\"instance_id\": \"a\", \"judgements\": {\"goal_score\": 11}}]", "b.json");
  ASSERT_FALSE(range.ok());
  EXPECT_NE(range.error().find("goal_score must lie in [0, 10]"), std::string::npos);
  auto run = ParseAgentRun("{\"instance_id\": \"a\", \"applied\": true}\n{\"instance_id\": \"b\"}\n",
                           "dir/agent-x.jsonl");
  ASSERT_TRUE(run.ok()) << run.error();
  EXPECT_EQ(run->agent, "agent-x");
  EXPECT_EQ(run->instances.size(), 2u);
  auto dup = ParseGroundTruths("[{\"instance_id\": \"a\"}, {\"instance_id\": \"a\"}]", "g.json");
  EXPECT_EQ(dup.error(), "g.json: instance a appears twice");
  auto nec = ParseGroundTruths("{\"instance_id\": \"a\", \"tasks\": [{\"entity\": \"x.py::f\", \"necessary\": \"maybe\"}]}", "g.json");
  EXPECT_NE(nec.error().find("necessary must be"), std::string::npos);
}

TEST(RecordsTest, GroundTruthRoundTrip) {
  GroundTruth g;
  g.instance_id = "x";
  g.necessary = {"b.py", "a.py"};
  g.tasks = {{"a.py::f", "a.py", "new", "true", "function", "", ""}};
  g.steps = {{"S1", "introduce new capability", {"a.py::f"}, "d"}};
  g.goal = "goal";
  std::string json = GroundTruthJson(g);
  auto back = ParseGroundTruths(json, "g.json");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(GroundTruthJson((*back)[0]), json);
  EXPECT_EQ((*back)[0].necessary, (std::vector<std::string>{"a.py", "b.py"}));
}

}  // namespace
}  // namespace fbkit::groundtruth

// RACE metrics with hand-computed expectations: file, task and step recall and
// over-prediction, the lexical matcher, groups, judgements and the --llm-cmd matcher.
#include "groundtruth/metrics.h"

#include <gtest/gtest.h>

#include "model/model.h"
#include "sandbox/process.h"
#include "util/env.h"

namespace fbkit::groundtruth {
namespace {

const char* kPatch =
    "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"
    "diff --git a/CHANGES.rst b/CHANGES.rst\n--- a/CHANGES.rst\n+++ b/CHANGES.rst\n@@ -1 +1 @@\n-x\n+y\n"
    "diff --git a/d.py b/d.py\nnew file mode 100644\n--- /dev/null\n+++ b/d.py\n@@ -0,0 +1 @@\n+y\n";

GroundTruth Gt() {
  GroundTruth g;
  g.instance_id = "i1";
  g.necessary = {"a.py", "b.py"};
  g.other = {"CHANGES.rst"};
  g.test = {"tests/test_a.py"};
  g.tasks = {{"a.py::f", "a.py", "modified", "true", "", "", ""},
             {"a.py::g", "a.py", "new", "true", "", "", "parse the version string"},
             {"b.py::h", "b.py", "deleted", "false", "", "", ""},
             {"a.py::cos", "a.py", "cosmetic", "false", "", "", ""},
             {"b.py::k", "b.py", "renamed", "true", "", "b.py::j", ""}};
  g.steps = {{"S1", "introduce new capability", {"a.py::g"}, "Add a parser for version strings"},
             {"S2", "change existing semantics", {"a.py::f"}, "Make f accept versions"}};
  return g;
}

AgentInstance Agent() {
  AgentInstance a;
  a.instance_id = "i1";
  a.patch = kPatch;
  a.applied = true;
  a.resolved = false;
  a.files = {"a.py", "c.py"};
  a.tasks = {{"a.py::f", "a.py", "modified", ""},
             {"b.py::j", "b.py", "modified", ""},
             {"a.py::parse_version", "a.py", "new", "parse version string"},
             {"a.py::zzz", "a.py", "new", "log output"},
             {"a.py::f", "a.py", "modified", "duplicate"}};
  a.steps = {{"P1", "introduce new capability", {"a.py::parse_version"}, "add parser for version strings"},
             {"P2", "enforce constraints or edge cases", {"a.py::f"}, "Make f accept versions"}};
  a.goal_score = 7;
  a.concept_recall = 0.5;
  return a;
}

TEST(MatcherTest, WordsAndSimilarity) {
  EXPECT_EQ(Words("parseVersion_string the a.py::X"),
            (std::vector<std::string>{"parse", "string", "version"}));
  EXPECT_DOUBLE_EQ(Similarity({"a1", "b1"}, {"b1", "c1"}), 0.5);
  EXPECT_DOUBLE_EQ(Similarity({}, {}), 0);
  auto m = LexicalMatcher(0.5);
  MatchRequest r;
  r.truth = {{"t1", "parse version"}, {"t2", "render table"}};
  r.predicted = {{"p1", "render the table nicely"}, {"p2", "parse version number"}};
  r.candidates = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  auto pairs = m(r);
  ASSERT_TRUE(pairs.ok());
  // t1-p2: 2*2/(2+3) = 0.8; t2-p1: 2*2/(2+3) = 0.8 (tie: lower truth index first).
  EXPECT_EQ(*pairs, (std::vector<std::pair<size_t, size_t>>{{0, 1}, {1, 0}}));
}

TEST(MetricsTest, HandComputedInstance) {
  auto gt = Gt();
  auto a = Agent();
  auto s = ScoreInstance(gt, &a, LexicalMatcher(0.5));
  EXPECT_EQ(s.error, "");
  // P = {a.py, c.py, CHANGES.rst, d.py}: 1 of 2 necessary; c.py and d.py irrelevant.
  EXPECT_EQ(s.files.predicted, 4u);
  EXPECT_DOUBLE_EQ(*s.files.recall, 0.5);
  EXPECT_DOUBLE_EQ(*s.files.overpred, 0.5);
  // Truth f, g, h, k (cosmetic left out); f by id, k by its old id j, g lexically.
  EXPECT_EQ(s.tasks.truth, 4u);
  EXPECT_EQ(s.tasks.predicted, 4u);
  EXPECT_DOUBLE_EQ(*s.tasks.recall, 0.75);
  EXPECT_DOUBLE_EQ(*s.tasks.overpred, 0.25);
  // S1-P1 (same type, parse_version mapped to g, same words); P2 has another type.
  EXPECT_DOUBLE_EQ(*s.steps.recall, 0.5);
  EXPECT_DOUBLE_EQ(*s.steps.overpred, 0.5);
  EXPECT_DOUBLE_EQ(*s.goal, 7);
  EXPECT_FALSE(s.concept_accuracy.has_value());
}

// A patch earns file credit only for files it changes (red team round 3: a rename of a file
// to itself, an empty new file and lines removed and added back scored Recall@Files 100),
// and none when it is known not to apply.
TEST(MetricsTest, OnlyFilesAPatchChangesArePredicted) {
  AgentInstance a;
  a.patch =
      "diff --git a/calc/core.py b/calc/core.py\nsimilarity index 100%\n"
      "rename from calc/core.py\nrename to calc/core.py\n"
      "diff --git a/calc/fmt.py b/calc/fmt.py\nnew file mode 100644\nindex 0000000..e69de29\n"
      "diff --git a/calc/ops.py b/calc/ops.py\n--- a/calc/ops.py\n+++ b/calc/ops.py\n"
      "@@ -1,2 +1,2 @@\n-x = 1\n y = 2\n+x = 1\n"
      "diff --git a/calc/real.py b/calc/real.py\n--- a/calc/real.py\n+++ b/calc/real.py\n"
      "@@ -1 +1 @@\n-x = 1\n+x = 2\n";
  EXPECT_EQ(PredictedFiles(a), std::vector<std::string>{"calc/real.py"});
  a.applied = false;
  EXPECT_TRUE(PredictedFiles(a).empty());
  a.files = {"calc/said.py"};  // what the agent says it changed is its prediction all the same
  EXPECT_EQ(PredictedFiles(a), std::vector<std::string>{"calc/said.py"});
}

TEST(MetricsTest, GroupsAndMissingInstances) {
  GroundTruth g2;
  g2.instance_id = "i2";
  g2.necessary = {"x.py"};
  AgentRun run;
  run.agent = "bot";
  run.instances = {Agent()};
  AgentInstance stray;
  stray.instance_id = "zz";
  run.instances.push_back(stray);
  auto score = ScoreAgent({Gt(), g2}, run, LexicalMatcher(0.5));
  ASSERT_EQ(score.instances.size(), 2u);
  EXPECT_FALSE(score.instances[1].in_agent_file);
  EXPECT_EQ(score.warnings, (std::vector<std::string>{"zz: no ground truth (ignored)"}));
  const auto& all = score.groups[0];
  EXPECT_EQ(all.instances, 2u);
  EXPECT_DOUBLE_EQ(*all.metrics.at("recall_files").value(), 0.25);
  EXPECT_EQ(all.metrics.at("overpred_files").n, 1u);
  EXPECT_DOUBLE_EQ(*all.metrics.at("patch_apply_rate").value(), 0.5);
  EXPECT_DOUBLE_EQ(*all.metrics.at("resolved_rate").value(), 0.0);
  EXPECT_DOUBLE_EQ(*all.metrics.at("score_goal").value(), 7.0);
  EXPECT_FALSE(all.metrics.at("accuracy_concept").value().has_value());
  EXPECT_EQ(score.groups[1].name, "Success");
  EXPECT_EQ(score.groups[1].instances, 0u);
  EXPECT_EQ(score.groups[2].instances, 2u);
  EXPECT_EQ(score.groups[3].name, "Failure excluding apply-fail");
  EXPECT_EQ(score.groups[3].instances, 1u);
  EXPECT_DOUBLE_EQ(*score.groups[3].metrics.at("recall_files").value(), 0.5);
  auto json = ScoresJson({score}, false);
  EXPECT_NE(json.find("\"recall_files\":{\"n\":2,\"value\":0.25}"), std::string::npos) << json;
  auto csv = ScoresCsv({score});
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "agent,group,instances,recall_files,overpred_files,recall_tasks,overpred_tasks,"
            "recall_steps,overpred_steps,score_goal,recall_concept,accuracy_concept,"
            "patch_apply_rate,resolved_rate");
  EXPECT_NE(csv.find("bot,All,2,0.25,0.5,0.75,0.25,0.5,0.5,7,0.5,,0.5,0\n"), std::string::npos)
      << csv;
}

TEST(MetricsTest, GoldAgainstItselfIsPerfect) {
  auto gt = Gt();
  AgentInstance a;
  a.instance_id = "i1";
  a.files = {"a.py", "b.py", "CHANGES.rst", "tests/test_a.py"};
  for (const auto& t : gt.tasks) a.tasks.push_back({t.entity, t.file, t.change, t.purpose});
  for (const auto& s : gt.steps) a.steps.push_back(s);
  auto s = ScoreInstance(gt, &a, LexicalMatcher(0.5));
  EXPECT_DOUBLE_EQ(*s.files.recall, 1);
  EXPECT_DOUBLE_EQ(*s.files.overpred, 0);
  EXPECT_DOUBLE_EQ(*s.tasks.recall, 1);
  EXPECT_DOUBLE_EQ(*s.tasks.overpred, 0);
  EXPECT_DOUBLE_EQ(*s.steps.recall, 1);
  EXPECT_DOUBLE_EQ(*s.steps.overpred, 0);
}

TEST(MetricsTest, LlmMatcherProtocol) {
  std::string dir = "/tmp/fbkit-llm-test-" + std::to_string(::getpid());
  auto gt = Gt();
  auto a = Agent();
  auto good_model = model::CommandModel(
      util::RealEnv(), sandbox::RealLauncher(),
      "grep -q match_ && echo '{\"matches\": [[\"a.py::g\", \"a.py::zzz\"]]}'", dir);
  auto good = LlmMatcher(*good_model, LexicalMatcher(0.5));
  auto s = ScoreInstance(gt, &a, good);
  EXPECT_EQ(s.error, "");
  EXPECT_DOUBLE_EQ(*s.tasks.recall, 0.75);  // g now matched with zzz instead
  auto bad_model = model::CommandModel(util::RealEnv(), sandbox::RealLauncher(),
                                        "echo '{\"matches\": [[\"a.py::f\", \"nope\"]]}'", dir);
  auto bad = LlmMatcher(*bad_model, LexicalMatcher(0.5));
  auto e = ScoreInstance(gt, &a, bad);
  EXPECT_NE(e.error.find("no candidate"), std::string::npos) << e.error;
  EXPECT_FALSE(e.tasks.recall.has_value());
  (void)util::RealEnv().RemoveAll(dir);
}

}  // namespace
}  // namespace fbkit::groundtruth

// Issue-understanding judgements through --llm-cmd: asked only when both sides have texts
// and the agent file has none, answers range-checked, failures reported and left missing.
#include "groundtruth/judge.h"

#include <gtest/gtest.h>

#include "model/model.h"
#include "sandbox/process.h"
#include "tests/testing/run.h"

namespace fbkit::groundtruth {
namespace {

struct JudgeTest : ::testing::Test {
  void SetUp() override {
    gt.instance_id = "i1";
    gt.goal = "Add a --color option";
    gt.concepts = {"ANSI styles"};
    AgentInstance a;
    a.instance_id = "i1";
    a.goal = "Support colors";
    run.agent = "a";
    run.instances = {a};
  }
  std::vector<std::string> Judge(const std::string& cmd) {
    auto model = model::CommandModel(util::RealEnv(), sandbox::RealLauncher(), cmd, dir.path());
    return JudgeRun(*model, {gt}, &run);
  }
  testing::ScratchDir dir;
  GroundTruth gt;
  AgentRun run;
};

TEST_F(JudgeTest, AnswersFillMissingJudgements) {
  auto w = Judge("r=$(cat); echo \"$r\" | grep -q '\"task\":\"judge_understanding\"' && "
                 "echo \"$r\" | grep -q 'Support colors' && "
                 "echo '{\"goal_score\": 7, \"concept_recall\": 0.5, \"concept_accuracy\": null}'");
  EXPECT_TRUE(w.empty()) << w.front();
  EXPECT_EQ(run.instances[0].goal_score, 7.0);
  EXPECT_EQ(run.instances[0].concept_recall, 0.5);
  EXPECT_FALSE(run.instances[0].concept_accuracy.has_value());
}

TEST_F(JudgeTest, NothingIsAskedWithoutTextsOrWhenTheFileHasJudgements) {
  run.instances[0].goal.reset();
  EXPECT_TRUE(Judge("exit 1").empty());
  run.instances[0].goal = "x";
  run.instances[0].goal_score = 3;
  EXPECT_TRUE(Judge("exit 1").empty());
  EXPECT_EQ(run.instances[0].goal_score, 3.0);
  run.instances[0].goal_score.reset();
  gt.goal.reset();
  gt.concepts.clear();
  EXPECT_TRUE(Judge("exit 1").empty());
}

TEST_F(JudgeTest, BadAnswersAreWarningsAndStayMissing) {
  auto w = Judge("cat >/dev/null; echo '{\"goal_score\": 11, \"concept_recall\": 1}'");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "i1: judgements: --llm-cmd: goal_score out of range");
  EXPECT_FALSE(run.instances[0].goal_score.has_value());
  EXPECT_FALSE(run.instances[0].concept_recall.has_value());
  auto failed = Judge("exit 4");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_NE(failed[0].find("exited with 4"), std::string::npos) << failed[0];
}

}  // namespace
}  // namespace fbkit::groundtruth

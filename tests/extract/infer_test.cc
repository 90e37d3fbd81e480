#include "extract/infer.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/testing/run.h"

namespace fbkit::extract {
namespace {

using testing::ScratchDir;
using testing::WriteFileOrDie;

const std::string kTrajectories = std::string(FBKIT_SOURCE_DIR) + "/fixtures/agents/trajectories/";

// An instance directory whose output/ holds one trajectory file.
std::optional<Usage> UsageOfTrajectory(const std::string& name) {
  ScratchDir tmp;
  std::filesystem::create_directories(tmp / "output");
  std::filesystem::copy_file(kTrajectories + name, tmp / ("output/" + name));
  return ReadUsage(util::RealEnv(), tmp.path());
}

TEST(InferTest, CommandPlaceholders) {
  EXPECT_EQ(SubstituteCommand("agent --id {instance_id} --ws {workspace} < {problem_statement} {x}",
                              "a.lv1", "/w", "/p.md"),
            "agent --id a.lv1 --ws /w < /p.md {x}");
}

TEST(InferTest, SweAgentTrajectory) {
  auto u = UsageOfTrajectory("swe-agent.traj");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 7141);  // info.model_stats.tokens_sent
  EXPECT_EQ(u->output_tokens, 243);  // tokens_received
  EXPECT_NEAR(*u->cost, 0.01952, 1e-9);
  EXPECT_EQ(u->api_calls, 5);
  EXPECT_EQ(u->source, "output/swe-agent.traj");
}

TEST(InferTest, MiniSweAgentTrajectorySumsItsResponses) {
  auto u = UsageOfTrajectory("mini-swe-agent.traj.json");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 1500 + 1620);
  EXPECT_EQ(u->output_tokens, 40 + 25);
  EXPECT_NEAR(*u->cost, 0.0123, 1e-9);
  EXPECT_EQ(u->api_calls, 2);
}

TEST(InferTest, OpenHandsOutput) {
  auto u = UsageOfTrajectory("openhands-output.jsonl");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 565158);
  EXPECT_EQ(u->output_tokens, 2558);
  EXPECT_EQ(u->api_calls, 23);  // one token_usages entry per call
}

TEST(InferTest, UsageFileWinsAndBadFilesAreIgnored) {
  ScratchDir tmp;
  std::filesystem::create_directories(tmp / "output");
  WriteFileOrDie(tmp / "output/notes.json", "{\"hello\": 1}");
  WriteFileOrDie(tmp / "output/broken.traj", "{not json");
  EXPECT_FALSE(ReadUsage(util::RealEnv(), tmp.path()));
  // What the agent leaves are its files: a link to a trajectory elsewhere is not followed,
  // and a FIFO in usage.json's place does not hang the reader.
  std::filesystem::create_symlink(kTrajectories + "swe-agent.traj", tmp / "output/linked.traj");
  ASSERT_EQ(::mkfifo((tmp / "output/usage.json").c_str(), 0600), 0);
  EXPECT_FALSE(ReadUsage(util::RealEnv(), tmp.path()));
  std::filesystem::remove(tmp / "output/usage.json");
  std::filesystem::copy_file(kTrajectories + "swe-agent.traj", tmp / "output/a.traj");
  WriteFileOrDie(tmp / "output/usage.json", "{\"input_tokens\": 10, \"output_tokens\": 2}");
  auto u = ReadUsage(util::RealEnv(), tmp.path());
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 10);
  EXPECT_FALSE(u->cost);
  EXPECT_EQ(u->source, "usage.json");
  WriteFileOrDie(tmp / "output/usage.json", "{\"input_tokens\": \"many\", \"output_tokens\": 2}");
  EXPECT_EQ(ReadUsage(util::RealEnv(), tmp.path())->source, "output/a.traj");
}

TEST(InferTest, ResultRoundTrip) {
  InferResult r;
  r.instance_id = "x.lv2";
  r.level = 2;
  r.status = "timed_out";
  r.exit_code = -1;
  r.signal = 9;
  r.patch_sha256 = "abc";
  r.excluded = {"a.bin: binary"};
  r.usage = Usage{5, 6, 0.5, 3, "usage.json"};
  auto back = ParseInferResult(InferResultJson(r));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(InferResultJson(*back), InferResultJson(r));
  EXPECT_FALSE(ParseInferResult("{}").ok());
}

}  // namespace
}  // namespace fbkit::extract

// The --llm-cmd transport through a fake launcher: what the command is given and how its
// failures read.
#include "model/llm_cmd.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/testing/fake_launcher.h"
#include "tests/testing/run.h"

namespace fbkit::model {
namespace {

using testing::FakeLauncher;
using testing::ScratchDir;

// The request file the command reads on stdin: `< 'PATH'` in its sh -c line.
std::string RequestOf(const sandbox::ProcessSpec& spec) {
  const std::string& line = spec.argv.back();
  size_t b = line.find("< '") + 3;
  return testing::ReadFileOrDie(line.substr(b, line.find('\'', b) - b));
}

TEST(LlmCommandTest, TheRequestGoesInAndTheAnswerComesOut) {
  ScratchDir tmp;
  std::string seen;
  FakeLauncher fake([&](const sandbox::ProcessSpec& spec) -> std::optional<FakeLauncher::Outcome> {
    seen = RequestOf(spec);
    const std::string& line = spec.argv.back();
    size_t b = line.find("> '") + 3;
    std::ofstream(line.substr(b, line.find('\'', b) - b)) << "{\"purpose\": \"x\"}";
    return FakeLauncher::Exit(0);
  });
  auto answer = RunLlmCommand(util::RealEnv(), fake, "my-model", "{\"task\": \"purpose\"}", tmp / "w");
  ASSERT_TRUE(answer.ok()) << answer.error();
  EXPECT_EQ(*answer, "{\"purpose\": \"x\"}");
  EXPECT_EQ(seen, "{\"task\": \"purpose\"}");
  EXPECT_EQ(fake.answered().front().argv[0], "/bin/sh");
  EXPECT_TRUE(fake.answered().front().argv.back().starts_with("(my-model) < '"));
}

TEST(LlmCommandTest, FailuresSayWhatTheCommandSaid) {
  ScratchDir tmp;
  FakeLauncher refused([](const sandbox::ProcessSpec&) -> std::optional<FakeLauncher::Outcome> {
    return FakeLauncher::Exit(2, "endpoint refused the key\n");
  });
  auto r = RunLlmCommand(util::RealEnv(), refused, "my-model", "{}", tmp / "w");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "--llm-cmd exited with 2: endpoint refused the key\n");
  FakeLauncher silent([](const sandbox::ProcessSpec&) -> std::optional<FakeLauncher::Outcome> {
    return FakeLauncher::Exit(0);  // exits 0 without writing an answer
  });
  auto none = RunLlmCommand(util::RealEnv(), silent, "my-model", "{}", tmp / "w");
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(none.error().starts_with("--llm-cmd: ")) << none.error();
  EXPECT_TRUE(std::filesystem::is_empty(tmp / "w")) << "the exchanged files are removed";
}

}  // namespace
}  // namespace fbkit::model

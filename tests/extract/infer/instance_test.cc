#include "extract/infer/instance.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/testing/fake_launcher.h"
#include "tests/testing/run.h"

namespace fbkit::extract::infer {
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

// The agent CLIs' streams under output/<format>.jsonl give the usage; codex's model calls
// come from its session file beside them.
TEST(InferTest, AgentCliStreamsGiveUsage) {
  ScratchDir tmp;
  namespace fs = std::filesystem;
  fs::create_directories(tmp / "output/codex/sessions/2026/11/24");
  fs::copy_file(kTrajectories + "claude-code/stream.jsonl", tmp / "output/claude-code.jsonl");
  auto claude = ReadUsage(util::RealEnv(), tmp.path());
  ASSERT_TRUE(claude);
  EXPECT_EQ(claude->input_tokens, 7300);
  EXPECT_EQ(claude->output_tokens, 730);
  EXPECT_NEAR(*claude->cost, 0.03285, 1e-9);
  EXPECT_EQ(claude->api_calls, 3);
  EXPECT_EQ(claude->source, "output/claude-code.jsonl");
  fs::remove(tmp / "output/claude-code.jsonl");
  fs::copy_file(kTrajectories + "codex/events.jsonl", tmp / "output/codex.jsonl");
  auto codex = ReadUsage(util::RealEnv(), tmp.path());
  ASSERT_TRUE(codex);
  EXPECT_EQ(codex->input_tokens, 9900);
  EXPECT_EQ(codex->api_calls, -1) << "no session file yet";
  fs::copy_file(kTrajectories + "codex/rollout.jsonl", tmp / "output/codex/sessions/2026/11/24/rollout-x.jsonl");
  EXPECT_EQ(ReadUsage(util::RealEnv(), tmp.path())->api_calls, 5);  // its token_usage_records
  // A stream planted below output/ with a FIFO for "its" patch: read without blocking.
  fs::create_directories(tmp / "output/output");
  fs::copy_file(kTrajectories + "claude-code/stream.jsonl", tmp / "output/output/x.jsonl");
  WriteFileOrDie(tmp / "output/result.json", "{}");
  ASSERT_EQ(::mkfifo((tmp / "output/patch.diff").c_str(), 0600), 0);
  EXPECT_EQ(ReadUsage(util::RealEnv(), tmp.path())->source, "output/codex.jsonl");
  // A link planted in place of the session file is not followed.
  fs::remove(tmp / "output/codex/sessions/2026/11/24/rollout-x.jsonl");
  fs::create_symlink(kTrajectories + "codex/rollout.jsonl", tmp / "output/codex/sessions/2026/11/24/rollout-x.jsonl");
  EXPECT_EQ(ReadUsage(util::RealEnv(), tmp.path())->api_calls, -1);
}

InferOptions Agent(const std::string& cmd) {
  InferOptions o;
  o.agent_cmd = cmd;
  o.sandbox = sandbox::SandboxKind::kBwrap;
  o.run_dir = "/srv/fbkit-run";
  return o;
}

TEST(InferTest, AgentCommandsTheSandboxCannotShowAreRefusedBeforeAnyRun) {
  ScratchDir tmp;  // under /tmp: private inside the sandbox
  WriteFileOrDie(tmp / "agent.sh", "#!/bin/sh\n");
  ::chmod((tmp / "agent.sh").c_str(), 0755);
  auto hidden = CheckAgentCommand(util::RealEnv(), Agent("FOO=1 exec " + tmp / "agent.sh --fast"));
  ASSERT_FALSE(hidden.ok());
  EXPECT_NE(hidden.error().find("names " + tmp / "agent.sh" + ", which the agent will not see"),
            std::string::npos) << hidden.error();
  EXPECT_NE(hidden.error().find("--read-only"), std::string::npos);
  InferOptions shown = Agent("FOO=1 exec " + tmp / "agent.sh --fast");
  shown.read_only = {tmp.path()};
  EXPECT_TRUE(CheckAgentCommand(util::RealEnv(), shown).ok());
  // System programs, /dev and /proc, quoted words, paths that exist nowhere, expansions.
  EXPECT_TRUE(CheckAgentCommand(util::RealEnv(), Agent("sh -c 'python3 -V' < /dev/null > /proc/self/fd/1")).ok());
  EXPECT_TRUE(CheckAgentCommand(util::RealEnv(), Agent("/opt/none/agent; \"$HOME/bin/x\" {workspace}")).ok());
  EXPECT_FALSE(CheckAgentCommand(util::RealEnv(), Agent("true && cat '" + tmp / "agent.sh" + "'")).ok());
  // A redirection's target is not something to run; a --read-only over the run directory is.
  EXPECT_TRUE(CheckAgentCommand(util::RealEnv(), Agent("true > " + tmp / "agent.sh")).ok());
  InferOptions over = Agent("true");
  over.read_only = {"/srv"};
  auto exposed = CheckAgentCommand(util::RealEnv(), over);
  ASSERT_FALSE(exposed.ok());
  EXPECT_NE(exposed.error().find("would show the agent the run directory"), std::string::npos);
  // Without a sandbox nothing is hidden.
  InferOptions none = Agent(tmp / "agent.sh");
  none.sandbox = sandbox::SandboxKind::kNone;
  EXPECT_TRUE(CheckAgentCommand(util::RealEnv(), none).ok());
}
// RunAgent with the agent faked (FakeLauncher) and git real: what the agent is given, and
// how a command that did not start differs from an agent that exited 127 by itself.
struct FakeAgentRun {
  InferResult result;
  std::vector<sandbox::ProcessSpec> specs;  // the agent's (git's went to the real launcher)
  bool config_written_first = false;
};

// An L2 task t.lv2 under TMP/tasks and infer options (bwrap, run dir TMP/run) for `cmd`.
std::string WriteFakeTask(const ScratchDir& tmp, const std::string& cmd, InferOptions* o) {
  std::string task = tmp / "tasks/t.lv2";
  std::filesystem::create_directories(task);
  WriteFileOrDie(task + "/instance.json", R"({"instance_id": "t.lv2", "level": 2, "repo_settings": "{}"})");
  WriteFileOrDie(task + "/problem_statement.md", "Build it.\n");
  o->agent_cmd = cmd;
  o->sandbox = sandbox::SandboxKind::kBwrap;
  o->run_dir = tmp / "run";
  return task;
}

FakeAgentRun RunFakeAgent(const ScratchDir& tmp, testing::FakeLauncher::Outcome outcome) {
  namespace fs = std::filesystem;
  InferOptions o;
  std::string task = WriteFakeTask(tmp, "my-agent --task {instance_id}", &o);
  o.output_files = {{"home/.config/agent.toml", "model = \"m\"\n"}};
  FakeAgentRun run;
  testing::FakeLauncher fake(
      [&](const sandbox::ProcessSpec& spec) -> std::optional<testing::FakeLauncher::Outcome> {
        // The agent (sh -c CMD); git and fbkit's own shell steps run for real.
        if (spec.argv.size() != 3 || spec.argv[0] != "/bin/sh") return std::nullopt;
        run.config_written_first = fs::exists(tmp / "run/t.lv2/output/home/.config/agent.toml");
        return outcome;
      },
      &sandbox::RealLauncher());
  run.result = RunAgent(util::RealEnv(), fake, task, o);
  run.specs = fake.answered();
  return run;
}

TEST(InferTest, TheAgentGetsItsWorkspaceItsVariablesAndNothingElse) {
  ScratchDir tmp;
  FakeAgentRun run = RunFakeAgent(tmp, testing::FakeLauncher::Exit(0, "working\n"));
  ASSERT_EQ(run.specs.size(), 1u);
  const sandbox::ProcessSpec& spec = run.specs[0];
  EXPECT_EQ(spec.argv, (std::vector<std::string>{"/bin/sh", "-c", "my-agent --task t.lv2"}));
  EXPECT_EQ(spec.cwd, tmp / "run/t.lv2/workspace");
  EXPECT_EQ(spec.sandbox.writable, (std::vector<std::string>{tmp / "run/t.lv2/workspace", tmp / "run/t.lv2/output"}));
  EXPECT_NE(std::find(spec.sandbox.hidden.begin(), spec.sandbox.hidden.end(), tmp / "run"), spec.sandbox.hidden.end());
  auto has = [&](const std::string& k, const std::string& v) {
    return std::find(spec.vars.begin(), spec.vars.end(), std::pair<std::string, std::string>{k, v}) != spec.vars.end();
  };
  EXPECT_TRUE(has("FBKIT_INSTANCE_ID", "t.lv2"));
  EXPECT_TRUE(has("FBKIT_LEVEL", "2"));
  EXPECT_TRUE(has("FBKIT_OUTPUT_DIR", tmp / "run/t.lv2/output"));
  EXPECT_TRUE(has("GIT_CONFIG_KEY_0", "safe.directory")) << "git in a workspace owned by fbkit's user";
  EXPECT_TRUE(run.config_written_first);
  EXPECT_EQ(run.result.status, InferStatus::kFinished);
  EXPECT_EQ(testing::ReadFileOrDie(tmp / "run/t.lv2/agent.log"), "working\n");
}

TEST(InferTest, ACommandThatDidNotStartIsNotAnAgentsExit127) {
  ScratchDir tmp;
  FakeAgentRun gone = RunFakeAgent(tmp, testing::FakeLauncher::Exit(127, "sh: 1: my-agent: not found\n"));
  EXPECT_EQ(gone.result.status, InferStatus::kError);
  EXPECT_TRUE(gone.result.could_not_start);
  EXPECT_NE(gone.result.error.find("exit 127: sh: 1: my-agent: not found"), std::string::npos) << gone.result.error;
  EXPECT_NE(gone.result.error.find("--read-only"), std::string::npos);
  ScratchDir tmp2;
  FakeAgentRun own = RunFakeAgent(tmp2, testing::FakeLauncher::Exit(127, "agent: giving up\n"));
  EXPECT_EQ(own.result.status, InferStatus::kFinished);
  EXPECT_FALSE(own.result.could_not_start);
  EXPECT_EQ(own.result.exit_code, 127);
  // A wrapper that ran and passed on its last command's 127: not the outer shell's message.
  ScratchDir tmp3;
  FakeAgentRun wrapper = RunFakeAgent(
      tmp3, testing::FakeLauncher::Exit(127, "sh: 1: cd: can't cd to x\nrun.sh: 12: pytest: not found\n"));
  EXPECT_EQ(wrapper.result.status, InferStatus::kFinished);
  EXPECT_FALSE(wrapper.result.could_not_start);
}

}  // namespace
}  // namespace fbkit::extract::infer

namespace fbkit::extract::infer {
namespace {

// Once the agent has run, its workspace is the agent's: the patch is collected by git
// inside the sandbox (the fake launcher fails the test for a host-side process that names
// the workspace), and holds what the agent wrote.
TEST(InferTest, ThePatchIsCollectedInsideTheSandboxOnceTheAgentHasRun) {
  if (!sandbox::CheckBwrap().ok()) GTEST_SKIP() << sandbox::CheckBwrap().error();
  namespace fs = std::filesystem;
  ScratchDir tmp;
  InferOptions o;
  std::string task = WriteFakeTask(tmp, "my-agent", &o);
  std::string workspace = tmp / "run/t.lv2/workspace";
  bool agent_ran = false;
  testing::FakeLauncher fake(
      [&](const sandbox::ProcessSpec& spec) -> std::optional<testing::FakeLauncher::Outcome> {
        if (!spec.argv.empty() && spec.argv[0] == "/bin/sh") {
          fs::create_directories(workspace + "/agent_code");
          WriteFileOrDie(workspace + "/agent_code/__init__.py", "X = 1\n");
          agent_ran = true;
          return testing::FakeLauncher::Exit(0);
        }
        bool touches = spec.cwd.starts_with(workspace);
        for (const auto& a : spec.argv) touches = touches || a.find(workspace) != std::string::npos;
        if (agent_ran && touches && spec.sandbox.kind == sandbox::SandboxKind::kNone) {
          ADD_FAILURE() << "a host-side process over the agent's workspace: " << spec.argv[0];
        }
        return std::nullopt;
      },
      &sandbox::RealLauncher());
  InferResult r = RunAgent(util::RealEnv(), fake, task, o);
  EXPECT_EQ(r.status, InferStatus::kFinished) << r.error;
  EXPECT_NE(r.patch.find("+++ b/agent_code/__init__.py"), std::string::npos) << r.patch;
}

}  // namespace
}  // namespace fbkit::extract::infer

// The agent-log readers: what shell commands open and edit, and the trajectory formats.
#include "agents/trajectory.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/testing/run.h"

namespace fbkit::agents {
namespace {

// A format's name ("" for none), so that expectations read as files spell formats.
std::string Name(std::optional<TrajectoryFormat> f) { return f ? TrajectoryFormatName(*f) : ""; }

TrajectoryFormat F(const char* name) { return TrajectoryFormatFromName(name).value(); }


using Paths = std::vector<std::string>;

ShellEffects Shell(const std::string& cmd, std::string cwd = "/testbed") {
  return AnalyzeShell(cmd, &cwd);
}

TEST(AnalyzeShell, ViewsAndPipes) {
  auto e =
      Shell("cd /testbed && nl -ba src/a.py | sed -n '10,20p' && head -n 30 b.py && tail c.py");
  EXPECT_EQ(e.opened, (Paths{"/testbed/src/a.py", "/testbed/b.py", "/testbed/c.py"}));
  EXPECT_TRUE(e.edited.empty());
  EXPECT_EQ(Shell("sed -n '1,5p' x/y.py").opened, Paths{"/testbed/x/y.py"});
  EXPECT_TRUE(Shell("sed 's/a/b/' x.py").opened.empty()) << "only sed -n counts as a view";
  EXPECT_TRUE(Shell("grep -n foo a.py; find . -name '*.py'; python a.py").opened.empty());
}

TEST(AnalyzeShell, EditsRedirectionsAndHeredocs) {
  auto e =
      Shell("cat <<'EOF' > new.py\nimport os\ncat > not_a_file.py\nEOF\nsed -i 's/x/y/' a.py b.py");
  EXPECT_EQ(e.edited, (Paths{"/testbed/new.py", "/testbed/a.py", "/testbed/b.py"}));
  EXPECT_TRUE(e.opened.empty()) << "heredoc bodies are no commands";
  auto r = Shell(
      "python run.py > out.txt 2>&1; echo x >> log.txt; ls > /dev/null; echo y | tee -a t.py");
  EXPECT_EQ(r.edited, (Paths{"/testbed/out.txt", "/testbed/log.txt", "/testbed/t.py"}));
  EXPECT_TRUE(Shell("cp a.py b.py && mv c.py d.py && rm e.py").edited.empty());
}

TEST(AnalyzeShell, DirectoriesAndQuotes) {
  std::string cwd = "/repo";
  auto e = AnalyzeShell("cd sub && cat \"my file.py\" ../top.py", &cwd);
  EXPECT_EQ(e.opened, (Paths{"/repo/sub/my file.py", "/repo/top.py"}));
  EXPECT_EQ(cwd, "/repo/sub") << "cd moves the caller's cwd (persistent shells keep it)";
  EXPECT_TRUE(Shell("cat $HOME/x.py *.py ~/y.py").opened.empty()) << "unresolvable words";
}

TEST(TrajectoryFormat, EveryFormatHasOneNameThatReadsBack) {
  std::set<std::string> names;
  for (TrajectoryFormat f : TrajectoryFormats()) {
    std::string name = TrajectoryFormatName(f);
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(TrajectoryFormatFromName(name), f) << name;
  }
  EXPECT_EQ(names.size(), 8u);
  EXPECT_FALSE(TrajectoryFormatFromName("auto").has_value());
  EXPECT_FALSE(TrajectoryFormatFromName("").has_value());
}

TEST(DetectFormat, ByKeys) {
  EXPECT_EQ(Name(DetectFormat(R"({"info": {}, "messages": []})", "a.traj.json")), "mini-swe-agent");
  EXPECT_EQ(Name(DetectFormat(R"({"info": {}, "trajectory": [], "history": []})", "a.traj")),
            "swe-agent");
  EXPECT_EQ(Name(DetectFormat("{\"instance_id\": \"x\", \"history\": []}\n{}\n", "output.jsonl")),
            "openhands");
  EXPECT_EQ(Name(DetectFormat("[1, 2]", "x.traj")), "");
}

}  // namespace
}  // namespace fbkit::agents

namespace fbkit::agents {
namespace {

// Shapes of older writers, built after the research notes of fixtures/race_trajectories
// (no real file of these eras is committed upstream): OpenHands before 2024-09 kept
// [action, observation] pairs and edited through run_ipython file_editor / agentskills calls;
// SWE-agent's RetryAgent writes "attempts".
TEST(ReadTrajectories, OpenHandsPairsAndIpythonEdits) {
  std::string line =
      R"J({"instance_id": "o__r-1", "instruction": "<uploaded_files>\n/workspace/o__r__1.0\n</uploaded_files>",
    "test_result": {"git_patch": "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"},
    "metrics": {"accumulated_cost": 0.5, "response_latencies": [{}, {}]},
    "error": null,
    "history": [
      [{"id": 1, "action": "run_ipython", "args": {"code": "print(file_editor(**{'command': 'view', 'path': '/workspace/o__r__1.0/x.py'}))"}},
       {"id": 2, "cause": 1, "observation": "run_ipython", "content": "1 a"}],
      [{"id": 3, "action": "run_ipython", "args": {"code": "edit_file_by_replace('/workspace/o__r__1.0/x.py', to_replace='a', new_content='b')"}},
       {"id": 4, "cause": 3, "observation": "run_ipython", "content": "ok"}],
      [{"id": 5, "action": "run", "args": {"command": "cd sub && cat y.py"}},
       {"id": 6, "cause": 5, "observation": "run", "content": "", "extras": {"metadata": {"working_dir": "/workspace/o__r__1.0/sub"}}}],
      [{"id": 7, "action": "run", "args": {"command": "cat z.py"}},
       {"id": 8, "cause": 7, "observation": "run", "content": ""}],
      [{"id": 9, "action": "finish", "args": {}}, {"id": 10, "cause": 9, "observation": "null"}]
    ]})J";
  std::erase(line, '\n');  // one JSON Lines record
  auto t = ReadTrajectories(line + "\n", "output.jsonl", F("openhands"));
  ASSERT_TRUE(t.ok()) << t.error();
  ASSERT_EQ(t->size(), 1u);
  const Trajectory& r = t->front();
  EXPECT_EQ(r.root, "/workspace/o__r__1.0");
  EXPECT_EQ(r.opened, (std::vector<std::string>{"sub/y.py", "sub/z.py", "x.py"}))
      << "the shell is persistent: the second cat runs in sub/";
  EXPECT_EQ(r.edited, std::vector<std::string>{"x.py"});
  EXPECT_EQ(r.patch_files, std::vector<std::string>{"x.py"});
  EXPECT_EQ(r.api_calls, 2);
  EXPECT_EQ(r.exit_status, "finished");
}

TEST(ReadTrajectories, SweAgentAttemptsAndOpenFileEdits) {
  std::string traj = R"({"attempts": [{"trajectory": [
      {"action": "open \"src/a.py\"", "observation": "", "thought": "", "state": {"working_dir": "/r"}},
      {"action": "edit 1:1\nx = 1\nend_of_edit", "observation": "", "thought": "", "state": {"working_dir": "/r", "open_file": "/r/src/a.py"}},
      {"action": "create b.py", "observation": "", "thought": "", "state": {"working_dir": "/r"}},
      {"action": "insert 'y = 2'", "observation": "", "thought": "", "state": {"working_dir": "/r"}},
      {"action": "str_replace_editor view /r", "observation": "Here's the files and directories up to 2 levels deep", "thought": "", "state": {"working_dir": "/r"}},
      {"action": "find_file a.py", "observation": "", "thought": "", "state": {"working_dir": "/r"}}],
      "history": [], "info": {}}],
    "info": {"submission": "", "exit_status": "exit_cost", "model_stats": {"tokens_sent": 10, "tokens_received": 2, "api_calls": 6, "instance_cost": 0.1}}})";
  ASSERT_EQ(Name(DetectFormat(traj, "x.traj")), "swe-agent");
  auto t = ReadTrajectories(traj, "run/i-1/i-1.traj", F("swe-agent"));
  ASSERT_TRUE(t.ok()) << t.error();
  const Trajectory& r = t->front();
  EXPECT_EQ(r.instance_id, "i-1");
  EXPECT_EQ(r.root, "/r");
  EXPECT_EQ(r.opened, std::vector<std::string>{"src/a.py"}) << "a directory view is no open";
  EXPECT_EQ(r.edited, (std::vector<std::string>{"b.py", "src/a.py"}))
      << "edit and insert act on the file open at the time";
  EXPECT_EQ(r.exit_status, "exit_cost");
  EXPECT_EQ(r.prompt_tokens, 10);
  EXPECT_TRUE(r.patch_files.empty());
}

// mini-swe-agent's actions are read without a backtracking regex over the whole message: a
// 200,000-character bash block overflowed fbkit's stack (red team round 12).
TEST(ReadTrajectories, MiniSweAgentLongActionsAreRead) {
  std::string body(200000, 'x');
  nlohmann::json j = {
      {"info", {{"submission", ""}, {"exit_status", "Submitted"}, {"config", nlohmann::json::object()}}},
      {"messages",
       {{{"role", "assistant"}, {"content", "look\n```bash\ncat src/a.py\n```"}},
        {{"role", "assistant"}, {"content", "now\n```bash  \n\necho " + body + "\n```\ndone"}}}}};
  auto t = ReadTrajectories(j.dump(), "i.traj.json", F("mini-swe-agent"));
  ASSERT_TRUE(t.ok()) << t.error();
  const Trajectory& r = t->front();
  EXPECT_EQ(r.opened, std::vector<std::string>{"src/a.py"});
  bool long_action = false;
  for (const auto& turn : r.turns) long_action |= turn.action == "echo " + body;
  EXPECT_TRUE(long_action);
}

TEST(ReadTrajectories, BrokenInputNamesTheFileAndLine) {
  auto t = ReadTrajectories("{\"instance_id\": \"a\", \"history\": []}\n{oops\n",
                            "out/output.jsonl", F("openhands"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().find("out/output.jsonl:2:"), std::string::npos) << t.error();
  auto m = ReadTrajectories("{\"messages\": []}", "a.traj.json", F("mini-swe-agent"));
  ASSERT_FALSE(m.ok()) << "no info object";
  EXPECT_NE(m.error().find("a.traj.json"), std::string::npos) << m.error();
}

// ---- the agent CLIs' own streams (fixtures/agents/trajectories/<cli>/: real runs) ---------

const std::string kCliRuns = std::string(FBKIT_SOURCE_DIR) + "/fixtures/agents/trajectories/";

Trajectory ReadCliRun(const std::string& rel) {
  std::string text = testing::ReadFileOrDie(kCliRuns + rel);
  auto format = DetectFormat(text, rel);
  EXPECT_TRUE(format.has_value()) << rel;
  auto read = ReadTrajectories(text, kCliRuns + rel, format.value_or(TrajectoryFormat::kCodex));
  EXPECT_TRUE(read.ok()) << (read.ok() ? "" : read.error());
  EXPECT_EQ(read.ok() ? read->size() : 0u, 1u);
  return read.ok() && !read->empty() ? read->front() : Trajectory{};
}

TEST(AgentCliStreams, ClaudeCode) {
  Trajectory t = ReadCliRun("claude-code/stream.jsonl");
  EXPECT_EQ(Name(t.format), "claude-code");
  EXPECT_EQ(t.instance_id, "stream");  // not under an infer run's output/
  EXPECT_TRUE(t.root.ends_with("/workspace")) << t.root;  // system/init's cwd
  EXPECT_EQ(t.prompt_tokens, 7300);  // the result record's usage: the script's totals
  EXPECT_EQ(t.completion_tokens, 730);
  EXPECT_NEAR(*t.cost, 0.03285, 1e-9);
  EXPECT_EQ(t.api_calls, 3);  // distinct assistant messages
  EXPECT_EQ(t.exit_status, "success");
  ASSERT_EQ(t.turns.size(), 3u);  // two Bash calls, then the final text
  EXPECT_TRUE(t.turns[0].action.starts_with("git apply <<'FBKIT_PATCH_EOF'"));
  EXPECT_EQ(t.turns[1].action, "git status --short");
  EXPECT_NE(t.turns[1].observation.find("M src/shapes/stats.py"), std::string::npos);
  EXPECT_EQ(t.turns[2].thought, "Applied the feature.");
  // The transcript is no stream of its own (it would count the run twice).
  std::string transcript = testing::ReadFileOrDie(kCliRuns + "claude-code/transcript.jsonl");
  EXPECT_EQ(Name(DetectFormat(transcript, "t.jsonl")), "");
}

TEST(AgentCliStreams, Codex) {
  Trajectory t = ReadCliRun("codex/events.jsonl");
  EXPECT_EQ(Name(t.format), "codex");
  EXPECT_TRUE(t.root.ends_with(".lv1/workspace")) << t.root;  // from the file changes' paths
  EXPECT_EQ(t.prompt_tokens, 9900);  // turn.completed
  EXPECT_EQ(t.completion_tokens, 1055);
  EXPECT_FALSE(t.cost);
  EXPECT_FALSE(t.api_calls) << "the stream does not say; the session file does (ReadAgentStream)";
  EXPECT_EQ(t.exit_status, "completed");
  // `sed -n 1,20p src/shapes/stats.py` inside `bash -lc '...'`; apply_patch's file change.
  EXPECT_EQ(t.opened, std::vector<std::string>{"src/shapes/stats.py"});
  EXPECT_EQ(t.edited, std::vector<std::string>{"src/shapes/stats.py"});
  ASSERT_EQ(t.turns.size(), 5u);
  EXPECT_EQ(t.turns[0].action, "git status --short && sed -n 1,20p src/shapes/stats.py");
  EXPECT_TRUE(t.turns[2].action.starts_with("apply_patch update /")) << t.turns[2].action;
}

TEST(AgentCliStreams, GeminiCli) {
  Trajectory t = ReadCliRun("gemini-cli/stream.jsonl");
  EXPECT_EQ(Name(t.format), "gemini-cli");
  EXPECT_EQ(t.prompt_tokens, 5200);  // the result's stats
  EXPECT_EQ(t.completion_tokens, 377);
  EXPECT_EQ(t.api_calls, 3);  // model responses between tool results
  EXPECT_EQ(t.exit_status, "success");
  EXPECT_NE(t.problem_statement.find("implement `describe`"), std::string::npos);
  ASSERT_EQ(t.turns.size(), 3u);
  EXPECT_TRUE(t.turns[0].action.starts_with("git apply"));
  EXPECT_EQ(t.turns[1].observation, "count=2, mean=1.5, median=1.5, spread=0.5, low=1, high=2");
}

TEST(AgentCliStreams, ATruncatedOrBrokenStream) {
  // Killed before its result: no usage is made up, the status says so.
  std::string text = testing::ReadFileOrDie(kCliRuns + "gemini-cli/stream.jsonl");
  std::string cut = text.substr(0, text.rfind("{\"type\":\"result\""));
  auto read = ReadTrajectories(cut, "run/x/output/gemini-cli.jsonl", F("gemini-cli"));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->front().instance_id, "x");
  EXPECT_FALSE(read->front().prompt_tokens);
  EXPECT_EQ(read->front().exit_status, "incomplete: no result record");
  auto bad = ReadTrajectories(cut + "not json\n", "s.jsonl", F("gemini-cli"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("s.jsonl:8: not a JSON object"), std::string::npos) << bad.error();
}

}  // namespace
}  // namespace fbkit::agents

// End-to-end: `fb-extract infer --agent NAME` with the real coding-agent CLIs that setup.sh
// installed (FBKIT_AGENTS), offline, against fixtures/agents/model/scripted_model.py started
// in the agent's sandbox (--sidecar): the CLI runs the script's shell steps, the patch it
// leaves is scored by `eval`, its own logs give the usage the script reported, and
// `fb-race summarize` reads what it opened and edited. CLIs not installed are skipped (named).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/testing/e2e.h"
#include "tests/testing/run.h"

namespace fbkit::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kModel = kSource + "/fixtures/agents/model";
const std::string kSolved = "fbkit-fixtures__extract_features.ce05f7f2.test_stats.8a32a05c.lv1";
const std::string kUnsolved = "fbkit-fixtures__extract_features.ce05f7f2.test_vectors.60f006a0.lv1";

struct Cli {
  std::string name, installed, model, url_path, key_env;
  bool reports_cost = false;  // claude-code prices its tokens; mini-swe-agent says 0 for a
                              // model litellm cannot price; the others say nothing
};

void PrintTo(const Cli& cli, std::ostream* os) { *os << cli.name; }

std::string PrintName(const ::testing::TestParamInfo<Cli>& info) {
  std::string n = info.param.name;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

json Step(const std::string& what, const std::string& text, int in, int out) {
  return {{what, text}, {"usage", {{"input_tokens", in}, {"output_tokens", out}}}};
}

// The scripts: the solved task reads a module, applies the task's own patch, writes a note
// and finishes; the other reads the README and gives up.
void WriteScripts(const std::string& dir) {
  fs::create_directories(dir);
  std::string gold = ReadFileOrDie(kTasks + "/" + kSolved + "/patch.diff");
  json solved = {{"steps",
                  {Step("shell", "cat src/shapes/stats.py", 1000, 50),
                   Step("shell", "git apply <<'FBKIT_PATCH'\n" + gold + "FBKIT_PATCH", 1500, 700),
                   Step("shell", "echo 'describe() added' > NOTES.md", 1800, 40),
                   Step("say", "Implemented the feature.", 2000, 20)}}};
  json unsolved = {{"steps", {Step("shell", "cat README.md", 800, 30),
                              Step("say", "I could not finish this.", 900, 10)}}};
  std::ofstream(dir + "/" + kSolved + ".json") << solved.dump(1);
  std::ofstream(dir + "/" + kUnsolved + ".json") << unsolved.dump(1);
}

// RACE on an infer run of the two fixture tasks: the ground truth of each is its gold patch
// (its files necessary, its entity changes the tasks), the agent's tasks are back-inferred
// from its patch; the solved task is found whole, the other not at all.
void ExpectRaceScores(const std::string& run, const std::string& dir) {
  fs::create_directories(dir);
  json gts = json::array(), instances = json::array();
  for (const std::string& id : {kSolved, kUnsolved}) {
    std::string task = kTasks + "/" + id;
    RunResult head = RunCommand({"/usr/bin/git", "-C", task + "/presolved", "rev-parse", "HEAD"});
    ASSERT_EQ(head.exit_code, 0) << head.err;
    RunResult entities = RunCommand({kRace, "entities", task + "/presolved", "--base", "HEAD",
                                     "--patch", task + "/patch.diff"});
    ASSERT_EQ(entities.exit_code, 0) << entities.err;
    json e = json::parse(entities.out), tasks = json::array(), files = json::array();
    for (const auto& c : e["changes"]) {
      tasks.push_back({{"entity", c["entity"]}, {"change", c["change"]}, {"necessary", true}});
    }
    for (const auto& f : e["files"]) files.push_back(f["path"]);
    gts.push_back({{"instance_id", id}, {"tasks", tasks},
                   {"files", {{"necessary", files}, {"other", json::array()}, {"test", json::array()}}}});
    instances.push_back({{"instance_id", id}, {"repo", task + "/presolved"},
                         {"base_commit", head.out.substr(0, 40)},
                         {"patch", ReadFileOrDie(task + "/patch.diff")}});
  }
  std::string lines;
  for (const auto& i : instances) lines += i.dump() + "\n";
  WriteFileOrDie(dir + "/instances.jsonl", lines);
  WriteFileOrDie(dir + "/gt.json", gts.dump());
  RunResult summary = RunCommand({kRace, "summarize", run, "-q", "-o", dir + "/agent.json"});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  RunResult score = RunCommand({kRace, "score", "--gt", dir + "/gt.json", "--agent", dir + "/agent.json",
                                "--instances", dir + "/instances.jsonl", "--format", "json",
                                "--per-instance"});
  ASSERT_EQ(score.exit_code, 0) << score.err;
  for (const auto& i : json::parse(score.out)["agents"][0]["instances"]) {
    double want = i["instance_id"] == kSolved ? 1.0 : 0.0;
    EXPECT_EQ(i["files"]["recall"], want) << i.dump();
    EXPECT_EQ(i["tasks"]["recall"], want) << i.dump();
  }
}

class AgentCliE2E : public ::testing::TestWithParam<Cli> {};

TEST_P(AgentCliE2E, ScriptedModelSolvesWhatItsScriptSolvesWithItsUsageAndTrajectory) {
  const Cli& cli = GetParam();
  std::string installed = kSource + "/.deps/agents/" + cli.name + "/" + cli.installed;
  if (!fs::exists(installed)) {
    GTEST_SKIP() << cli.name << " is not installed (FBKIT_AGENTS=" << cli.name << " ./setup.sh)";
  }
  ScratchDir dir;
  WriteScripts(dir / "scripts");
  const std::string port = "18430";
  std::string sidecar = "/usr/bin/python3 " + kModel + "/scripted_model.py serve --port " + port +
                        " --scripts " + dir / "scripts" + " --log \"$FBKIT_OUTPUT_DIR/model.log\"";
  RunResult infer = RunCommand(
      {kExtract, "infer", kTasks, "--agent", cli.name, "--instance", kSolved, "--instance", kUnsolved,
       "-o", dir / "run", "-q", "--model", cli.model, "--model-url",
       "http://127.0.0.1:" + port + cli.url_path, "--env", cli.key_env + "=scripted",
       "--read-only", kModel, "--read-only", dir / "scripts", "--sidecar", sidecar, "--timeout", "300"});
  ASSERT_EQ(infer.exit_code, 0) << infer.err << infer.out;
  struct Want {
    int64_t in, out, calls;
  };
  for (const auto& [id, want] : std::map<std::string, Want>{{kSolved, {6300, 810, 4}},
                                                           {kUnsolved, {1700, 40, 2}}}) {
    std::string inst = dir / ("run/" + id);
    json result = json::parse(ReadFileOrDie(inst + "/result.json"));
    EXPECT_EQ(result["status"], "finished") << id << ReadFileOrDie(inst + "/agent.log");
    EXPECT_EQ(result["exit_code"], 0) << id << ReadFileOrDie(inst + "/agent.log");
    ASSERT_TRUE(result["usage"].is_object()) << id << result.dump(1);
    EXPECT_EQ(result["usage"]["input_tokens"], want.in) << id;
    EXPECT_EQ(result["usage"]["output_tokens"], want.out) << id;
    EXPECT_EQ(result["usage"]["api_calls"], want.calls) << id;
    std::string source = cli.name == "mini-swe-agent" ? id + ".traj.json"
                         : cli.name == "trae-agent"   ? cli.name + ".json"
                                                      : cli.name + ".jsonl";
    EXPECT_EQ(result["usage"]["source"], "output/" + source) << id;
    EXPECT_EQ(result["usage"]["cost"].is_number(), cli.reports_cost) << id;
  }
  EXPECT_NE(ReadFileOrDie(dir / ("run/" + kSolved + "/patch.diff")).find("+++ b/NOTES.md"), std::string::npos);
  EXPECT_EQ(ReadFileOrDie(dir / ("run/" + kUnsolved + "/patch.diff")), "");

  RunResult eval = RunCommand({kExtract, "eval", kTasks, "--predictions", dir / "run/predictions.jsonl",
                               "-o", dir / "eval", "-q"});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  json summary = json::parse(ReadFileOrDie(dir / "eval/summary.json"));
  EXPECT_EQ(summary["instances"], 2);
  EXPECT_EQ(summary["resolved"], 1) << summary.dump(1);
  EXPECT_TRUE(json::parse(ReadFileOrDie(dir / ("eval/" + kSolved + "/report.json")))["resolved"]);
  EXPECT_EQ(summary["instances_with_usage"], 2);
  EXPECT_EQ(summary["mean_input_tokens"], 4000.0);
  EXPECT_EQ(summary["mean_output_tokens"], 425.0);
  EXPECT_EQ(summary["mean_api_calls"], 3.0);
  EXPECT_EQ(summary["total_cost"].is_number(), cli.reports_cost);

  RunResult race = RunCommand({kRace, "summarize", dir / "run", "-q"});
  ASSERT_EQ(race.exit_code, 0) << race.err;
  json run = json::parse(race.out);
  ASSERT_EQ(run["instances"].size(), 2u) << race.out;
  for (const auto& i : run["instances"]) {
    const json& t = i["trajectory"];
    EXPECT_EQ(t["format"], cli.name);
    if (i["instance_id"] == kSolved) {
      EXPECT_EQ(t["opened"], json({"src/shapes/stats.py"})) << t.dump(1);
      EXPECT_EQ(t["edited"], json({"NOTES.md"})) << t.dump(1);
      EXPECT_EQ(t["tokens"]["prompt"], 6300);
      EXPECT_EQ(t["api_calls"], 4);
      EXPECT_NE(std::find(t["patch_files"].begin(), t["patch_files"].end(), "src/shapes/stats.py"),
                t["patch_files"].end());
    } else {
      EXPECT_EQ(i["instance_id"], kUnsolved);
      EXPECT_EQ(t["opened"], json({"README.md"})) << t.dump(1);
      EXPECT_EQ(t["edited"], json::array());
    }
  }
  if (cli.name == "trae-agent") ExpectRaceScores(dir / "run", dir / "race");
}

// AutoCodeRover (no tools: a conversation per role) walked by recorded replies
// (fixtures/agents/model/acr_script.py): the gold patch in its own patch format for one task,
// no patch for the other.
TEST(AutoCodeRoverE2E, ScriptedRepliesSolveWhatTheyPatchAndRaceScoresTheRun) {
  if (!fs::exists(kSource + "/.deps/agents/auto-code-rover/venv/bin/auto-code-rover")) {
    GTEST_SKIP() << "auto-code-rover is not installed (FBKIT_AGENTS=auto-code-rover ./setup.sh)";
  }
  ScratchDir dir;
  fs::create_directories(dir / "scripts");
  for (const auto& [id, args] : std::map<std::string, std::vector<std::string>>{
           {kSolved, {"--patch", kTasks + "/" + kSolved + "/patch.diff", "--location", "src/shapes/stats.py"}},
           {kUnsolved, {"--give-up", "--location", "src/shapes/vectors.py"}}}) {
    std::vector<std::string> argv = {kPython, kModel + "/acr_script.py", "--tokens", "100,10"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult script = RunCommand(argv);
    ASSERT_EQ(script.exit_code, 0) << script.err;
    WriteFileOrDie(dir / ("scripts/" + id + ".json"), script.out);
  }
  const std::string port = "18433";
  std::string sidecar = "/usr/bin/python3 " + kModel + "/scripted_model.py serve --port " + port +
                        " --scripts " + dir / "scripts" + " --log \"$FBKIT_OUTPUT_DIR/model.log\"";
  RunResult infer = RunCommand(
      {kExtract, "infer", kTasks, "--agent", "auto-code-rover", "--instance", kSolved, "--instance",
       kUnsolved, "-o", dir / "run", "-q", "--model", "gpt-4o-2024-05-13", "--model-url",
       "http://127.0.0.1:" + port + "/v1", "--env", "OPENAI_KEY=scripted", "--read-only", kModel,
       "--read-only", dir / "scripts", "--sidecar", sidecar, "--timeout", "300"});
  ASSERT_EQ(infer.exit_code, 0) << infer.err << infer.out;
  json solved = json::parse(ReadFileOrDie(dir / ("run/" + kSolved + "/result.json")));
  EXPECT_EQ(solved["status"], "finished");
  EXPECT_EQ(solved["usage"]["input_tokens"], 400) << "four calls: reproducer, search, proxy, patch";
  EXPECT_EQ(solved["usage"]["output_tokens"], 40);
  EXPECT_EQ(solved["usage"]["source"], "output/cost.json");
  EXPECT_EQ(ReadFileOrDie(dir / ("run/" + kUnsolved + "/patch.diff")), "");
  RunResult eval = RunCommand({kExtract, "eval", kTasks, "--predictions", dir / "run/predictions.jsonl",
                               "-o", dir / "eval", "-q"});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  json summary = json::parse(ReadFileOrDie(dir / "eval/summary.json"));
  EXPECT_EQ(summary["resolved"], 1) << summary.dump(1);
  EXPECT_TRUE(json::parse(ReadFileOrDie(dir / ("eval/" + kSolved + "/report.json")))["resolved"]);
  ExpectRaceScores(dir / "run", dir.path());
}

INSTANTIATE_TEST_SUITE_P(
    Installed, AgentCliE2E,
    ::testing::Values(
        Cli{"claude-code", "node_modules/.bin/claude", "claude-sonnet-4-5", "", "ANTHROPIC_API_KEY", true},
        Cli{"codex", "node_modules/.bin/codex", "gpt-5.5", "/v1", "OPENAI_API_KEY"},
        Cli{"gemini-cli", "node_modules/.bin/gemini", "gemini-2.5-pro", "", "GEMINI_API_KEY"},
        Cli{"mini-swe-agent", "venv/bin/mini", "openai/scripted", "/v1", "OPENAI_API_KEY", true},
        Cli{"trae-agent", "venv/bin/trae-cli", "openai/scripted", "/v1", "OPENAI_API_KEY"}),
    PrintName);

}  // namespace
}  // namespace fbkit::testing

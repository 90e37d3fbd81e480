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

const std::string kExtract = FBKIT_FB_EXTRACT;
const std::string kRace = FBKIT_FB_RACE;
const std::string kTasks = std::string(FBKIT_INFER_DATA) + "/tasks";
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

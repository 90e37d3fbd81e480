// End-to-end: `fb-race summarize` on trajectories trimmed from mini-swe-agent's, SWE-agent's
// and OpenHands' public example runs (fixtures/race_trajectories; expected.json was written by
// reading each trajectory's own tool calls), with and without a scripted summarizer, and the
// agent file it writes accepted by `fb-race score`.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/testing/e2e.h"
#include "tests/testing/run.h"
#include "tests/testing/scripted_model.h"

namespace fbkit::testing {
namespace {

using nlohmann::json;

json Summarize(const std::string& run, int expect_exit = 0) {
  auto r = RunCommand({kRace, "summarize", Fixture("race_trajectories/" + run), "-q"});
  EXPECT_EQ(r.exit_code, expect_exit) << r.err;
  return r.exit_code == 0 ? json::parse(r.out) : json();
}

TEST(RaceSummarize, ExtractsWhatTheTrajectoriesDo) {
  auto expected = json::parse(ReadFileOrDie(Fixture("race_trajectories/expected.json")));
  size_t checked = 0;
  for (const auto& [run, instances] : expected.items()) {
    json got = Summarize(run);
    ASSERT_TRUE(got.is_object()) << run;
    EXPECT_EQ(got["agent"], run);
    EXPECT_EQ(got["schema"], "fbkit.race-agent/1");
    ASSERT_EQ(got["instances"].size(), instances.size()) << run;
    for (const auto& g : got["instances"]) {
      const json& e = instances.at(g["instance_id"].get<std::string>());
      const json& t = g["trajectory"];
      std::string id = run + "/" + g["instance_id"].get<std::string>();
      EXPECT_EQ(t["opened"], e["opened"]) << id;
      EXPECT_EQ(t["edited"], e["edited"]) << id;
      EXPECT_EQ(t["patch_files"], e["patch_files"]) << id;
      EXPECT_EQ(t["root"], e["repo_root"]) << id;
      EXPECT_EQ(t["tokens"]["prompt"], e["tokens"]["prompt_tokens"]) << id;
      EXPECT_EQ(t["tokens"]["completion"], e["tokens"]["completion_tokens"]) << id;
      EXPECT_EQ(t["api_calls"], e["api_calls"]) << id;
      EXPECT_EQ(t["exit_status"], e["exit_status"]) << id;
      if (e["tokens"]["cost"].is_null()) {
        EXPECT_TRUE(t["cost"].is_null()) << id;
      } else {
        EXPECT_NEAR(t["cost"].get<double>(), e["tokens"]["cost"].get<double>(), 1e-6) << id;
      }
      EXPECT_EQ(!g["patch"].get<std::string>().empty(), e["patch_nonempty"].get<bool>()) << id;
      EXPECT_TRUE(g["files"].empty()) << "no model: nothing declared";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 11u);
}

TEST(RaceSummarize, DetectsEachFormatAndForcedFormatsMustMatch) {
  auto all =
      RunCommand({kRace, "summarize", Fixture("race_trajectories"), "-q", "--agent", "mixed"});
  ASSERT_EQ(all.exit_code, 3) << "two runs share an instance id: the second is reported";
  EXPECT_NE(all.err.find("instance SWE-agent__test-repo-i1 seen before"), std::string::npos)
      << all.err;
  EXPECT_EQ(json::parse(all.out)["instances"].size(), 8u);  // trae-agent and auto-code-rover ran the same two tasks
  auto forced = RunCommand(
      {kRace, "summarize", Fixture("race_trajectories/openhands"), "--format", "swe-agent", "-q"});
  EXPECT_EQ(forced.exit_code, 1) << forced.err;
  EXPECT_NE(forced.err.find("output.jsonl"), std::string::npos) << forced.err;
}

TEST(RaceSummarize, ModelSummaryFeedsScore) {
  ScratchDir dir;
  std::string llm =
      kPython +
      " -c \"import json,sys; r=json.load(sys.stdin); f=r['edited'][-1]; "
      "print(json.dumps({'goal': 'Fix the colon', 'concepts': ['syntax'], 'files': [f], "
      "'tasks': [{'entity': f + '::division', 'change': 'modified', 'purpose': 'divides'}], "
      "'steps': [{'type': 'change existing semantics', 'related_tasks': [f + '::division'], "
      "'description': 'repair ' + str(len(r['turns'])) + ' turns'}]}))\"";
  auto r = RunCommand({kRace, "summarize", Fixture("race_trajectories/swe-agent"), "--llm-cmd", llm,
                       "-o", dir / "agent.json", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto agent = json::parse(ReadFileOrDie(dir / "agent.json"));
  const json& inst = agent["instances"][0];
  EXPECT_EQ(inst["goal"], "Fix the colon");
  EXPECT_EQ(inst["files"], json::array({"tests/missing_colon.py"}));
  EXPECT_EQ(inst["steps"][0]["description"], "repair 5 turns") << "the request carries the turns";
  json gt = {{"instance_id", "SWE-agent__test-repo-i1"},
             {"files",
              {{"necessary", {"tests/missing_colon.py"}},
               {"other", json::array()},
               {"test", json::array()}}},
             {"tasks",
              {{{"entity", "tests/missing_colon.py::division"},
                {"change", "modified"},
                {"necessary", true}}}}};
  WriteFileOrDie(dir / "gt.json", gt.dump());
  auto s = RunCommand({kRace, "score", "--gt", dir / "gt.json", "--agent", dir / "agent.json",
                       "--format", "json", "--per-instance"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto scored = json::parse(s.out)["agents"][0]["instances"][0];
  EXPECT_EQ(scored["files"]["recall"], 1);
  EXPECT_EQ(scored["tasks"]["recall"], 1);
  EXPECT_EQ(scored["tasks"]["overpred"], 0);
}

TEST(RaceSummarize, BuiltInModelSummarizesAndJudges) {
  ScratchDir dir;
  std::string f = "tests/missing_colon.py";
  json summary = {{"goal", "Fix the colon"},
                  {"concepts", {"syntax"}},
                  {"files", {f}},
                  {"tasks", {{{"entity", f + "::division"}, {"change", "modified"}}}},
                  {"steps", {{{"type", "change existing semantics"},
                              {"related_tasks", {f + "::division"}},
                              {"description", "repair"}}}}};
  ScriptedModel server(dir / "model",
                       json::array({{{"match", "Step: summarise a coding agent"},
                                     {"text", summary.dump()},
                                     {"usage", {{"input_tokens", 900}, {"output_tokens", 90}}}},
                                    {{"match", "Step: match an agent's predictions"},
                                     {"text", R"({"matches": [["S1", "P1"]]})"},
                                     {"usage", {{"input_tokens", 50}, {"output_tokens", 5}}}},
                                    {{"match", "Step: judge an agent's understanding"},
                                     {"text", R"({"goal_score": 8, "concept_recall": 1, )"
                                              R"("concept_accuracy": 0.5})"},
                                     {"usage", {{"input_tokens", 100}, {"output_tokens", 10}}}}}));
  ASSERT_TRUE(server.ok());
  std::vector<std::string> llm = {"--llm", "gemini:scripted", "--llm-url", server.url(),
                                  "--llm-cache", dir / "cache"};
  auto summarize = [&](const std::string& out) {
    std::vector<std::string> argv = {kRace, "summarize", Fixture("race_trajectories/swe-agent"),
                                     "-o", dir / out, "-q"};
    argv.insert(argv.end(), llm.begin(), llm.end());
    return RunCommand(argv);
  };
  auto r = summarize("agent.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto agent = json::parse(ReadFileOrDie(dir / "agent.json"));
  EXPECT_EQ(agent["model"]["name"], "gemini:scripted");
  const json& inst = agent["instances"][0];
  EXPECT_EQ(inst["goal"], "Fix the colon");
  EXPECT_EQ(inst["steps"][0]["description"], "repair");
  size_t asked = server.requests().size();
  ASSERT_EQ(summarize("agent-2.json").exit_code, 0);
  EXPECT_EQ(server.requests().size(), asked);
  EXPECT_EQ(ReadFileOrDie(dir / "agent.json"), ReadFileOrDie(dir / "agent-2.json"));

  json gt = {{"instance_id", "SWE-agent__test-repo-i1"},
             {"goal", "Repair the division's syntax"},
             {"concepts", {"syntax error", "division"}},
             {"files", {{"necessary", {f}}, {"other", json::array()}, {"test", json::array()}}},
             {"tasks", {{{"entity", f + "::division"}, {"change", "modified"}, {"necessary", true}}}},
             {"steps", {{{"id", "S1"}, {"type", "change existing semantics"},
                         {"related_tasks", {f + "::division"}},
                         {"description", "Make the division parse"}}}}};
  WriteFileOrDie(dir / "gt.json", gt.dump());
  std::vector<std::string> argv = {kRace, "score", "--gt", dir / "gt.json", "--agent",
                                   dir / "agent.json", "--format", "json", "--per-instance"};
  argv.insert(argv.end(), llm.begin(), llm.end());
  auto s = RunCommand(argv);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto scores = json::parse(s.out);
  EXPECT_EQ(scores["agents"][0]["instances"][0]["judgements"],
            json({{"accuracy_concept", 0.5}, {"recall_concept", 1}, {"score_goal", 8}}))
      << s.out;
  const json& judge = scores["model"]["steps"]["fbkit.llm-judge/1 judge_understanding"];
  EXPECT_EQ(judge["answers"], 1) << scores["model"].dump();
  EXPECT_EQ(judge["input_tokens"], 100);
  EXPECT_EQ(judge["output_tokens"], 10);
  EXPECT_EQ(scores["model"]["steps"]["fbkit.llm-match/1 match_steps"]["answers"], 1);
  EXPECT_EQ(scores["agents"][0]["instances"][0]["steps"]["matched"], 1)
      << "the model matched the steps (their words differ)";
  asked = server.requests().size();
  auto again = RunCommand(argv);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, s.out);
  EXPECT_EQ(server.requests().size(), asked);
}

// Agents write these files: a field of the wrong type skips nothing but itself, a patch the
// agent names never replaces fbkit's diff of its workspace, a malformed file is named.
TEST(RaceSummarize, AgentsFilesAreReadWithoutTrust) {
  namespace fs = std::filesystem;
  ScratchDir dir;
  const std::string acr = "fbkit-fixtures__extract_features.ce05f7f2.test_stats.8a32a05c.lv1";
  fs::create_directories(dir / "acr");
  fs::copy(Fixture("race_trajectories/auto-code-rover/" + acr + "_2026-11-26_18-05-56"),
           dir / "acr/a", fs::copy_options::recursive);
  WriteFileOrDie(dir / "acr/a/output_0/search/tool_call_layers.json",
                 R"([[{"func_name": "f", "arguments": {}, "call_ok": "yes"}]])");
  WriteFileOrDie(dir / "acr/a/cost.json",
                 R"({"total_input_tokens": -5, "total_output_tokens": 1e300, "total_cost": 0})");
  auto read = RunCommand({kRace, "summarize", dir / "acr", "-q"});
  ASSERT_EQ(read.exit_code, 0) << read.err;
  json got = json::parse(read.out);
  const json& t = got["instances"][0]["trajectory"];
  EXPECT_TRUE(t["tokens"]["prompt"].is_null() && t["tokens"]["completion"].is_null()) << t.dump();

  // An infer run's instance: its patch.diff is the patch, not the agent's trae-agent.patch.
  fs::create_directories(dir / "run/inst1/output");
  WriteFileOrDie(dir / "run/inst1/result.json", "{}");
  WriteFileOrDie(dir / "run/inst1/patch.diff", "diff --git a/REAL.py b/REAL.py\n");
  fs::copy(Fixture("race_trajectories/trae-agent/" + acr + "/" + acr + ".json"),
           dir / "run/inst1/output/trae-agent.json");
  WriteFileOrDie(dir / "run/inst1/output/trae-agent.patch",
                 "diff --git a/FAKE.py b/FAKE.py\n--- a/FAKE.py\n+++ b/FAKE.py\n@@ -0,0 +1 @@\n+x\n");
  auto infer = RunCommand({kRace, "summarize", dir / "run", "-q"});
  ASSERT_EQ(infer.exit_code, 0) << infer.err;
  json run = json::parse(infer.out);
  const json& inst = run["instances"][0];
  EXPECT_EQ(inst["instance_id"], "inst1");
  EXPECT_EQ(inst["patch"], "diff --git a/REAL.py b/REAL.py\n");

  json bad = json::parse(ReadFileOrDie(dir / "run/inst1/output/trae-agent.json"));
  bad["agent_steps"] = json::array({"s", 3});
  fs::create_directories(dir / "bad/x");
  WriteFileOrDie(dir / "bad/x/x.json", bad.dump());
  auto named = RunCommand({kRace, "summarize", dir / "bad", "-q"});
  EXPECT_NE(named.exit_code, 0);
  EXPECT_NE(named.err.find("bad/x/x.json: "), std::string::npos) << named.err;
}

TEST(RaceSummarize, SweBenchEvaluationSetsAppliedAndResolved) {
  std::string eval = Fixture("race_trajectories/swebench-eval");
  auto mini = RunCommand({kRace, "summarize", Fixture("race_trajectories/mini-swe-agent"),
                          "--swebench-report", eval + "/logs", "-q"});
  ASSERT_EQ(mini.exit_code, 0) << mini.err;
  auto m = json::parse(mini.out)["instances"][0];
  EXPECT_EQ(m["applied"], true) << "report.json: patch_successfully_applied";
  EXPECT_EQ(m["resolved"], false);
  auto runs = RunCommand({kRace, "summarize", Fixture("race_trajectories/openhands"),
                          "--swebench-report", eval + "/deepseek__deepseek-chat.demo.json", "-q"});
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  auto o = json::parse(runs.out)["instances"];
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0]["instance_id"], "ponylang__ponyc-4588");
  EXPECT_EQ(o[0]["resolved"], false) << "in error_ids";
  EXPECT_FALSE(o[0].contains("applied")) << "an error says nothing about applying";
  EXPECT_FALSE(o[1].contains("resolved")) << "not in the report";
}

TEST(RaceSummarize, BadInputExitCodes) {
  ScratchDir dir;
  std::filesystem::create_directories(dir / "empty");
  std::filesystem::create_directories(dir / "broken/x");
  WriteFileOrDie(dir / "broken/x/x.traj", "{\"trajectory\": [");
  std::filesystem::copy(Fixture("race_trajectories/swe-agent"), dir / "broken/ok",
                        std::filesystem::copy_options::recursive);
  struct Case {
    std::vector<std::string> argv;
    int code;
    std::string message;
  };
  WriteFileOrDie(dir / "bad-report.json", R"({"resolved_ids": [1], "completed_ids": []})");
  std::string llm_bad = "echo '{\"steps\": [{\"type\": \"dance\", \"related_tasks\": []}]}'";
  std::vector<Case> cases = {
      {{kRace, "summarize", dir / "missing"}, 2, "missing"},
      {{kRace, "summarize", dir / "empty"}, 2, "no trajectory files"},
      {{kRace, "summarize", dir / "broken"}, 3, "x/x.traj"},
      {{kRace, "summarize", dir / "broken", "--format", "yaml"}, 2, "yaml"},
      {{kRace, "summarize", dir / "broken/ok", "--swebench-report", dir / "broken/x/x.traj"},
       2,
       "x.traj: not JSON"},
      {{kRace, "summarize", dir / "broken/ok", "--swebench-report", dir / "nope.json"},
       2,
       "nope.json"},
      {{kRace, "summarize", dir / "broken/ok", "--swebench-report", dir / "bad-report.json"},
       2,
       "bad-report.json: "},
      {{kRace, "summarize", Fixture("race_trajectories/swe-agent"), "--llm-cmd", llm_bad},
       3,
       "step P1 has type \"dance\""},
      {{kRace, "summarize", Fixture("race_trajectories/swe-agent"), "--llm-cmd", "exit 4"},
       3,
       "SWE-agent__test-repo-i1: --llm-cmd"},
  };
  for (const auto& c : cases) {
    auto r = RunCommand(c.argv);
    EXPECT_EQ(r.exit_code, c.code) << c.argv[2] << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
}

// An infer run's instances are read from their output/ only: a stream (with a result.json)
// the agent planted in its workspace or below its output/ does not become an instance.
TEST(RaceSummarize, AnAgentCannotPlantAnotherInstancesTrajectory) {
  namespace fs = std::filesystem;
  ScratchDir dir;
  std::string stream = ReadFileOrDie(Fixture("agents/trajectories/claude-code/stream.jsonl"));
  for (const std::string inst : {"run/a", "run/a/workspace/b", "run/a/output/c"}) {
    fs::create_directories(dir / (inst + "/output"));
    WriteFileOrDie(dir / (inst + "/result.json"), "{}");
    WriteFileOrDie(dir / (inst + "/patch.diff"), "");
    WriteFileOrDie(dir / (inst + "/output/claude-code.jsonl"), stream);
  }
  auto r = RunCommand({kRace, "summarize", dir / "run", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json run = json::parse(r.out);
  ASSERT_EQ(run["instances"].size(), 1u) << r.out;
  EXPECT_EQ(run["instances"][0]["instance_id"], "a");
}

}  // namespace
}  // namespace fbkit::testing

// End-to-end: the real fb-race binary on the race_history fixture (its git history is
// built by fixtures/race_history/make_history.sh at test time, and its ground truth made,
// once for all these tests by ctest's race_history_setup):
// ground truth, entities and validation compared with the expected JSON, the gold patch
// scored as an agent, steps and issue texts from files and from --llm-cmd, Lite, and bad
// input of every subcommand.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/testing/e2e.h"
#include "tests/testing/run.h"
#include "tests/testing/scripted_model.h"

namespace fbkit::testing {
namespace {


std::string Expected(const std::string& name) {
  return ReadFileOrDie(Fixture("race_history/expected/" + name));
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

class RaceE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    ASSERT_TRUE(std::filesystem::exists(History("gt.exit"))) << "run ctest (race_history_setup)";
    std::string commits = ReadFileOrDie(History("h/commits"));
    base_ = commits.substr(0, commits.find(' '));
    auto lines = Lines(ReadFileOrDie(History("h/instances.jsonl")));
    WriteFileOrDie(*dir_ / "race1.jsonl", lines.at(0) + "\n");
    gt_ = new RunResult();
    gt_->exit_code = std::stoi(ReadFileOrDie(History("gt.exit")));
    gt_->err = ReadFileOrDie(History("gt.err"));
  }
  static void TearDownTestSuite() {
    delete gt_;
    delete dir_;
  }
  // The shared history (h/: the repository, its instances and patches) and its ground truth
  // (gt/), made once by race_history_setup; read only.
  static std::string History(const std::string& path) {
    return std::string(FBKIT_RACE_HISTORY) + "/" + path;
  }
  static inline ScratchDir* dir_ = nullptr;
  static inline RunResult* gt_ = nullptr;
  static inline std::string base_;
};

TEST_F(RaceE2E, GroundTruthMatchesExpected) {
  ASSERT_EQ(gt_->exit_code, 0) << gt_->err;
  EXPECT_EQ(ReadFileOrDie(History("gt/race-1.json")), Expected("race-1.gt.json"));
  EXPECT_EQ(ReadFileOrDie(History("gt/files.jsonl")), Expected("race-1.files.jsonl"));
  auto v = Lines(ReadFileOrDie(History("gt/validation.jsonl")));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0] + "\n", Expected("race-1.validation.json"));
  auto r2 = nlohmann::json::parse(v[1]);
  EXPECT_EQ(r2["status"], "discarded");
  EXPECT_EQ(r2["reason"], "no test goes from failing to passing");
  EXPECT_EQ(r2["PASS_TO_PASS"].size(), 5u);
  auto r3 = nlohmann::json::parse(v[2]);
  EXPECT_EQ(r3["status"], "discarded");
  EXPECT_EQ(r3["reason"].get<std::string>().substr(0, 33), "the gold patch does not apply: er");
  std::ifstream missing(History("gt/race-2.json"));
  EXPECT_FALSE(missing.good()) << "a discarded instance gets no ground truth";
}

TEST_F(RaceE2E, EntitiesMatchExpected) {
  auto r = RunCommand({kRace, "entities", History("h/repo"), "--base", base_, "--patch",
                       History("h/race-1.patch")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, Expected("race-1.entities.json"));
}

TEST_F(RaceE2E, ValidateWithRepeatAgrees) {
  auto r = RunCommand({kRace, "validate", *dir_ / "race1.jsonl", "--python", kPython, "--repeat",
                       "2", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, Expected("race-1.validation.json"));
}

TEST_F(RaceE2E, FilesFromAnEarlierValidation) {
  WriteFileOrDie(*dir_ / "val.jsonl", Expected("race-1.validation.json"));
  auto r = RunCommand({kRace, "files", *dir_ / "race1.jsonl", "--python", kPython,
                       "--validation", *dir_ / "val.jsonl", "-q", "--no-entities"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["files"]["necessary"], nlohmann::json::parse(R"(["calc/core.py","calc/fmt.py"])"));
  for (const auto& t : j["tasks"]) EXPECT_EQ(t["necessary"], "unknown");
}

TEST_F(RaceE2E, GoldPatchAsAgentScoresPerfectly) {
  ASSERT_EQ(gt_->exit_code, 0);
  auto inst = nlohmann::json::parse(Lines(ReadFileOrDie(*dir_ / "race1.jsonl"))[0]);
  nlohmann::json agent = {{"agent", "gold"},
                          {"instances", {{{"instance_id", "race-1"}, {"patch", inst["patch"]},
                                          {"resolved", true}}}}};
  WriteFileOrDie(*dir_ / "gold.json", agent.dump());
  auto r = RunCommand({kRace, "score", "--gt", History("gt"), "--agent", *dir_ / "gold.json",
                       "--instances", *dir_ / "race1.jsonl", "--format", "json",
                       "--per-instance"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = nlohmann::json::parse(r.out)["agents"][0]["instances"][0];
  EXPECT_EQ(s["applied"], true);
  EXPECT_EQ(s["files"]["recall"], 1);
  EXPECT_EQ(s["files"]["overpred"], 0);
  EXPECT_EQ(s["tasks"]["recall"], 1);
  EXPECT_EQ(s["tasks"]["overpred"], 0);
  EXPECT_EQ(s["tasks"]["truth"], 8);
  auto table = RunCommand({kRace, "score", "--gt", History("gt/race-1.json"), "--agent",
                           *dir_ / "gold.json", "--instances", *dir_ / "race1.jsonl"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("gold   All                              1    100.0      0.0    100.0      0.0"),
            std::string::npos)
      << table.out;
}

TEST_F(RaceE2E, StepsAndIssueFromFilesAndLlm) {
  WriteFileOrDie(*dir_ / "steps.jsonl",
                 R"({"instance_id": "race-1", "steps": [{"type": "introduce new capability", )"
                 R"("related_tasks": ["calc/core.py::power"], "description": "Add power"}]})"
                 "\n");
  WriteFileOrDie(*dir_ / "issue.json",
                 R"([{"instance_id": "race-1", "goal": "Powers work", "concepts": ["power"]}])");
  auto r = RunCommand({kRace, "gt", *dir_ / "race1.jsonl", "--python", kPython, "-o",
                       *dir_ / "gt-steps", "-q", "--no-entities", "--steps", *dir_ / "steps.jsonl",
                       "--issue", *dir_ / "issue.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto g = nlohmann::json::parse(ReadFileOrDie(*dir_ / "gt-steps/race-1.json"));
  EXPECT_EQ(g["steps"][0]["id"], "S1");
  EXPECT_EQ(g["goal"], "Powers work");
  EXPECT_EQ(g["concepts"][0], "power");
  // The model answers a step naming no task: rejected, the ground truth stays without steps.
  std::string llm = kPython + " -c \"import json,sys; r=json.load(sys.stdin); print(json.dumps("
                    "{'steps': [{'type': 'introduce new capability', 'related_tasks': ['x.py::nope']}]}"
                    " if r['task']=='steps' else {'goal': 'G', 'concepts': []}))\"";
  auto bad = RunCommand({kRace, "gt", *dir_ / "race1.jsonl", "--python", kPython, "-o",
                         *dir_ / "gt-llm", "-q", "--no-entities", "--llm-cmd", llm});
  EXPECT_EQ(bad.exit_code, 3) << bad.err;
  EXPECT_NE(bad.err.find("steps: --llm-cmd: step S1 names x.py::nope, which is no task"),
            std::string::npos)
      << bad.err;
  auto g2 = nlohmann::json::parse(ReadFileOrDie(*dir_ / "gt-llm/race-1.json"));
  EXPECT_TRUE(g2["steps"].empty());
  EXPECT_EQ(g2["goal"], "G");
}

TEST_F(RaceE2E, BuiltInModelWritesStepsIssueTextsAndPurposesThenTheCacheDoes) {
  using nlohmann::json;
  ScriptedModel server(*dir_ / "model",
                       json::array({{{"match", "Step: order a feature PR"},
                                     {"text", R"({"steps": [{"type": "introduce new capability", )"
                                              R"("related_tasks": ["calc/core.py::power"], )"
                                              R"("description": "Add power"}]})"}},
                                    {{"match", "Step: the goal and the key concepts"},
                                     {"text", R"({"goal": "Powers work", "concepts": ["power"]})"}},
                                    {{"match", "\"entity\": \"calc/core.py::power\""},
                                     {"text", R"({"purpose": "Raises a number to a power"})"}},
                                    {{"match", "Step: the purpose"},
                                     {"text", R"({"purpose": "Serves the feature"})"}}}));
  ASSERT_TRUE(server.ok());
  auto gt = [&](const std::string& out) {
    return RunCommand({kRace, "gt", *dir_ / "race1.jsonl", "--python", kPython, "-o", *dir_ / out,
                       "-q", "--no-entities", "--llm", "anthropic:scripted", "--llm-url",
                       server.url(), "--llm-cache", *dir_ / "gt-cache"});
  };
  auto r = gt("gt-model");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t asked = server.requests().size();
  auto g = json::parse(ReadFileOrDie(*dir_ / "gt-model/race-1.json"));
  EXPECT_EQ(g["steps"][0]["related_tasks"], json::array({"calc/core.py::power"}));
  EXPECT_EQ(g["goal"], "Powers work");
  EXPECT_EQ(g["model"]["name"], "anthropic:scripted");
  for (const auto& t : g["tasks"]) {
    EXPECT_EQ(t["purpose"], t["entity"] == "calc/core.py::power" ? "Raises a number to a power"
                                                                  : "Serves the feature")
        << t.dump();
  }
  auto again = gt("gt-model-2");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(server.requests().size(), asked) << "the second run is served from the cache";
  EXPECT_EQ(ReadFileOrDie(*dir_ / "gt-model/race-1.json"),
            ReadFileOrDie(*dir_ / "gt-model-2/race-1.json"));
}

TEST_F(RaceE2E, LiteIsDeterministic) {
  for (int k = 0; k < 2; ++k) {
    nlohmann::json run = {{"agent", "a" + std::to_string(k)}, {"instances", nlohmann::json::array()}};
    for (int i = 0; i < 30; ++i) {
      run["instances"].push_back({{"instance_id", "i" + std::to_string(i)},
                                  {"resolved", (i + k) % 3 == 0},
                                  {"applied", i % 4 != k}});
    }
    WriteFileOrDie(*dir_ / ("lite" + std::to_string(k) + ".json"), run.dump());
  }
  std::vector<std::string> argv = {kRace, "lite", "--results", *dir_ / "lite0.json",
                                   *dir_ / "lite1.json", "--size", "9", "--seed", "3"};
  auto a = RunCommand(argv), b = RunCommand(argv);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  auto j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j["instances"].size(), 9u);
  EXPECT_NE(a.err.find("deviation reached"), std::string::npos);
}

TEST_F(RaceE2E, BadInputExitCodes) {
  WriteFileOrDie(*dir_ / "bad.json", "{\"instance_id\": \"x\"}\n{broken\n");
  WriteFileOrDie(*dir_ / "notdiff.patch", "hello\n");
  WriteFileOrDie(*dir_ / "small.json",
                 R"([{"instance_id": "a", "applied": true, "resolved": false}])");
  struct Case {
    std::vector<std::string> argv;
    int code;
    std::string message;
  };
  std::vector<Case> cases = {
      {{kRace}, 2, ""},
      {{kRace, "entities", History("h/repo"), "--base", base_, "--patch", *dir_ / "nope.patch"}, 2,
       "nope.patch"},
      {{kRace, "entities", History("h/repo"), "--base", base_, "--patch", *dir_ / "notdiff.patch"}, 2,
       "not a unified diff"},
      {{kRace, "entities", History("h/repo"), "--base", "deadbeef", "--patch",
        History("h/race-1.patch")}, 2, "deadbeef"},
      {{kRace, "score", "--gt", *dir_ / "bad.json", "--agent", *dir_ / "bad.json"}, 2,
       "bad.json:2: invalid JSON"},
      {{kRace, "score", "--gt", History("gt"), "--agent", *dir_ / "missing.json"}, 2, "missing.json"},
      {{kRace, "score", "--gt", History("gt"), "--agent", *dir_ / "bad.json", "--format", "xml"}, 2, ""},
      {{kRace, "validate", *dir_ / "bad.json"}, 2, "bad.json:2"},
      {{kRace, "validate", History("gt/race-1.json")}, 2, "record 1"},
      {{kRace, "files", *dir_ / "missing.jsonl"}, 2, "missing.jsonl"},
      {{kRace, "gt", *dir_ / "race1.jsonl"}, 2, "--output"},
      {{kRace, "gt", *dir_ / "race1.jsonl", "-o", *dir_ / "x", "--steps", *dir_ / "bad.json"}, 2,
       "bad.json:2"},
      {{kRace, "lite", "--results", *dir_ / "bad.json", "--size", "1"}, 2, "bad.json:2"},
      {{kRace, "lite", "--results", *dir_ / "small.json", "--size", "500"}, 2, "cannot choose 500 of 1"},
      {{kRace, "gt", *dir_ / "race1.jsonl", "-o", *dir_ / "x", "--llm", "claude"}, 2,
       "--llm claude: expected PROVIDER:MODEL"},
      {{kRace, "score", "--gt", History("gt"), "--agent", *dir_ / "small.json", "--llm-cache",
        *dir_ / "c"}, 2, "--llm-cache needs --llm"},
      {{kRace, "mine", History("h/repo"), "--llm", "cohere:x"}, 2, "unknown provider 'cohere'"},
      {{kRace, "summarize", Fixture("race_trajectories/swe-agent"), "--llm", "openai:m", "--llm-offline",
        "--llm-cache", *dir_ / "empty-cache"}, 3, "no cached answer"},
  };
  for (const auto& c : cases) {
    auto r = RunCommand(c.argv);
    std::string cmd;
    for (const auto& a : c.argv) cmd += " " + a;
    EXPECT_EQ(r.exit_code, c.code) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << cmd << "\n" << r.err;
  }
  // One instance whose repository is missing fails alone; the others are still validated.
  std::string lines = ReadFileOrDie(*dir_ / "race1.jsonl");
  auto j = nlohmann::json::parse(lines);
  j["instance_id"] = "lost";
  j["repo"] = *dir_ / "no-such-repo";
  WriteFileOrDie(*dir_ / "mixed.jsonl", j.dump() + "\n" + lines);
  auto mixed = RunCommand({kRace, "validate", *dir_ / "mixed.jsonl", "--python", kPython, "-q"});
  EXPECT_EQ(mixed.exit_code, 1);
  auto out = Lines(mixed.out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(out[0])["status"], "error");
  EXPECT_EQ(nlohmann::json::parse(out[1])["status"], "ok");
}

}  // namespace
}  // namespace fbkit::testing

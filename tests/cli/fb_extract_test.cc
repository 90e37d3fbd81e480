// End-to-end: fb-graph trace + build, then fb-extract on the extract_features fixture (a
// git repository of its own, made once by tests/cli/make_extract.sh); every emitted task is checked
// independently with plain pytest and pyflakes (bench/check_tasks.py), patches are compared with
// the expected ones, and bad input gets clear errors and non-zero exits.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/testing/e2e.h"
#include "tests/testing/run.h"
#include "tests/testing/scripted_model.h"

namespace fbkit::testing {
namespace {

const std::string kData = FBKIT_EXTRACT_DATA;

// One traced copy of the fixture and one `fb-extract all` run over it, made once by
// tests/cli/make_extract.sh (ctest fixture e2e_data, setup extract_run_setup) and only read here; what a test
// writes goes to its own scratch directory.
class ExtractE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    root_ = kData + "/extract_features";
    ASSERT_TRUE(std::filesystem::exists(kData + "/all.exit")) << "run ctest (extract_run_setup)";
    all_ = new RunResult();
    all_->exit_code = std::stoi(ReadFileOrDie(kData + "/all.exit"));
    all_->err = ReadFileOrDie(kData + "/all.err");
  }
  static void TearDownTestSuite() {
    delete all_;
    delete dir_;
  }

  static std::string Commit8() {
    std::string head = RunCommand({"/usr/bin/git", "-C", root_, "rev-parse", "HEAD"}).out;
    EXPECT_EQ(head.size(), 41u) << "the fixture copy is no git repository";
    return head.substr(0, 8);
  }

  static std::vector<std::string> Args(const std::string& cmd, const std::string& out,
                                       std::vector<std::string> extra) {
    std::vector<std::string> argv = {kExtract,
                                     cmd,
                                     root_,
                                     "--graph",
                                     kData + "/graph.json",
                                     "--trace",
                                     kData + "/trace.json",
                                     "-o",
                                     out,
                                     "--python",
                                     kPython,
                                     "--min-lines",
                                     "5",
                                     "--p2p",
                                     "3",
                                     "-q"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  static std::vector<std::string> Tasks(const std::string& out) {
    std::vector<std::string> ids;
    for (const auto& e : std::filesystem::directory_iterator(out)) {
      if (std::filesystem::exists(e.path() / "instance.json")) ids.push_back(e.path().filename());
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  static inline ScratchDir* dir_ = nullptr;
  static inline std::string root_;
  static inline RunResult* all_ = nullptr;
};

TEST_F(ExtractE2E, AllEmitsATaskForEveryFeatureOfTheFixture) {
  ASSERT_EQ(all_->exit_code, 0) << all_->err;
  auto summary = nlohmann::json::parse(ReadFileOrDie(kData + "/out/summary.json"));
  EXPECT_EQ(summary["candidates"], 10);
  EXPECT_EQ(summary["emitted"], 10) << summary.dump();
  std::set<std::string> stems;
  for (const auto& id : Tasks(kData + "/out")) {
    // "local/<directory>" without an origin; the copy's own commit, never fbkit's.
    EXPECT_TRUE(id.starts_with("local__extract_features." + Commit8() + ".test_")) << id;
    if (id.ends_with(".lv1")) stems.insert(id.substr(0, id.rfind('.', id.size() - 5)));
  }
  EXPECT_EQ(stems.size(), 10u);
}

TEST_F(ExtractE2E, EveryTaskBehavesAsPromisedUnderPlainPytestAndPyflakes) {
  ASSERT_EQ(all_->exit_code, 0);
  auto check =
      RunCommand({kPython, kSource + "/bench/check_tasks.py", kData + "/out", "--python", kPython});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find(" 0 failed"), std::string::npos) << check.out;
}

// A task whose check cannot run (its patch does not apply) is that task's failure; the
// others are still checked.
TEST_F(ExtractE2E, ACheckThatCannotRunFailsItsTaskAndTheOthersGoOn) {
  ASSERT_EQ(all_->exit_code, 0);
  ScratchDir dir;
  std::vector<std::string> lv1;
  for (const auto& id : Tasks(kData + "/out")) {
    if (id.ends_with(".lv1") && lv1.size() < 2) lv1.push_back(id);
  }
  ASSERT_EQ(lv1.size(), 2u);
  for (const auto& id : lv1) {
    std::filesystem::copy(kData + "/out/" + id, dir / id, std::filesystem::copy_options::recursive);
  }
  WriteFileOrDie(dir / (lv1[0] + "/patch.diff"), "diff --git a/x b/x\nnot a patch\n");
  auto check = RunCommand({kPython, kSource + "/bench/check_tasks.py", dir.path(), "--python",
                           kPython});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.out.find("FAIL " + lv1[0]), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("check could not run: git apply"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("ok   " + lv1[1]), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("2 tasks checked, 1 ok, 1 failed"), std::string::npos) << check.out;
}

TEST_F(ExtractE2E, GoldPatchesAreTheExpectedOnes) {
  ASSERT_EQ(all_->exit_code, 0);
  std::string expected_dir = kSource + "/tests/cli/expected/extract_features";
  bool update = std::getenv("FBKIT_UPDATE_EXPECTED") != nullptr;
  for (const auto& id : Tasks(kData + "/out")) {
    std::string stem = id.substr(std::string("local__extract_features." + Commit8() + ".").size());
    stem = stem.substr(0, stem.find('.')) + id.substr(id.size() - 4);  // test_x.lv1
    for (const std::string file : {"patch.diff", "test_patch.diff"}) {
      std::string got = ReadFileOrDie((kData + "/out/" + id + "/" + std::string(file)));
      std::string want_path = expected_dir + "/" + stem + "." + file;
      if (update) {
        std::filesystem::create_directories(expected_dir);
        WriteFileOrDie(want_path, got);
        continue;
      }
      ASSERT_TRUE(std::filesystem::exists(want_path)) << want_path;
      EXPECT_EQ(got, ReadFileOrDie(want_path)) << id << " " << file;
    }
  }
}

TEST_F(ExtractE2E, InstanceJsonHasTheFeatureBenchFields) {
  ASSERT_EQ(all_->exit_code, 0);
  for (const auto& id : Tasks(kData + "/out")) {
    auto inst = nlohmann::json::parse(
        ReadFileOrDie((kData + "/out/" + id + "/" + std::string("instance.json"))));
    for (const char* key : {"instance_id",     "repo",         "base_commit",  "patch",
                            "test_patch",      "FAIL_TO_PASS", "PASS_TO_PASS", "problem_statement",
                            "repo_settings",   "image_name",   "top_objects",  "extracted",
                            "lines",           "files",        "functions",    "f2p_test_points",
                            "p2p_test_points", "level",        "f2p_tests",    "p2p_tests",
                            "extracted_files", "create_time",  "upd_time"}) {
      EXPECT_TRUE(inst.contains(key)) << id << " lacks " << key;
    }
    EXPECT_EQ(inst["instance_id"], id);
    // FeatureBench's types: counts are numbers; an L2 task has no P2P tests.
    bool l1 = id.ends_with(".lv1");
    EXPECT_EQ(inst["PASS_TO_PASS"].size(), l1 ? 3u : 0u);
    EXPECT_GE(inst["f2p_tests"].size(), 10u);
    EXPECT_EQ(inst["f2p_test_points"], inst["f2p_tests"].size());
    EXPECT_EQ(inst["p2p_test_points"], inst["p2p_tests"].size());
    EXPECT_EQ(inst["files"], inst["extracted_files"].size());
    EXPECT_EQ(inst["schema"], "fbkit.task/2");
    EXPECT_EQ(inst["patch"],
              ReadFileOrDie((kData + "/out/" + id + "/" + std::string("patch.diff"))));
    std::string statement =
        ReadFileOrDie((kData + "/out/" + id + "/" + std::string("problem_statement.md")));
    EXPECT_NE(statement.find("## Interface Descriptions"), std::string::npos);
    EXPECT_NE(statement.find("```python\n"), std::string::npos);
    // The F2P file is not in the pre-solved codebase of an L1 task.
    if (id.ends_with(".lv1")) {
      EXPECT_FALSE(std::filesystem::exists(
          (kData + "/out/" + id + "/presolved/" + inst["FAIL_TO_PASS"][0].get<std::string>())));
    }
  }
}

TEST_F(ExtractE2E, L2TestPatchRedirectsTheConftestThatBuildsThePackagesObjects) {
  ASSERT_EQ(all_->exit_code, 0);
  bool seen = false;
  for (const auto& id : Tasks(kData + "/out")) {
    if (id.find(".test_vectors.") == std::string::npos || !id.ends_with(".lv2")) continue;
    seen = true;
    std::string tp = ReadFileOrDie((kData + "/out/" + id + "/test_patch.diff"));
    EXPECT_NE(tp.find("--- a/tests/conftest.py\n+++ b/tests/conftest.py"), std::string::npos) << tp;
    EXPECT_NE(tp.find("-from shapes.geometry import Point\n+from agent_code.geometry import Point"),
              std::string::npos)
        << tp;
    std::string statement = ReadFileOrDie((kData + "/out/" + id + "/problem_statement.md"));
    EXPECT_NE(statement.find("`from agent_code.geometry import Point`"), std::string::npos)
        << statement;
  }
  EXPECT_TRUE(seen) << "no L2 task of test_vectors.py";
}

TEST_F(ExtractE2E, EveryInterfaceHasADescription) {
  ASSERT_EQ(all_->exit_code, 0);
  for (const auto& id : Tasks(kData + "/out")) {
    std::string statement = ReadFileOrDie((kData + "/out/" + id + "/problem_statement.md"));
    EXPECT_EQ(statement.find("no docstring"), std::string::npos) << id;
    // Every def / class line in an interface block is followed by a docstring.
    size_t at = 0;
    while ((at = statement.find(":\n", at)) != std::string::npos) {
      size_t line = statement.rfind('\n', at);
      std::string head = statement.substr(line + 1, at - line);
      at += 2;
      if (head.find("def ") == std::string::npos && head.find("class ") == std::string::npos) {
        continue;
      }
      size_t next = statement.find_first_not_of(' ', at);
      EXPECT_EQ(statement.compare(next, 3, "\"\"\""), 0) << id << ": " << head;
    }
  }
}

TEST_F(ExtractE2E, SameSeedGivesByteIdenticalTasksAndRerunsResume) {
  ASSERT_EQ(all_->exit_code, 0);
  auto again = RunCommand(Args("all", *dir_ / "again", {"--no-verify", "-j", "2"}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto first = Tasks(kData + "/out");
  std::vector<std::string> first_l1;
  for (const auto& id : first) {
    if (id.ends_with(".lv1")) first_l1.push_back(id);
  }
  std::vector<std::string> second_l1;
  for (const auto& id : Tasks(*dir_ / "again")) {
    if (id.ends_with(".lv1")) second_l1.push_back(id);
  }
  ASSERT_EQ(first_l1, second_l1);
  for (const auto& id : first_l1) {
    for (const std::string file :
         {"instance.json", "patch.diff", "test_patch.diff", "problem_statement.md"}) {
      EXPECT_EQ(ReadFileOrDie((kData + "/out/" + id + "/" + std::string(file))),
                ReadFileOrDie(*dir_ / ("again/" + id + "/" + std::string(file))))
          << id << "/" << file;
    }
  }
  auto before = nlohmann::json::parse(ReadFileOrDie(*dir_ / "again/summary.json"));
  auto resumed = RunCommand(Args("all", *dir_ / "again", {"--no-verify"}));
  ASSERT_EQ(resumed.exit_code, 0);
  auto summary = nlohmann::json::parse(ReadFileOrDie(*dir_ / "again/summary.json"));
  EXPECT_EQ(summary["resumed"], 10) << resumed.out;
  EXPECT_EQ(summary["tried"], 0) << resumed.out;
  // A resumed run counts what the earlier run found, reasons included (so a run over the
  // output of several shards is their merged summary).
  EXPECT_EQ(summary["emitted"], before["emitted"]);
  EXPECT_EQ(summary["rejected"], before["rejected"]) << resumed.out;
}

TEST_F(ExtractE2E, VerifyAcceptsAnEmittedTaskAndRejectsABrokenOne) {
  ASSERT_EQ(all_->exit_code, 0);
  std::string id = Tasks(kData + "/out").front();
  // verify works beside the task directory: on a copy, the shared run stays as it is.
  ASSERT_EQ(RunCommand({"/bin/cp", "-r", (kData + "/out/" + id), *dir_ / id}).exit_code, 0);
  auto ok = RunCommand({kExtract, "verify", *dir_ / id, "-q"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  // A gold patch that no longer solves the task.
  ASSERT_EQ(RunCommand({"/bin/cp", "-r", (kData + "/out/" + id), *dir_ / "broken.lv1"}).exit_code,
            0);
  WriteFileOrDie(*dir_ / "broken.lv1/patch.diff", "");
  auto broken = RunCommand({kExtract, "verify", *dir_ / "broken.lv1"});
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_NE(broken.err.find("patch.diff"), std::string::npos) << broken.err;
}

// A task directory is no more trusted than a repository's fbkit.toml (red team round 4: a
// task whose repo_settings listed /home and /root in pythonpath had them bound into verify's
// and eval's sandbox, with the network on): verify, eval and infer refuse settings that
// widen the sandbox unless the user vouches for the task.
TEST_F(ExtractE2E, ATasksSettingsThatWidenTheSandboxNeedTheUsersWord) {
  ASSERT_EQ(all_->exit_code, 0);
  std::string id = Tasks(kData + "/out").front();
  std::string task = *dir_ / "wide.lv1";
  ASSERT_EQ(RunCommand({"/bin/cp", "-r", (kData + "/out/" + id), task}).exit_code, 0);
  auto instance = nlohmann::json::parse(ReadFileOrDie(task + "/instance.json"));
  auto settings = nlohmann::json::parse(instance["repo_settings"].get<std::string>());
  settings["network"] = true;
  settings["pythonpath"].push_back(*dir_ / "outside");
  instance["repo_settings"] = settings.dump();
  WriteFileOrDie(task + "/instance.json", instance.dump());
  const std::string why = "repo_settings set absolute pythonpath entries, network";
  auto verify = RunCommand({kExtract, "verify", task, "-q"});
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_NE(verify.err.find(why), std::string::npos) << verify.err;
  EXPECT_NE(verify.err.find("--trust-task-settings"), std::string::npos) << verify.err;
  auto eval = RunCommand({kExtract, "eval", task, "--gold", "-q", "-o", *dir_ / "wide-eval"});
  auto report = nlohmann::json::parse(ReadFileOrDie(*dir_ / ("wide-eval/" + id + "/report.json")));
  EXPECT_NE(report["error"].get<std::string>().find(why), std::string::npos) << report;
  EXPECT_FALSE(report["resolved"].get<bool>());
  auto agent = RunCommand({kExtract, "infer", task, "--agent-cmd", "true", "-q", "-o",
                           *dir_ / "wide-infer"});
  auto result = nlohmann::json::parse(ReadFileOrDie(*dir_ / ("wide-infer/" + id + "/result.json")));
  // A task's network never gives its agent the host's: at most its model's endpoints through
  // fbkit's proxy (here none is named: no network), so it needs no word from the user.
  EXPECT_EQ(result["error"], "") << result;
  EXPECT_EQ(result["network"], "none") << result;
  // The user's word: the task runs as written.
  auto trusted = RunCommand({kExtract, "verify", task, "-q", "--trust-task-settings"});
  EXPECT_EQ(trusted.exit_code, 0) << trusted.err;
}

TEST_F(ExtractE2E, TaskCommandExtractsOneFile) {
  auto r = RunCommand(Args("task", *dir_ / "one", {"--f2p", "tests/test_stats.py", "--no-l2"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(".test_stats."), std::string::npos);
  auto least = RunCommand(Args("task", *dir_ / "least",
                               {"--f2p", "tests/test_stats.py", "--no-l2", "--p2p-least-overlap"}));
  ASSERT_EQ(least.exit_code, 0) << least.err;
  auto bad = RunCommand(Args("task", *dir_ / "one", {"--f2p", "tests/helpers.py"}));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("tests/helpers.py"), std::string::npos) << bad.err;
}

// The learned chooser (the shipped model) makes the task, says why per choice, and the same
// command twice gives the same bytes; a model file it cannot use is named.
TEST_F(ExtractE2E, TheLearnedChooserMakesTheSameTaskTwiceAndSaysWhy) {
  std::vector<std::string> learned = {"--f2p", "tests/test_stats.py", "--no-l2", "--no-verify",
                                      "--top-chooser", "learned"};
  auto a = RunCommand(Args("task", *dir_ / "learned-a", learned));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto b = RunCommand(Args("task", *dir_ / "learned-b", learned));
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto ids = Tasks(*dir_ / "learned-a");
  ASSERT_FALSE(ids.empty());
  ASSERT_EQ(ids, Tasks(*dir_ / "learned-b"));
  for (const auto& id : ids) {
    for (const std::string file : {"instance.json", "patch.diff", "problem_statement.md"}) {
      EXPECT_EQ(ReadFileOrDie(*dir_ / ("learned-a/" + id + "/" + file)),
                ReadFileOrDie(*dir_ / ("learned-b/" + id + "/" + file)))
          << id << "/" << file;
    }
  }
  auto tops = RunCommand({kExtract, "tops", root_, "--graph", kData + "/graph.json", "--trace",
                          kData + "/trace.json", "--f2p", "tests/test_stats.py",
                          "--top-chooser", "learned"});
  ASSERT_EQ(tops.exit_code, 0) << tops.err;
  EXPECT_NE(tops.out.find(" p 0."), std::string::npos) << tops.out;

  WriteFileOrDie(*dir_ / "colour.json",
                 R"({"schema":"fbkit.top-model/1","bias":0,"threshold":0.5,"facts":)"
                 R"([{"name":"colour","mean":0,"scale":1,"weight":1}]})");
  for (const std::string model : {"absent.json", "colour.json"}) {
    std::vector<std::string> extra = learned;
    extra.insert(extra.end(), {"--top-model", *dir_ / model});
    auto r = RunCommand(Args("task", *dir_ / "refused", extra));
    EXPECT_NE(r.exit_code, 0) << model;
    EXPECT_NE(r.err.find(model), std::string::npos) << r.err;
  }
}

// A graph of another repository (or of this one with other excludes) numbers other entities:
// refused before anything is planned, naming the graph file.
TEST_F(ExtractE2E, AGraphOfAnotherEntityTableIsRefused) {
  std::string other = *dir_ / "other-graph.json";
  ASSERT_EQ(RunCommand({kBinary, "build", Fixture("top_objects_shared"), "-o", other, "--no-cache"})
                .exit_code,
            0);
  auto r = RunCommand({kExtract, "task", root_, "--graph", other, "--trace", kData + "/trace.json",
                       "-o", *dir_ / "refused", "--python", kPython, "--f2p",
                       "tests/test_stats.py", "-q"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("other-graph.json: the graph was built from another entity table"),
            std::string::npos)
      << r.err;
}

// A stand-in model at DIR/NAME.sh: answers each request by its schema with the given JSON
// answers, logs what it was asked to DIR/NAME.log.
std::string WriteModel(const std::string& dir, const std::string& name, const std::string& top,
                       const std::string& docstring, const std::string& statement) {
  std::string model = dir + "/" + name + ".sh";
  WriteFileOrDie(model, "#!/bin/sh\nlog=" + dir + "/" + name + ".log" + R"SH(
req=$(cat)
printf '%s\n' "$req" >> "$log"
case "$req" in
*'"schema":"fbkit.llm-top/1"'*) echo ')SH" + top + R"SH(' ;;
*'"schema":"fbkit.llm-docstring/1"'*) echo ')SH" + docstring + R"SH(' ;;
*'"schema":"fbkit.llm-statement/1"'*) echo ')SH" + statement + R"SH(' ;;
*) exit 3 ;;
esac
)SH");
  return model;
}

TEST_F(ExtractE2E, LlmCmdChoosesTheTopObjectsAndWritesDocstringsAndTheTaskStatement) {
  std::string model = WriteModel(
      dir_->path(), "model",
      R"({"top_objects": ["src/shapes/stats.py::describe", "src/shapes/stats.py::median"]})",
      R"({"docstring": "MODEL DOCSTRING"})", R"({"task_statement": "**Task Statement: MODEL TITLE**"})");
  std::string log = *dir_ / "model.log";
  auto r = RunCommand(
      Args("task", *dir_ / "llm",
           {"--f2p", "tests/test_stats.py", "--no-l2", "--no-verify", "--llm-cmd", "sh " + model}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string id = r.out.substr(0, r.out.find('\n'));
  auto inst = nlohmann::json::parse(ReadFileOrDie(*dir_ / ("llm/" + id + "/instance.json")));
  EXPECT_EQ(inst["top_objects"], nlohmann::json::array({"src/shapes/stats.py::describe",
                                                        "src/shapes/stats.py::median"}));
  std::string statement = inst["problem_statement"];
  // median has no docstring: the model writes it; describe keeps its own.
  EXPECT_NE(statement.find("## Task\n\n**Task Statement: MODEL TITLE**\n"), std::string::npos)
      << statement;
  EXPECT_NE(statement.find("def median(values):\n    \"\"\"MODEL DOCSTRING\"\"\""),
            std::string::npos)
      << statement;
  EXPECT_NE(statement.find("Return a Summary of a non-empty sequence of numbers."),
            std::string::npos);
  std::string asked = ReadFileOrDie(log);
  EXPECT_NE(asked.find("\"task\":\"docstring\""), std::string::npos);
  EXPECT_NE(asked.find("\"id\":\"src/shapes/stats.py::median\""), std::string::npos);
  // Docstring and statement requests carry no test code.
  for (size_t b = 0; b < asked.size();) {
    size_t e = std::min(asked.find('\n', b), asked.size());
    std::string line = asked.substr(b, e - b);
    b = e + 1;
    if (line.find("fbkit.llm-top/1") != std::string::npos) continue;
    EXPECT_EQ(line.find("def test_"), std::string::npos) << line;
  }
  WriteFileOrDie(model, "#!/bin/sh\necho '[\"src/shapes/nowhere.py::f\"]'\n");
  auto bad = RunCommand(
      Args("task", *dir_ / "llm",
           {"--f2p", "tests/test_stats.py", "--no-l2", "--no-verify", "--llm-cmd", "sh " + model}));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("no candidate"), std::string::npos) << bad.err;
}

TEST_F(ExtractE2E, LlmCmdMayChooseAMethodOfAClassCandidate) {
  // FeatureBench's classifier chooses methods; a class candidate lists the methods the file's
  // run reaches, and an answer naming one takes the method, not the class whole.
  std::string model =
      WriteModel(dir_->path(), "member-model", R"({"top_objects": ["src/shapes/summary.py::Summary.format"]})",
                 R"({"docstring": "D"})", R"({"task_statement": "T"})");
  std::string log = *dir_ / "member-model.log";
  auto r = RunCommand(Args("task", *dir_ / "member", {"--f2p", "tests/test_stats.py", "--no-l2",
                                                      "--no-verify", "--llm-cmd", "sh " + model}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string asked = ReadFileOrDie(log);
  auto request = nlohmann::json::parse(asked.substr(0, asked.find('\n')));
  nlohmann::json members, facts, member_facts;
  for (const auto& c : request["candidates"]) {
    if (c["id"] != "src/shapes/summary.py::Summary") continue;
    members = c["members"], facts = c["facts"], member_facts = c["member_facts"];
  }
  ASSERT_TRUE(members.is_array()) << request.dump();
  // The model sees what the learned chooser weighs, the class's and each member's.
  EXPECT_EQ(facts["class"], 1) << request.dump();
  EXPECT_EQ(member_facts["src/shapes/summary.py::Summary.format"]["method"], 1) << request.dump();
  EXPECT_EQ(member_facts["src/shapes/summary.py::Summary.format"]["called"], 1) << request.dump();
  EXPECT_NE(std::find(members.begin(), members.end(), "src/shapes/summary.py::Summary.format"),
            members.end())
      << members.dump();
  std::string id = r.out.substr(0, r.out.find('\n'));
  auto inst = nlohmann::json::parse(ReadFileOrDie(*dir_ / ("member/" + id + "/instance.json")));
  EXPECT_EQ(inst["top_objects"], nlohmann::json::array({"src/shapes/summary.py::Summary.format"}));
}

// The replies of a model for the fixture: test_stats' top objects after one 429, docstrings
// in a Markdown fence, the Task section; everything else gets a text that is no JSON (the
// step falls back to its default after asking twice).
nlohmann::json StatsReplies() {
  using nlohmann::json;
  auto usage = [](int in, int out) { return json{{"input_tokens", in}, {"output_tokens", out}}; };
  return json::array(
      {{{"match", "classify_top_objects"}, {"status", 429}, {"times", 1}},
       {{"match", "Step: write the docstring"},
        {"text", "```json\n{\"docstring\": \"MODEL DOCSTRING\"}\n```"},
        {"usage", usage(300, 12)}},
       {{"match", "Step: write the Task section"},
        {"text", "{\"task_statement\": \"**Task Statement: MODEL TITLE**\"}"},
        {"usage", usage(500, 40)}},
       {{"match", "\"test_file\": \"tests/test_stats.py\""},
        {"text",
         "{\"top_objects\": [\"src/shapes/stats.py::describe\", \"src/shapes/stats.py::median\"]}"},
        {"usage", usage(1200, 30)}}});
}

std::map<std::string, std::string> TaskFiles(const std::string& out) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(out)) {
    if (!e.is_directory() || e.path().filename().string().starts_with(".")) continue;
    for (const auto& f : std::filesystem::directory_iterator(e.path())) {
      if (f.is_regular_file()) {
        files[e.path().filename().string() + "/" + f.path().filename().string()] =
            ReadFileOrDie(f.path().string());
      }
    }
  }
  return files;
}

TEST_F(ExtractE2E, BuiltInModelAnswersEveryStepThenTheCacheDoes) {
  ScriptedModel server(*dir_ / "model", StatsReplies());
  ASSERT_TRUE(server.ok());
  std::string cache = *dir_ / "llm-cache";
  auto run = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> args = {"--no-verify", "-j", "2", "--llm", "openai:scripted-1",
                                     "--llm-cache", cache, "--llm-price", "1,2"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCommand(Args("all", out, args));
  };
  auto first = run(*dir_ / "llm-1", {"--llm-url", server.url("/v1")});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  size_t asked = server.requests().size();
  auto log = server.requests();
  EXPECT_EQ(std::count_if(log.begin(), log.end(),
                          [](const nlohmann::json& r) { return r["status"] == 429; }),
            1)
      << "a refused request is asked again";

  std::string id = "local__extract_features." + Commit8() + ".test_stats.8a32a05c.lv1";
  auto inst = nlohmann::json::parse(ReadFileOrDie(*dir_ / ("llm-1/" + id + "/instance.json")));
  EXPECT_EQ(inst["top_objects"], nlohmann::json::array({"src/shapes/stats.py::describe",
                                                        "src/shapes/stats.py::median"}));
  EXPECT_EQ(inst["model"]["name"], "openai:scripted-1");
  EXPECT_TRUE(inst["model"]["prompts"].get<std::string>().starts_with("fbkit-prompts/1-"));
  std::string statement = inst["problem_statement"];
  EXPECT_NE(statement.find("## Task\n\n**Task Statement: MODEL TITLE**\n"), std::string::npos);
  EXPECT_NE(statement.find("def median(values):\n    \"\"\"MODEL DOCSTRING\"\"\""),
            std::string::npos)
      << statement;

  // Usage per step: the scripted tokens; the other files' top objects fell back to the rule.
  auto summary = nlohmann::json::parse(ReadFileOrDie(*dir_ / "llm-1/summary.json"));
  const auto& steps = summary["model"]["steps"];
  const auto& top = steps["fbkit.llm-top/1 classify_top_objects"];
  // The script's 1200 tokens, and 1 for each answer it had no reply for (not JSON).
  EXPECT_EQ(top["input_tokens"], 1200 + top["invalid"].get<int>()) << summary.dump(1);
  EXPECT_GE(top["fallbacks"], 1) << "files the script has no answer for keep the rule's choice";
  EXPECT_EQ(top["invalid"], 2 * top["fallbacks"].get<int>());
  const auto& doc = steps["fbkit.llm-docstring/1 docstring"];
  EXPECT_EQ(doc["input_tokens"], 300 * doc["answers"].get<int>());
  EXPECT_EQ(doc["fallbacks"], 0);
  EXPECT_EQ(summary["model"]["name"], "openai:scripted-1");
  int64_t in = summary["model"]["input_tokens"], out = summary["model"]["output_tokens"];
  EXPECT_EQ(summary["model"]["cost_usd"].get<double>(), (in * 1.0 + out * 2.0) / 1e6);

  // A second run asks nothing and writes the same tasks; so does an offline one.
  auto second = run(*dir_ / "llm-2", {"--llm-url", server.url("/v1")});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(server.requests().size(), asked);
  EXPECT_NE(second.err.find("(0 requests,"), std::string::npos) << second.err;
  auto offline = run(*dir_ / "llm-3", {"--llm-offline", "--llm-url", server.url("/v1")});
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_EQ(server.requests().size(), asked);
  auto elsewhere = run(*dir_ / "llm-4", {"--llm-offline", "--llm-url", "http://127.0.0.1:9"});
  EXPECT_EQ(elsewhere.exit_code, 1) << "another endpoint's cache is empty: " << elsewhere.err;
  auto files = TaskFiles(*dir_ / "llm-1");
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(files, TaskFiles(*dir_ / "llm-2"));
  EXPECT_EQ(files, TaskFiles(*dir_ / "llm-3"));
  auto summary2 = nlohmann::json::parse(ReadFileOrDie(*dir_ / "llm-2/summary.json"));
  EXPECT_EQ(summary2["model"], summary["model"]);
}

TEST_F(ExtractE2E, AnthropicAndGeminiSpeakTheirOwnApis) {
  ScriptedModel server(*dir_ / "model-2", StatsReplies());
  ASSERT_TRUE(server.ok());
  for (const auto& [llm, path] : {std::pair{"anthropic:scripted", "/v1/messages"},
                                  std::pair{"gemini:scripted", "/v1beta/models/scripted:generateContent"}}) {
    std::string out = *dir_ / ("llm-" + std::string(llm).substr(0, 6));
    auto r = RunCommand(Args("task", out,
                             {"--f2p", "tests/test_stats.py", "--no-l2", "--no-verify", "--llm", llm,
                              "--llm-url", server.url(), "--llm-cache", out + "-cache"}));
    ASSERT_EQ(r.exit_code, 0) << llm << r.err;
    std::string id = r.out.substr(0, r.out.find('\n'));
    auto inst = nlohmann::json::parse(ReadFileOrDie(out + "/" + id + "/instance.json"));
    EXPECT_EQ(inst["top_objects"].size(), 2u) << llm;
    EXPECT_NE(inst["problem_statement"].get<std::string>().find("MODEL TITLE"), std::string::npos);
    EXPECT_EQ(server.requests().back()["path"], path) << llm;
  }
}

TEST_F(ExtractE2E, BuiltInModelFailuresAreClear) {
  ScriptedModel server(*dir_ / "model-3",
                       nlohmann::json::array({{{"match", "classify_top_objects"}, {"status", 401}},
                                              {{"match", "nothing"}, {"delay", 3}}}));
  ASSERT_TRUE(server.ok());
  auto task = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"--f2p", "tests/test_stats.py", "--no-l2", "--no-verify"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCommand(Args("task", *dir_ / "llm-fail", args));
  };
  auto refused = task({"--llm", "openai:m", "--llm-url", server.url("/v1"), "--llm-cache", *dir_ / "c1"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("openai:m: HTTP 401 from " + server.url("/v1") +
                             "/chat/completions: {\"error\""),
            std::string::npos)
      << refused.err;
  ScriptedModel slow(*dir_ / "model-4",
                     nlohmann::json::array({{{"match", "classify_top_objects"}, {"delay", 4}}}));
  ASSERT_TRUE(slow.ok());
  auto late = task({"--llm", "gemini:m", "--llm-url", slow.url(), "--llm-timeout", "1",
                    "--llm-retries", "1", "--llm-cache", *dir_ / "c2"});
  EXPECT_EQ(late.exit_code, 1);
  EXPECT_NE(late.err.find("gemini:m: HTTP: " + slow.url()), std::string::npos) << late.err;
  EXPECT_NE(late.err.find("after 2 attempts"), std::string::npos) << late.err;
  auto uncached = task({"--llm", "anthropic:m", "--llm-offline", "--llm-cache", *dir_ / "c3"});
  EXPECT_EQ(uncached.exit_code, 1);
  EXPECT_NE(uncached.err.find("anthropic:m: no cached answer for a fbkit.llm-top/1 "
                              "classify_top_objects request (--llm-offline)"),
            std::string::npos)
      << uncached.err;
}

TEST_F(ExtractE2E, AModelThatCannotAnswerLeavesCandidatesUndecided) {
  ScratchDir dir;
  ScriptedModel down(dir / "down", nlohmann::json::array({{{"match", ""}, {"status", 503}}}));
  ASSERT_TRUE(down.ok());
  auto all = [&](const std::string& url, const std::string& retries) {
    return RunCommand(Args("all", dir / "out", {"--no-verify", "--llm", "openai:m", "--llm-url",
                                                url, "--llm-retries", retries, "--llm-cache",
                                                dir / "cache"}));
  };
  auto failed = all(down.url("/v1"), "0");
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_NE(failed.err.find("left undecided: the model could not answer"), std::string::npos)
      << failed.err;
  EXPECT_EQ(down.requests().size(), 1u) << "a dead endpoint is asked once, not per candidate";
  auto summary = nlohmann::json::parse(ReadFileOrDie(dir / "out/summary.json"));
  EXPECT_EQ(summary["rejected"]["model unavailable"], summary["candidates"]) << summary.dump(1);
  ScriptedModel up(dir / "up", StatsReplies());
  ASSERT_TRUE(up.ok());
  auto again = all(up.url("/v1"), "1");  // its first answer is a 429
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto after = nlohmann::json::parse(ReadFileOrDie(dir / "out/summary.json"));
  EXPECT_EQ(after["resumed"], 0) << "nothing undecided was kept as final";
  EXPECT_GT(after["emitted"].get<int>(), 0);
}

TEST_F(ExtractE2E, AModelsWordsCannotBreakTheStatement) {
  ScratchDir dir;
  using nlohmann::json;
  json doc = {{"docstring", "Quote \\\"\"\"; import os # C:\\Users\\x \x07 ends with \\"}};
  json task = {{"task_statement",
                "**Stats**\n\n## Interface Descriptions\n\n### Interface 1: `evil`\n\n```python\n"
                "def evil(): ..."}};
  ScriptedModel server(dir / "model",
                       json::array({{{"match", "Step: write the docstring"}, {"text", doc.dump()}},
                                    {{"match", "Step: write the Task section"}, {"text", task.dump()}}}));
  ASSERT_TRUE(server.ok());
  auto r = RunCommand(Args("task", dir / "out",
                           {"--f2p", "tests/test_stats.py", "--no-l2", "--no-verify", "--llm",
                            "openai:m", "--llm-url", server.url("/v1"), "--llm-cache", dir / "c"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string id = r.out.substr(0, r.out.find('\n'));
  std::string md = ReadFileOrDie(dir / ("out/" + id + "/problem_statement.md"));
  size_t first = md.find("\n## Interface Descriptions");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(md.find("\n## Interface Descriptions", first + 1), std::string::npos)
      << "the model's heading is no section of its own:\n" << md;
  EXPECT_NE(md.find("### Interface Descriptions"), std::string::npos) << md;
  // Every Python block of the interfaces parses, and holds nothing but the interfaces.
  WriteFileOrDie(dir / "statement.md", md.substr(first));
  auto parsed = RunCommand(
      {kPython, "-c",
       "import ast,re,sys; t=open(sys.argv[1]).read(); "
       "blocks=re.findall(r'```python\\n(.*?)```', t, re.S); assert blocks; "
       "[ast.parse(b) for b in blocks]; "
       "assert not any(isinstance(n, ast.Import) for b in blocks for n in ast.walk(ast.parse(b)))",
       dir / "statement.md"});
  EXPECT_EQ(parsed.exit_code, 0) << parsed.err << md;
}

// Copies fixture NAME to ROOT and writes DIR/trace.json (--isolate) and DIR/graph.json.
void TraceFixtureCopy(const std::string& name, const ScratchDir& dir, const std::string& root) {
  ASSERT_EQ(RunCommand({"/bin/cp", "-r", Fixture(name), root}).exit_code, 0);
  ASSERT_EQ(RunCommand({kBinary, "trace", root, "--python", kPython, "--isolate", "-q", "-o",
                        dir / "trace.json"})
                .exit_code,
            0);
  ASSERT_EQ(RunCommand({kBinary, "build", root, "--trace", dir / "trace.json", "-q", "-o",
                        dir / "graph.json", "--no-cache"})
                .exit_code,
            0);
}

// fixtures/l2_package_tests: a package with tests inside it and a dotted import of itself
// (`import calc.ops`) still gives a verified level-2 task.
TEST(L2E2E, APackageWithItsOwnTestsAndDottedSelfImportsGivesALevel2Task) {
  ScratchDir dir;
  std::string root = dir / "repo";
  TraceFixtureCopy("l2_package_tests", dir, root);
  if (::testing::Test::HasFatalFailure()) return;
  auto task = RunCommand({kExtract, "task", root, "--graph", dir / "graph.json", "--trace",
                          dir / "trace.json", "-o", dir / "out", "--python", kPython, "--p2p", "1",
                          "--min-lines", "5", "--f2p", "tests/test_stats.py"});
  ASSERT_EQ(task.exit_code, 0) << task.err;
  std::vector<std::string> ids;
  for (size_t b = 0, e; (e = task.out.find('\n', b)) != std::string::npos; b = e + 1)
    ids.push_back(task.out.substr(b, e - b));
  ASSERT_EQ(ids.size(), 2u) << task.out << task.err;  // verified L1 and L2
  ASSERT_TRUE(ids[1].ends_with(".lv2")) << ids[1];
  std::string patch = ReadFileOrDie(dir / ("out/" + ids[1] + "/patch.diff"));
  EXPECT_NE(patch.find("+import agent_code.ops, agent_code as calc"), std::string::npos) << patch;
  EXPECT_NE(patch.find("agent_code/stats.py"), std::string::npos);
  EXPECT_EQ(patch.find("agent_code/tests/"), std::string::npos) << patch;
  // The package's test helper the F2P file imports checks agent_code's classes.
  std::string test_patch = ReadFileOrDie(dir / ("out/" + ids[1] + "/test_patch.diff"));
  EXPECT_NE(test_patch.find("+++ b/src/calc/tests/__init__.py\n"), std::string::npos)
      << test_patch;
  EXPECT_NE(test_patch.find("+import agent_code.stats, agent_code as calc"), std::string::npos)
      << test_patch;
  // L6: pytest's warning filter on the package's module names agent_code's.
  EXPECT_NE(test_patch.find("+++ b/pytest.ini\n"), std::string::npos) << test_patch;
  EXPECT_NE(test_patch.find("+    ignore:mean .* is no whole number:UserWarning:agent_code.stats\n"),
            std::string::npos)
      << test_patch;
}

// fixtures/top_objects_shared: a class every test file uses, two methods of which only
// test_reconcile.py tests; a value object every file builds inputs with; an exception.
TEST(TopObjectsE2E, ASharedClassIsTestedThroughItsSpecificMethodsAndStays) {
  ScratchDir dir;
  std::string root = dir / "repo";
  TraceFixtureCopy("top_objects_shared", dir, root);
  if (::testing::Test::HasFatalFailure()) return;
  auto tops = [&](const std::string& chooser) {
    auto r = RunCommand({kExtract, "tops", root, "--graph", dir / "graph.json", "--trace",
                         dir / "trace.json", "--top-chooser", chooser, "-q"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, std::set<std::string>> chosen;  // test file -> chosen ids / members
    for (size_t b = 0; b < r.out.size();) {
      size_t e = r.out.find('\n', b);
      auto j = nlohmann::json::parse(r.out.substr(b, e - b));
      b = e + 1;
      auto& set = chosen[j["f2p"].get<std::string>()];
      for (const auto& c : j["candidates"]) {
        if (!c["chosen"]) continue;
        if (c["members"].empty()) set.insert(c["id"].get<std::string>());
        for (const auto& m : c["members"]) set.insert(m.get<std::string>());
      }
    }
    return chosen;
  };
  auto specific = tops("specific");
  EXPECT_EQ(specific["tests/test_reconcile.py"],
            (std::set<std::string>{"src/ledger/book.py::Book.reconcile",
                                   "src/ledger/book.py::Book.audit"}));
  for (const auto& [file, ids] : specific) {
    for (const auto& id : ids) {
      EXPECT_FALSE(id.starts_with("src/ledger/entry.py::Entry")) << file;  // T2
      EXPECT_NE(id, "src/ledger/errors.py::LedgerError") << file;          // T3
    }
  }
  // T4: test_book.py is named after book.py, whose Book it tests (whole: no method of it is
  // specific). T5: summary() is called by two files' tests, most calls from test_totals.py.
  // T6: Tag, a dataclass only built as an input; T7: Overdraft, an exception through its
  // bases only.
  EXPECT_EQ(specific["tests/test_book.py"], (std::set<std::string>{"src/ledger/book.py::Book"}));
  EXPECT_EQ(specific["tests/test_totals.py"],
            (std::set<std::string>{"src/ledger/report.py::summary"}));
  // The share rule alone takes the exception class and the input dataclass, and misses the
  // shared class's methods.
  auto share = tops("share");
  EXPECT_EQ(share["tests/test_reconcile.py"].count("src/ledger/book.py::Book.reconcile"), 0u);
  EXPECT_EQ(share["tests/test_totals.py"], (std::set<std::string>{"src/ledger/errors.py::Overdraft",
                                                                  "src/ledger/report.py::Tag"}));

  auto task = RunCommand({kExtract, "task", root, "--graph", dir / "graph.json", "--trace",
                          dir / "trace.json", "-o", dir / "out", "--python", kPython, "--p2p", "2",
                          "--min-lines", "10", "-q", "--f2p", "tests/test_reconcile.py"});
  ASSERT_EQ(task.exit_code, 0) << task.err;
  std::string id = task.out.substr(0, task.out.find('\n'));
  auto inst = nlohmann::json::parse(ReadFileOrDie(dir / ("out/" + id + "/instance.json")));
  EXPECT_EQ(inst["top_objects"], nlohmann::json::parse(
                                     R"(["src/ledger/book.py::Book.reconcile",
                                         "src/ledger/book.py::Book.audit"])"));
  std::string book = ReadFileOrDie(dir / ("out/" + id + "/presolved/src/ledger/book.py"));
  EXPECT_NE(book.find("class Book:"), std::string::npos) << book;
  EXPECT_NE(book.find("def add(self, entry):"), std::string::npos) << book;
  EXPECT_EQ(book.find("def reconcile("), std::string::npos) << book;
  EXPECT_EQ(book.find("def audit("), std::string::npos) << book;
  EXPECT_EQ(book.find("def _problem("), std::string::npos) << book;
  std::string statement = inst["problem_statement"];
  EXPECT_NE(statement.find("(to write: its methods `Book.reconcile` and `Book.audit`)"),
            std::string::npos) << statement;
  EXPECT_NE(statement.find("    def reconcile(self, other):"), std::string::npos) << statement;
}

// fixtures/app_driven: a test file that only calls the application's entry point; its
// feature (a markup module) is reached 2 to 5 calls deep.
TEST(AppDrivenE2E, TheFeatureBehindTheApplicationIsFoundDeeperThanTheTestsLinks) {
  ScratchDir dir;
  std::string root = dir / "repo";
  TraceFixtureCopy("app_driven", dir, root);
  if (::testing::Test::HasFatalFailure()) return;
  auto tops = RunCommand({kExtract, "tops", root, "--graph", dir / "graph.json", "--trace",
                          dir / "trace.json", "--f2p", "tests/test_render.py", "--deep", "-q"});
  ASSERT_EQ(tops.exit_code, 0) << tops.err;
  std::map<std::string, nlohmann::json> by_id;
  const auto line = nlohmann::json::parse(tops.out);
  for (const auto& c : line["candidates"]) {
    by_id[c["id"].get<std::string>()] = c;
  }
  EXPECT_FALSE(by_id["src/sitegen/app.py::main"]["chosen"]);  // every file runs it
  EXPECT_EQ(by_id["src/sitegen/app.py::main"]["depth"], 1);
  // The first object below main() that only this file reaches is chosen; FeatureBench's
  // classifier does not look below what it chose, so what run_render calls is not.
  EXPECT_TRUE(by_id["src/sitegen/commands.py::run_render"]["chosen"]);
  EXPECT_EQ(by_id["src/sitegen/commands.py::run_render"]["depth"], 2);
  EXPECT_EQ(by_id["src/sitegen/markup.py::render"]["depth"], 3);
  EXPECT_FALSE(by_id["src/sitegen/markup.py::render"]["chosen"]);
  EXPECT_EQ(by_id["src/sitegen/markup.py::Parser"]["depth"], 4);
  EXPECT_EQ(by_id["src/sitegen/markup.py::Parser"]["spread"], 1);
  EXPECT_FALSE(by_id["src/sitegen/markup.py::Parser"]["chosen"]);
  EXPECT_FALSE(by_id["src/sitegen/app.py::parse_args"]["chosen"]);  // every file runs it

  auto task = [&](const std::string& out, const std::string& depth) {
    return RunCommand({kExtract, "task", root, "--graph", dir / "graph.json", "--trace",
                       dir / "trace.json", "-o", dir / out, "--python", kPython, "--p2p", "2",
                       "--min-lines", "30", "--no-l2", "--depth", depth,
                       "--f2p", "tests/test_render.py"});
  };
  auto shallow = task("shallow", "1");
  EXPECT_NE(shallow.exit_code, 0);
  EXPECT_NE(shallow.err.find("too few lines"), std::string::npos) << shallow.err;
  auto deep = task("deep", "5");
  ASSERT_EQ(deep.exit_code, 0) << deep.err;
  EXPECT_NE(deep.err.find("objects up to 5 calls deep chosen"), std::string::npos) << deep.err;
  std::string id = deep.out.substr(0, deep.out.find('\n'));
  auto inst = nlohmann::json::parse(ReadFileOrDie(dir / ("deep/" + id + "/instance.json")));
  std::set<std::string> extracted = inst["extracted"];
  EXPECT_TRUE(extracted.count("src/sitegen/markup.py::Parser.parse"));
  EXPECT_TRUE(extracted.count("src/sitegen/markup.py::render"));
  // The command table names run_render when app.py is imported: it stays, and what it
  // calls for this file goes; the first removed object below it stands in for it.
  EXPECT_FALSE(extracted.count("src/sitegen/commands.py::run_render"));
  EXPECT_FALSE(extracted.count("src/sitegen/app.py::main"));
  // The direct choice's Store.get goes too: a top object that goes is shown, as in
  // FeatureBench, however deep the library reaches it.
  std::vector<std::string> shown = inst["interfaces"];
  EXPECT_EQ(shown, (std::vector<std::string>{"src/sitegen/markup.py::render",
                                             "src/sitegen/store.py::Store.get"}));
  std::string presolved = ReadFileOrDie(dir / ("deep/" + id + "/presolved/src/sitegen/markup.py"));
  EXPECT_EQ(presolved.find("class Parser"), std::string::npos) << presolved;
  std::string statement = inst["problem_statement"];
  EXPECT_NE(statement.find("def render(text):"), std::string::npos) << statement;
}

// fixtures/c_extension: the spec's install steps build a C extension in place, once; every
// copy fbkit runs the tests in (trace, verification) gets it and imports its own tree.
// A library module pytest collects for its doctests (--doctest-modules) is code, not a test
// file: the graph's test files are the tests/ files alone, and the feature a test file tests
// is cut from that module.
TEST(DoctestModulesE2E, LibraryModulesWithDoctestsAreCodeNotTestFiles) {
  ScratchDir dir;
  std::string root = Fixture("doctest_modules");
  auto trace = RunCommand({kBinary, "trace", root, "--python", kPython, "-q", "-o",
                           dir / "trace.json"});
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  auto traced = nlohmann::json::parse(ReadFileOrDie(dir / "trace.json"));
  EXPECT_EQ(traced["counts"], nlohmann::json::parse(R"({"passed": 11})")) << traced["counts"];
  ASSERT_EQ(RunCommand({kBinary, "build", root, "--trace", dir / "trace.json", "-q", "-o",
                        dir / "graph.json", "--no-cache"}).exit_code, 0);
  auto graph = nlohmann::json::parse(ReadFileOrDie(dir / "graph.json"));
  EXPECT_EQ(graph["test_files"],
            nlohmann::json::parse(R"(["tests/test_convert.py", "tests/test_timing.py"])"));
  auto task = RunCommand({kExtract, "task", root, "--python", kPython, "--graph",
                          dir / "graph.json", "--trace", dir / "trace.json", "-o", dir / "out",
                          "--p2p", "1", "--min-lines", "5", "--no-l2", "--f2p",
                          "tests/test_convert.py"});
  ASSERT_EQ(task.exit_code, 0) << task.err;
  std::string id = task.out.substr(0, task.out.find('\n'));
  auto inst = nlohmann::json::parse(ReadFileOrDie(dir / ("out/" + id + "/instance.json")));
  std::set<std::string> extracted = inst["extracted"];
  EXPECT_TRUE(extracted.count("src/units/convert.py::to_meters")) << inst["extracted"];
  EXPECT_EQ(inst["PASS_TO_PASS"], nlohmann::json::parse(R"(["tests/test_timing.py"])"));
}

// presolved/ holds what git tracks and the cut, never an untracked file of the checkout (a
// build/lib copy or a .orig of the original code is the answer); a warning names them.
TEST(UntrackedFilesE2E, PresolvedTakesOnlyWhatGitTracks) {
  ScratchDir dir;
  std::string root = dir / "repo";
  std::filesystem::copy(Fixture("doctest_modules"), root, std::filesystem::copy_options::recursive);
  auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"/usr/bin/git", "-C", root, "-c", "user.name=t", "-c",
                               "user.email=t@localhost"});
    ASSERT_EQ(RunCommand(args).exit_code, 0);
  };
  git({"init", "-q"});
  git({"add", "-A"});
  git({"commit", "-qm", "fixture"});
  std::filesystem::create_directories(root + "/build/lib/units");
  std::filesystem::copy_file(root + "/src/units/convert.py", root + "/build/lib/units/convert.py");
  std::filesystem::copy_file(root + "/src/units/convert.py", root + "/src/units/convert.py.orig");
  ASSERT_EQ(RunCommand({kBinary, "trace", root, "--python", kPython, "-q", "-o", dir / "trace.json"}).exit_code, 0);
  ASSERT_EQ(RunCommand({kBinary, "build", root, "--trace", dir / "trace.json", "-q", "-o",
                        dir / "graph.json", "--no-cache"}).exit_code, 0);
  auto task = RunCommand({kExtract, "task", root, "--python", kPython, "--graph", dir / "graph.json",
                          "--trace", dir / "trace.json", "-o", dir / "out", "--p2p", "1",
                          "--min-lines", "5", "--no-l2", "--f2p", "tests/test_convert.py"});
  ASSERT_EQ(task.exit_code, 0) << task.err;
  EXPECT_NE(task.err.find("warning: 2 files of " + root + " git does not track are left out"),
            std::string::npos) << task.err;
  EXPECT_NE(task.err.find("build/lib/units/convert.py"), std::string::npos) << task.err;
  std::string id = task.out.substr(0, task.out.find('\n'));
  std::string pre = dir / ("out/" + id + "/presolved");
  EXPECT_TRUE(std::filesystem::exists(pre + "/src/units/convert.py"));
  EXPECT_FALSE(std::filesystem::exists(pre + "/build")) << "an untracked copy of the original";
  EXPECT_FALSE(std::filesystem::exists(pre + "/src/units/convert.py.orig"));
  EXPECT_EQ(ReadFileOrDie(dir / ("out/" + id + "/patch.diff")).find("build/lib"), std::string::npos);
}

TEST(CExtensionE2E, EveryCopyImportsItsOwnTreeWithTheBuiltExtension) {
  ScratchDir dir;
  std::string root = dir / "repo";
  ASSERT_EQ(RunCommand({"/bin/cp", "-r", Fixture("c_extension"), root}).exit_code, 0);
  // Links in the package to files outside the repository (a host's secrets) stay out of the
  // L2 gold, which is published with the task.
  WriteFileOrDie(dir / "host-secret", "SECRET-OF-THE-HOST\n");
  WriteFileOrDie(dir / "host-secret.py", "SECRET = 'SECRET-OF-THE-HOST-PY'\n");
  std::filesystem::create_symlink(dir / "host-secret", root + "/src/cext/notes.txt");
  std::filesystem::create_symlink(dir / "host-secret.py", root + "/src/cext/secret.py");
  std::filesystem::create_hard_link(dir / "host-secret", root + "/src/cext/hard.txt");
  auto trace = RunCommand({kBinary, "trace", root, "--python", kPython, "--isolate", "-q",
                           "--details", "-o", dir / "trace.json"});
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  auto doc = nlohmann::json::parse(ReadFileOrDie(dir / "trace.json"));
  EXPECT_EQ(doc["counts"], nlohmann::json::parse(R"({"passed": 8})")) << doc["counts"];
  // Nothing was built into the user's checkout.
  EXPECT_FALSE(std::filesystem::exists(root + "/build"));
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    EXPECT_FALSE(e.path().string().ends_with(".so")) << e.path();
  }
  ASSERT_EQ(RunCommand({kBinary, "build", root, "--trace", dir / "trace.json", "-q", "-o",
                        dir / "graph.json", "--no-cache"}).exit_code, 0);
  auto task = RunCommand({kExtract, "task", root, "--graph", dir / "graph.json", "--trace",
                          dir / "trace.json", "-o", dir / "out", "--p2p", "2", "--min-lines",
                          "10", "--f2p", "tests/test_stats.py"});
  ASSERT_EQ(task.exit_code, 0) << task.err;
  std::string id = task.out.substr(0, task.out.find('\n'));
  auto inst = nlohmann::json::parse(ReadFileOrDie(dir / ("out/" + id + "/instance.json")));
  std::set<std::string> extracted = inst["extracted"];
  EXPECT_TRUE(extracted.count("src/cext/stats.py::variance"));
  std::vector<std::string> p2p = inst["PASS_TO_PASS"];
  EXPECT_NE(std::find(p2p.begin(), p2p.end(), "tests/test_speedups.py"), p2p.end());
  // The L2 task, verified with its gold: agent_code is the whole package as it runs, with
  // the extension and the version file the install steps built, the data it reads at import
  // and the runner its own code imports from its tests directory (but not its tests), its
  // logger renamed with it.
  std::string l2 = id.substr(0, id.size() - 1) + "2";
  ASSERT_NE(task.out.find(l2), std::string::npos) << task.out << task.err;
  std::string gold = ReadFileOrDie(dir / ("out/" + l2 + "/patch.diff"));
  for (const char* part : {"+++ b/agent_code/_version.py", "+++ b/agent_code/stopwords.txt",
                           "+++ b/agent_code/tests/runner.py", "+++ b/agent_code/tests/__init__.py",
                           "getLogger(\"agent_code\")", "return version(\"cext\")"}) {
    EXPECT_NE(gold.find(part), std::string::npos) << part;
  }
  EXPECT_NE(gold.find("diff --git a/agent_code/_speedups."), std::string::npos);
  EXPECT_NE(gold.find("GIT binary patch"), std::string::npos);
  EXPECT_EQ(gold.find("test_inner"), std::string::npos);
  EXPECT_EQ(gold.find("SECRET-OF-THE-HOST"), std::string::npos);
  // Verified again, every task of the commit (two test files, both levels) runs in one
  // environment: the one built from the repository the tasks rebuild, not one per task.
  auto other = RunCommand({kExtract, "task", root, "--graph", dir / "graph.json", "--trace",
                           dir / "trace.json", "-o", dir / "out", "--p2p", "2", "--min-lines",
                           "5", "--no-l2", "--f2p", "tests/test_text.py"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  std::string cache = "XDG_CACHE_HOME=" + (dir / "verify-cache");
  for (const std::string& t : {id, l2, other.out.substr(0, other.out.find('\n'))}) {
    auto verified = RunCommand({"/usr/bin/env", cache, kExtract, "verify", dir / ("out/" + t), "-q"});
    EXPECT_EQ(verified.exit_code, 0) << t << verified.err;
  }
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "verify-cache/fbkit/env")) {
    entries += e.is_directory();
  }
  EXPECT_EQ(entries, 1);
}

// fixtures/flaky_p2p: verification runs a failing round once more and leaves out the tests
// whose outcome changed (a P2P test that passes on odd runs only, its count kept outside the
// sandbox: --sandbox none); a candidate rejected by verification keeps its evidence.
TEST(FlakyE2E, AFlakyP2PTestIsLeftOutAndARejectionKeepsItsEvidence) {
  ScratchDir dir;
  std::string root = dir / "repo";
  ASSERT_EQ(RunCommand({"/bin/cp", "-r", Fixture("flaky_p2p"), root}).exit_code, 0);
  std::string state = "FPKG_FLAKY_STATE=" + (dir / "state");
  ASSERT_EQ(RunCommand({kBinary, "trace", root, "--python", kPython, "--isolate", "-q", "-o",
                        dir / "trace.json", "--sandbox", "none", "--env", state})
                .exit_code, 0);
  ASSERT_EQ(RunCommand({kBinary, "build", root, "--trace", dir / "trace.json", "-q", "-o",
                        dir / "graph.json", "--no-cache"}).exit_code, 0);
  auto all = RunCommand({kExtract, "all", root, "--graph", dir / "graph.json", "--trace",
                         dir / "trace.json", "-o", dir / "out", "--python", kPython, "--p2p", "3",
                         "--min-lines", "3", "--min-points", "1", "--no-l2", "--sandbox", "none",
                         "--env", state});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const std::string flaky = "tests/test_flaky.py::test_triple_on_odd_runs";
  EXPECT_NE(all.err.find("flaky, left out: " + flaky), std::string::npos) << all.err;
  nlohmann::json words;
  for (const auto& e : std::filesystem::directory_iterator(dir / "out")) {
    if (e.path().filename().string().find(".test_words.") != std::string::npos) {
      words = nlohmann::json::parse(ReadFileOrDie(e.path() / "instance.json"));
    }
  }
  ASSERT_TRUE(words.is_object()) << all.err;
  std::vector<std::string> p2p = words["p2p_tests"];
  EXPECT_EQ(std::count(p2p.begin(), p2p.end(), flaky), 0) << words["p2p_tests"];
  EXPECT_EQ(words["p2p_test_points"], 6);
  EXPECT_EQ(std::count(p2p.begin(), p2p.end(), "tests/test_flaky.py::test_triple"), 1);
  auto summary = nlohmann::json::parse(ReadFileOrDie(dir / "out/summary.json"));
  EXPECT_EQ(summary["flaky_tests"], 1);
  EXPECT_EQ(summary["rejected"]["verification failed"], 1);
  // The rejected candidate: its task directory and why, in full.
  std::string evidence = dir / "out/rejected/tests.test_clamp.lv1";
  EXPECT_TRUE(std::filesystem::exists(evidence + "/patch.diff"));
  EXPECT_TRUE(std::filesystem::exists(evidence + "/instance.json"));
  std::string why = ReadFileOrDie(evidence + "/verification.txt");
  EXPECT_NE(why.find("failed: P2P tests/test_registry.py::test_numbers_offer_clamp failed"),
            std::string::npos) << why;
  EXPECT_NE(why.find("AssertionError: assert 'clamp' in"), std::string::npos) << why;
  // Emitted candidates leave no evidence behind.
  EXPECT_FALSE(std::filesystem::exists(dir / "out/rejected/tests.test_words.lv1"));
}

// fixtures/featurebench_rules: what FeatureBench's method lets stay, keeps, repairs and shows.
TEST(FeatureBenchRulesE2E, DanglingIntrospectionModuleAttributeAndRepair) {
  ScratchDir dir;
  std::string root = dir / "repo";
  TraceFixtureCopy("featurebench_rules", dir, root);
  if (::testing::Test::HasFatalFailure()) return;
  auto all = RunCommand({kExtract, "all", root, "--graph", dir / "graph.json", "--trace",
                         dir / "trace.json", "-o", dir / "out", "--python", kPython, "--p2p", "2",
                         "--min-lines", "5", "--min-points", "5", "--no-l2"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  auto instance = [&](const std::string& out, const std::string& stem) {
    for (const auto& e : std::filesystem::directory_iterator(dir / out)) {
      std::string name = e.path().filename();
      if (name.find("." + stem + ".") != std::string::npos && name.ends_with(".lv1")) {
        return nlohmann::json::parse(ReadFileOrDie(e.path() / "instance.json"));
      }
    }
    ADD_FAILURE() << "no task for " << stem << " in " << out;
    return nlohmann::json::object();
  };
  auto has = [](const nlohmann::json& list, const std::string& id) {
    return std::find(list.begin(), list.end(), id) != list.end();
  };
  // Dangling reference in code no P2P test runs: report.render_total keeps naming the removed
  // format_amount. A repairable plan: plugins.py reads parse_amount through getattr when the
  // package is imported (neither a call nor a name the static check sees), every P2P run
  // fails, the error names it, and the repaired plan keeps it.
  auto money = instance("out", "test_money");
  EXPECT_EQ(money["references"], "featurebench");
  EXPECT_TRUE(has(money["extracted"], "src/till/money.py::format_amount")) << money["extracted"];
  EXPECT_FALSE(has(money["extracted"], "src/till/money.py::parse_amount")) << money["extracted"];
  // And on a line the P2P runs skip: test_report.py runs report.count, which names
  // format_amount only under show_total, which no test sets.
  EXPECT_TRUE(has(money["PASS_TO_PASS"], "tests/test_report.py")) << money["PASS_TO_PASS"];
  EXPECT_EQ(money["dangling_references"],
            nlohmann::json::parse(R"(["src/till/report.py:13: render_total uses format_amount",
                                      "src/till/report.py:6: count uses format_amount"])"));
  EXPECT_NE(all.err.find("repaired: P2P tests failed; kept src/till/money.py::parse_amount"),
            std::string::npos)
      << all.err;
  auto summary = nlohmann::json::parse(ReadFileOrDie(dir / "out/summary.json"));
  EXPECT_EQ(summary["repaired"]["tasks"], 1);
  // Helpers removed with the interfaces are not shown: _group goes, unshown.
  EXPECT_TRUE(has(money["extracted"], "src/till/money.py::_group"));
  EXPECT_FALSE(has(money["interfaces"], "src/till/money.py::_group"));
  EXPECT_EQ(std::string(money["problem_statement"]).find("def _group"), std::string::npos);
  // Code a package's __init__.py defines stays, though only test_money.py reaches it.
  EXPECT_TRUE(has(money["extracted"], "src/till/money.py::percent_of"));
  EXPECT_FALSE(has(money["extracted"], "src/till/__init__.py::_round_half_up"));
  // Import-time introspection: docs.py reads TaxTable.rate_for.__doc__ at import, so
  // rate_for stays while the rest of the class goes.
  auto tax = instance("out", "test_tax");
  EXPECT_TRUE(has(tax["extracted"], "src/till/tax.py::TaxTable.apply")) << tax["extracted"];
  EXPECT_FALSE(has(tax["extracted"], "src/till/tax.py::TaxTable.rate_for")) << tax["extracted"];
  // A class the tests reach only as a module attribute (accounts.Account(...)).
  auto accounts = instance("out", "test_accounts");
  EXPECT_TRUE(has(accounts["interfaces"], "src/till/accounts.py::Account.deposit"))
      << accounts["interfaces"];
  // The rule before, on request: nothing that stays may name what goes.
  auto strict = RunCommand({kExtract, "task", root, "--graph", dir / "graph.json", "--trace",
                            dir / "trace.json", "-o", dir / "strict", "--python", kPython, "--p2p",
                            "2", "--min-lines", "5", "--strict-references", "--no-l2", "-q",
                            "--f2p", "tests/test_money.py"});
  ASSERT_EQ(strict.exit_code, 0) << strict.err;
  auto strict_money = instance("strict", "test_money");
  EXPECT_EQ(strict_money["references"], "strict");
  EXPECT_TRUE(strict_money["dangling_references"].empty());
  EXPECT_FALSE(has(strict_money["extracted"], "src/till/money.py::format_amount"));
  // FeatureBench's choice without its model: everything the tests call (not the helper).
  auto fb = RunCommand({kExtract, "task", root, "--graph", dir / "graph.json", "--trace",
                        dir / "trace.json", "-o", dir / "fb", "--python", kPython, "--p2p", "2",
                        "--min-lines", "5", "--top-chooser", "featurebench", "--no-l2", "-q",
                        "--no-verify", "--f2p", "tests/test_money.py"});
  ASSERT_EQ(fb.exit_code, 0) << fb.err;
  EXPECT_EQ(instance("fb", "test_money")["top_objects"],
            nlohmann::json::parse(R"(["src/till/money.py::format_amount",
                                      "src/till/money.py::parse_amount",
                                      "src/till/money.py::percent_of",
                                      "src/till/money.py::split_amount"])"));
  // Every task holds under plain pytest and pyflakes (dangling names only where declared).
  auto check = RunCommand({kPython, kSource + "/bench/check_tasks.py", dir / "out", "--python",
                           kPython});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST(ExtractErrors, BadInputGetsAClearErrorAndANonZeroExit) {
  ScratchDir dir;
  WriteFileOrDie(dir / "bad.json", "{not json");
  std::string root = Fixture("extract_features");
  auto missing_root = RunCommand({kExtract, "all", dir / "nope", "--graph", dir / "bad.json",
                                  "--trace", dir / "bad.json", "-o", dir / "out"});
  EXPECT_EQ(missing_root.exit_code, 2);
  auto missing_graph = RunCommand({kExtract, "all", root, "--graph", dir / "none.json", "--trace",
                                   dir / "bad.json", "-o", dir / "out"});
  EXPECT_EQ(missing_graph.exit_code, 1);
  EXPECT_NE(missing_graph.err.find("none.json"), std::string::npos) << missing_graph.err;
  auto bad_graph = RunCommand({kExtract, "all", root, "--graph", dir / "bad.json", "--trace",
                               dir / "bad.json", "-o", dir / "out"});
  EXPECT_EQ(bad_graph.exit_code, 1);
  EXPECT_NE(bad_graph.err.find("bad.json"), std::string::npos) << bad_graph.err;
  auto bad_shard = RunCommand({kExtract, "all", root, "--graph", dir / "bad.json", "--trace",
                               dir / "bad.json", "-o", dir / "out", "--shard", "3/2"});
  EXPECT_EQ(bad_shard.exit_code, 1);
  EXPECT_NE(bad_shard.err.find("--shard"), std::string::npos) << bad_shard.err;
  auto not_a_task = RunCommand({kExtract, "verify", dir.path()});
  EXPECT_EQ(not_a_task.exit_code, 1);
  EXPECT_NE(not_a_task.err.find("instance.json"), std::string::npos) << not_a_task.err;
  EXPECT_EQ(RunCommand({kExtract}).exit_code, 2);
  EXPECT_EQ(RunCommand({kExtract, "task", root}).exit_code, 2);
  // Model options: each mistake named, before anything is loaded.
  for (const auto& [extra, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--llm", "mistral:large"}, "unknown provider 'mistral'"},
           {{"--llm", "openai"}, "expected PROVIDER:MODEL"},
           {{"--llm-offline"}, "--llm-offline needs --llm PROVIDER:MODEL"},
           {{"--llm", "openai:m", "--llm-url", "http://127.0.0.1:9", "--llm-price", "cheap"},
            "--llm-price cheap: expected IN,OUT"},
           {{"--llm", "openai:m", "--llm-cmd", "cat"}, "excludes"}}) {
    std::vector<std::string> argv = {kExtract, "all", root, "--graph", dir / "bad.json",
                                     "--trace", dir / "bad.json", "-o", dir / "out"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 2) << extra[0] << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace fbkit::testing

// The whole task run (extract/make/task.h: BuildTask) wholly in memory: a small repository in
// a FakeEnv, its entity table, a trace made here (no pytest), the real planner, cut, task
// writer and verifier over FakeGit, and pytest's answers (FakeTestRunner) decided by the code
// each run sees; no process starts (NoLauncher). A plan that verifies is emitted; one whose
// F2P file passes without the feature is rejected with its evidence kept; the rejection names
// round-trip through the state files' words.
#include "extract/make/task.h"

#include "extract/make/all.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "extract/taskdir/task_dir.h"
#include "graph/dep_graph.h"
#include "parser/entity_table.h"
#include "parser/python_parser.h"
#include "sandbox/process.h"
#include "tests/testing/fake_env.h"
#include "tests/testing/fake_git.h"
#include "tests/testing/fake_test_runner.h"
#include "tests/testing/no_launcher.h"

namespace fbkit::extract::make {
namespace {

using testing::FakeTestRunner;

constexpr char kCore[] =
    "def f():\n"
    "    return 1\n"
    "\n"
    "\n"
    "def g(x):\n"
    "    \"\"\"The feature.\"\"\"\n"
    "    total = 0\n"
    "    for i in range(x):\n"
    "        total += i\n"
    "    return total\n";

constexpr char kF2p[] = "tests/test_feature.py";
constexpr char kP2p[] = "tests/test_core.py";

tracer::CodeId Code(const std::string& path, int line, const std::string& name) {
  return tracer::CodeId{path, line, name};
}

// One passed test file whose test calls `callee`.
tracer::FileTrace Ran(const std::string& file, const std::string& test, int line,
                      const tracer::CodeId& callee) {
  tracer::FileTrace f;
  f.file = file;
  std::string id = file + "::" + test;
  f.nodeids = {id};
  f.tests[id].nodeid = id;
  f.tests[id].phases = {{"call", "passed"}};
  f.tests[id].outcome = runner::Outcome::kPassed;
  f.edges[{Code(file, line, test), callee}] = 1;
  return f;
}

class BuildTaskTest : public ::testing::Test {
 protected:
  void SetUp() override { Prepare(kCore); }
  void TearDown() override { EXPECT_EQ(none_.starts, 0) << "a process was started"; }

  void Write(const std::string& path, const std::string& text) { env_.AddFile(path, text); }
  std::string Read(const std::string& path) {
    auto text = env_.ReadFile(path);
    if (!text.ok()) throw std::runtime_error(text.error());
    return *text;
  }
  runner::Services Services() { return {env_, none_, tests_, &maker_}; }

  // The repository with `core` as pkg/core.py, its entity table, trace and graph; `f2p`,
  // `p2p` and `trace` replace the test files and the trace when given.
  void Prepare(const std::string& core, const std::string& f2p = "",
               const std::string& p2p = "",
               const std::function<void(tracer::TraceSet&)>& trace = nullptr) {
    root_ = "/work/repo";
    Write(root_ + "/pkg/__init__.py", "");
    Write(root_ + "/pkg/core.py", core);
    const std::string g_test = "from pkg.core import g\n\n\ndef test_g():\n    assert g(4) == 6\n";
    const std::string f_test = "from pkg.core import f\n\n\ndef test_f():\n    assert f() == 1\n";
    Write(root_ + "/" + kF2p, f2p.empty() ? g_test : f2p);
    Write(root_ + "/" + kP2p, p2p.empty() ? f_test : p2p);
    parser::EntitiesOptions eo;
    eo.root = root_;
    eo.references = true;
    auto entities = parser::BuildEntities(env_, eo, nullptr);
    ASSERT_TRUE(entities.ok()) << entities.error();
    auto tables = parser::FileTables(*entities);
    ASSERT_TRUE(tables.ok()) << tables.error();
    trace_ = tracer::TraceSet{};
    trace_.root = root_;
    trace_.mode = tracer::TraceMode::kIsolate;
    trace_.files[kF2p] = Ran(kF2p, "test_g", 4, Code("pkg/core.py", 5, "g"));
    trace_.files[kF2p].edges[{Code("pkg/core.py", 5, "g"), Code("pkg/core.py", 13, "h")}] = 1;
    trace_.files[kP2p] = Ran(kP2p, "test_f", 4, Code("pkg/core.py", 1, "f"));
    if (trace) trace(trace_);
    graph_ = graph::DepGraph::Build(*tables, &trace_, nullptr);
    auto repo = Repo::Load(env_, root_, std::move(*tables));
    ASSERT_TRUE(repo.ok()) << repo.error();
    repo_ = std::make_unique<Repo>(std::move(*repo));
    index_ = std::make_unique<CutIndex>(*repo_);
    passing_ = PassingFiles(trace_, nullptr);
    ASSERT_EQ(passing_.size(), trace_.files.size());
    auto p = parser::PythonParser::Create();
    ASSERT_TRUE(p.ok());
    parser_ = std::move(*p);
    options_.out_dir = "/work/out";
    env_.AddDir(options_.out_dir);
    options_.repo_name = "o/r";
    options_.files = {"pkg/__init__.py", "pkg/core.py", kF2p, kP2p};
    options_.spec.python = "/usr/bin/python3";
    options_.spec.sandbox = sandbox::SandboxKind::kNone;
    options_.min_lines = 1;
    options_.level2 = false;
    options_.select.p2p = 1;
  }

  // pytest's answers: the F2P test passes when the code it runs has g (or always), the
  // P2P test always.
  void Answer(bool f2p_needs_g) {
    tests_.respond = [this, f2p_needs_g](const runner::TestRunRequest& r) {
      bool has_g = Read(r.root + "/pkg/core.py").find("def g") != std::string::npos;
      std::map<std::string, std::string> outcomes;
      for (const auto& file : r.files) {
        if (file == kF2p) {
          outcomes[std::string(kF2p) + "::test_g"] = has_g || !f2p_needs_g ? "passed" : "failed";
        } else {
          outcomes[file + "::test_f"] = "passed";
        }
      }
      return util::Expected<runner::TestRun>(testing::RunWith(outcomes));
    };
  }

  TaskOutcome Build() {
    auto f2p = std::find_if(passing_.begin(), passing_.end(),
                            [](const PassingFile& p) { return p.file == kF2p; });
    return BuildTask(Services(), *parser_,
                     ExtractContext{*repo_, *index_, graph_, passing_}, *f2p, options_);
  }

  testing::FakeEnv env_;
  testing::FakeGit git_{env_};
  runner::GitMaker maker_ = git_.Maker();
  testing::NoLauncher none_;
  std::string root_;
  tracer::TraceSet trace_;
  graph::DepGraph graph_;
  std::unique_ptr<Repo> repo_;
  std::unique_ptr<CutIndex> index_;
  std::vector<PassingFile> passing_;
  std::unique_ptr<parser::PythonParser> parser_;
  ExtractOptions options_;
  FakeTestRunner tests_;
};

TEST_F(BuildTaskTest, APlanThatVerifiesIsEmitted) {
  Answer(true);
  TaskOutcome o = Build();
  ASSERT_TRUE(o.emitted) << RejectionName(o.rejection) << ": " << o.detail;
  EXPECT_EQ(o.rejection, Rejection::kNone);
  ASSERT_EQ(o.instance_ids.size(), 1u);
  auto inst = taskdir::ReadInstance(env_,
                                    taskdir::TaskDir{options_.out_dir + "/" + o.instance_ids[0]});
  ASSERT_TRUE(inst.ok()) << inst.error();
  EXPECT_EQ(inst->extracted, std::vector<std::string>{"pkg/core.py::g"});
  EXPECT_EQ(inst->p2p_files, std::vector<std::string>{kP2p});
  EXPECT_EQ(inst->f2p_tests, std::vector<std::string>{std::string(kF2p) + "::test_g"});
  // Verification: the pre-solved code (P2P and F2P files), then the gold patch.
  ASSERT_GE(tests_.requests.size(), 2u);
  EXPECT_TRUE(o.repairs.empty());
  // presolved/ lacks the feature; the gold patch adds it back.
  std::string task = options_.out_dir + "/" + o.instance_ids[0];
  EXPECT_EQ(Read(task + "/presolved/pkg/core.py").find("def g"), std::string::npos);
  EXPECT_NE(Read(task + "/patch.diff").find("+def g(x):"), std::string::npos);
  // The gold patch and the test patch apply to presolved/ in that order, and give the
  // repository's own files back.
  ASSERT_TRUE(git_.Run("/work", {"clone", "-q", "--no-hardlinks", task + "/presolved", "/work/check"}).ok());
  ASSERT_TRUE(git_.Apply("/work/check", Read(task + "/patch.diff")).ok());
  ASSERT_TRUE(git_.Apply("/work/check", Read(task + "/test_patch.diff")).ok());
  for (const char* f : {"pkg/core.py", kF2p, kP2p}) {
    EXPECT_EQ(Read(std::string("/work/check/") + f), Read(root_ + "/" + f)) << f;
  }
}

TEST_F(BuildTaskTest, AnF2PFileThatPassesWithoutTheFeatureIsRejectedWithItsEvidence) {
  Answer(false);
  TaskOutcome o = Build();
  EXPECT_FALSE(o.emitted);
  EXPECT_EQ(o.rejection, Rejection::kVerificationFailed) << RejectionName(o.rejection);
  EXPECT_TRUE(o.instance_ids.empty());
  std::string evidence = options_.out_dir + "/rejected/tests.test_feature.lv1";
  ASSERT_TRUE(env_.Exists(evidence + "/verification.txt")) << o.detail;
  EXPECT_NE(Read(evidence + "/verification.txt").find("reason: "), std::string::npos);
}


TEST_F(BuildTaskTest, TooFewLinesIsARejectionBeforeAnyRun) {
  Answer(true);
  options_.min_lines = 1000;
  TaskOutcome o = Build();
  EXPECT_FALSE(o.emitted);
  EXPECT_EQ(o.rejection, Rejection::kTooFewLines);
  EXPECT_TRUE(tests_.requests.empty());
}

// Test runs in which test_g needs g, and test_f needs h, failing with `message` without it.
std::function<util::Expected<runner::TestRun>(const runner::TestRunRequest&)> NeedingH(
    util::Env& env, const std::string& message) {
  return [&env, message](const runner::TestRunRequest& r) {
    std::string core = *env.ReadFile(r.root + "/pkg/core.py");
    bool has_g = core.find("def g") != std::string::npos;
    bool has_h = core.find("def h") != std::string::npos;
    std::map<std::string, std::string> outcomes;
    for (const auto& file : r.files) {
      if (file == kF2p) outcomes[std::string(kF2p) + "::test_g"] = has_g ? "passed" : "failed";
      if (file == kP2p) outcomes[std::string(kP2p) + "::test_f"] = has_h ? "passed" : "failed";
    }
    runner::TestRun run = testing::RunWith(outcomes);
    std::string p2p = std::string(kP2p) + "::test_f";
    if (run.files.count(kP2p) && !has_h) run.files[kP2p].tests[p2p].message = message;
    return util::Expected<runner::TestRun>(run);
  };
}

// The feature's helper h (reached only through g in the trace) is also needed by the P2P
// test in a way the trace did not see: the first verification fails with an error naming
// h, the repair keeps h, and the task verifies on the second round. The errors: a NameError,
// and the AttributeError a module's __getattr__ raises for a name read from it
// (`old = utils.h` with h imported into utils).
TEST_F(BuildTaskTest, AP2PFailureNamingAnExtractedHelperIsRepaired) {
  for (const char* message :
       {"E   NameError: name 'h' is not defined", "E       AttributeError: h\n\nsrc/x.py:9"}) {
    SCOPED_TRACE(message);
    (void)env_.RemoveAll("/work/out");
    Prepare(std::string(kCore) + "\n\ndef h(x):\n    return x + 1\n");
    tests_.respond = NeedingH(env_, message);
    TaskOutcome o = Build();
    ASSERT_TRUE(o.emitted) << RejectionName(o.rejection) << ": " << o.detail;
    ASSERT_EQ(o.repairs.size(), 1u);
    EXPECT_NE(o.repairs[0].find("kept pkg/core.py::h"), std::string::npos) << o.repairs[0];
    auto inst = taskdir::ReadInstance(
        env_, taskdir::TaskDir{options_.out_dir + "/" + o.instance_ids[0]});
    ASSERT_TRUE(inst.ok()) << inst.error();
    EXPECT_EQ(inst->extracted, std::vector<std::string>{"pkg/core.py::g"});
  }
}

// A repair that does not help: the P2P test keeps failing with an error naming h once h is
// kept. The rejection says how many repairs it took, and the evidence what they were.
TEST_F(BuildTaskTest, ARejectedTasksEvidenceNamesTheRepairsTried) {
  Prepare(std::string(kCore) + "\n\ndef h(x):\n    return x + 1\n");
  auto needing_h = NeedingH(env_, "E   NameError: name 'h' is not defined");
  tests_.respond = [needing_h](const runner::TestRunRequest& r) {
    auto run = needing_h(r);
    std::string p2p = std::string(kP2p) + "::test_f";
    if (run.ok() && run->files.count(kP2p)) {
      run->files[kP2p].tests[p2p].outcome = runner::Outcome::kFailed;
      run->files[kP2p].tests[p2p].message = "E   NameError: name 'h' is not defined";
    }
    return run;
  };
  TaskOutcome o = Build();
  ASSERT_FALSE(o.emitted);
  ASSERT_EQ(o.repairs.size(), 1u);
  EXPECT_NE(o.detail.find("(after 1 repairs)"), std::string::npos) << o.detail;
  std::string why =
      Read(options_.out_dir + "/rejected/tests.test_feature.lv1/verification.txt");
  EXPECT_NE(why.find("repaired before: " + o.repairs.front()), std::string::npos) << why;
}


// An application-driven file: its test calls the shared entry point `run` (which the P2P
// test calls too) and a `label` of its own; the feature, g, is reached only through `run`.
// The plan (label) leaves the F2P test passing; adding every direct candidate (run, which
// the P2P file keeps) changes nothing; the next round adds the deep choice, g, and the task
// verifies.
TEST_F(BuildTaskTest, AnF2PFileThatStillPassesGetsTheDeepChoice) {
  const std::string core =
      "def run(x):\n    if x > 3:\n        return g(x)\n    return x\n\n\n"
      "def label():\n    \"\"\"A label.\"\"\"\n    return 'n'\n\n\n" +
      std::string(kCore).substr(std::string(kCore).find("def g"));
  Prepare(core,
          "from pkg.core import label, run\n\n\ndef test_g():\n"
          "    assert run(4) == 6 and label() == 'n'\n",
          "from pkg.core import run\n\n\ndef test_f():\n    assert run(1) == 1\n",
          [](tracer::TraceSet& t) {
            t.files[kF2p] = Ran(kF2p, "test_g", 4, Code("pkg/core.py", 1, "run"));
            t.files[kF2p].edges[{Code(kF2p, 4, "test_g"), Code("pkg/core.py", 7, "label")}] = 1;
            t.files[kF2p].edges[{Code("pkg/core.py", 1, "run"), Code("pkg/core.py", 12, "g")}] = 1;
            t.files[kP2p] = Ran(kP2p, "test_f", 4, Code("pkg/core.py", 1, "run"));
          });
  Answer(true);
  TaskOutcome o = Build();
  ASSERT_TRUE(o.emitted) << RejectionName(o.rejection) << ": " << o.detail;
  ASSERT_EQ(o.repairs.size(), 2u);
  EXPECT_NE(o.repairs[1].find("pkg/core.py::g"), std::string::npos) << o.repairs[1];
  auto inst = taskdir::ReadInstance(env_,
                                    taskdir::TaskDir{options_.out_dir + "/" + o.instance_ids[0]});
  ASSERT_TRUE(inst.ok()) << inst.error();
  EXPECT_EQ(inst->extracted, (std::vector<std::string>{"pkg/core.py::g", "pkg/core.py::label"}));
}

// An application every test file drives through `main`: the F2P file's run reaches `tiny`
// (its own, 2 lines) and `g` (the feature, which two other files also reach), nine files
// reach only `f`. The most specific deeper choice, tiny, leaves too few lines; the retry
// widens to objects up to twice as widely used (never more than --max-share: 3 of 12) and
// takes g too.
TEST_F(BuildTaskTest, TheDeepRetryWidensWhileItsChoiceLeavesTooFewLines) {
  const std::string core =
      "def main(cmd):\n"                  // 1
      "    if cmd == 'render':\n"
      "        return tiny() + g(4)\n"
      "    if cmd == 'count':\n"
      "        return g(3)\n"
      "    return f()\n"
      "\n"
      "\n"
      "def tiny():\n"                     // 9
      "    return 0\n"
      "\n"
      "\n"
      "def f():\n"                        // 13
      "    return 1\n"
      "\n"
      "\n" +
      std::string(kCore).substr(std::string(kCore).find("def g"));  // g at 17
  Prepare(core, "from pkg.core import main\n\n\ndef test_g():\n    assert main('render') == 6\n",
          "from pkg.core import main\n\n\ndef test_f():\n    assert main('x') == 1\n",
          [](tracer::TraceSet& t) {
            const auto main = Code("pkg/core.py", 1, "main");
            t.files[kF2p] = Ran(kF2p, "test_g", 4, main);
            t.files[kF2p].edges[{main, Code("pkg/core.py", 9, "tiny")}] = 1;
            t.files[kF2p].edges[{main, Code("pkg/core.py", 17, "g")}] = 1;
            for (std::string name : {"a", "b"}) {
              std::string file = "tests/test_" + name + ".py";
              t.files[file] = Ran(file, "test_f", 4, main);
              t.files[file].edges[{main, Code("pkg/core.py", 17, "g")}] = 1;
            }
            for (int i = 0; i < 9; ++i) {
              std::string file = i == 0 ? std::string(kP2p) : "tests/test_c" + std::to_string(i) + ".py";
              t.files[file] = Ran(file, "test_f", 4, main);
              t.files[file].edges[{main, Code("pkg/core.py", 13, "f")}] = 1;
            }
          });
  Answer(true);
  options_.min_lines = 4;
  TaskOutcome o = Build();
  ASSERT_TRUE(o.emitted) << RejectionName(o.rejection) << ": " << o.detail;
  auto inst = taskdir::ReadInstance(env_,
                                    taskdir::TaskDir{options_.out_dir + "/" + o.instance_ids[0]});
  ASSERT_TRUE(inst.ok()) << inst.error();
  EXPECT_EQ(inst->extracted, (std::vector<std::string>{"pkg/core.py::g", "pkg/core.py::tiny"}));
}

// A file the repository tracks though its .gitignore matches it (sphinx's test roots hold a
// `*.so`) is in the copy the tests run on.
TEST_F(BuildTaskTest, ATrackedFileTheGitignoreMatchesIsInTheTestedCopy) {
  Write(root_ + "/.gitignore", "*.so\n");
  Write(root_ + "/pkg/data.so", "not really a library\n");
  options_.files.insert(options_.files.end(), {".gitignore", "pkg/data.so"});
  Answer(true);
  auto f2p_needs_g = tests_.respond;
  tests_.respond = [this, f2p_needs_g](const runner::TestRunRequest& r) {
    auto run = f2p_needs_g(r);
    if (run.ok() && !env_.Exists(r.root + "/pkg/data.so")) {
      for (auto& [file, f] : run->files) {
        for (auto& [id, t] : f.tests) {
          if (file == kP2p) t.outcome = runner::Outcome::kFailed;
        }
      }
    }
    return run;
  };
  TaskOutcome o = Build();
  ASSERT_TRUE(o.emitted) << RejectionName(o.rejection) << ": " << o.detail;
  EXPECT_TRUE(o.repairs.empty());
}

// An exception out of one candidate's build (a bug) is that candidate's "internal error", left
// undecided (no state file, so a rerun builds it again); the other candidates go on.
TEST_F(BuildTaskTest, AnExceptionInOneCandidateOfAllLeavesTheOthersBuilt) {
  Answer(/*f2p_needs_g=*/true);
  auto answer = tests_.respond;
  tests_.respond = [this, answer](const runner::TestRunRequest& r) {
    if (Read(r.root + "/pkg/core.py").find("def f") == std::string::npos) {
      throw std::runtime_error("a bug on this candidate");
    }
    return answer(r);
  };
  std::map<std::string, std::string> not_passing;
  AllOptions all;
  all.min_points = 1;
  std::map<std::string, std::string> rejected;
  auto summary = ExtractAll(Services(),
                            {ExtractContext{*repo_, *index_, graph_, passing_}, not_passing, 2},
                            options_, all, [&](const util::BatchItem<TaskOutcome>& item) {
                              if (!item.result->emitted) {
                                rejected[item.result->f2p] = item.result->detail;
                              }
                            });
  ASSERT_TRUE(summary.ok()) << summary.error();
  EXPECT_EQ(summary->emitted, 1u);
  EXPECT_EQ(summary->rejected["internal error"], 1u);
  EXPECT_EQ(rejected[kP2p], "a bug on this candidate");
  auto states = env_.ListDir(options_.out_dir + "/.fbkit/state");
  ASSERT_TRUE(states.ok()) << states.error();
  EXPECT_EQ(states->size(), 1u) << "only the emitted one is decided";
}

// --after asks git when each test file was first committed; when git cannot answer (here:
// no repository) `all` fails with git's error instead of rejecting every file as too old.
TEST_F(BuildTaskTest, AllFailsWithGitsErrorWhenItCannotSayWhenAFileWasFirstCommitted) {
  Answer(/*f2p_needs_g=*/true);
  AllOptions all;
  all.min_points = 1;
  all.after = "2001-01-01";
  auto run = [&] {
    return ExtractAll(Services(),
                      {ExtractContext{*repo_, *index_, graph_, passing_}, {}, 2}, options_, all,
                      [](const util::BatchItem<TaskOutcome>&) {});
  };
  auto failed = run();
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(failed.error().starts_with("--after: when tests/")) << failed.error();
  EXPECT_NE(failed.error().find("not a git repository"), std::string::npos) << failed.error();
  // In a repository, files committed today are candidates.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"init", "-q"},
                                                {"add", "-A"}, {"commit", "-qm", "c"}}) {
    ASSERT_TRUE(git_.Run(root_, args).ok());
  }
  auto summary = run();
  ASSERT_TRUE(summary.ok()) << summary.error();
  EXPECT_EQ(summary->candidates, 2u);
  EXPECT_EQ(summary->rejected.count("first committed before --after"), 0u);
}

TEST(RejectionTest, NamesAreTheWordsOfSummariesAndStateFiles) {
  for (Rejection r : {Rejection::kNone, Rejection::kNoPlan, Rejection::kStillUsed,
                      Rejection::kTooFewLines, Rejection::kUnparsableCut,
                      Rejection::kVerificationFailed, Rejection::kStatement, Rejection::kLevel2,
                      Rejection::kIo, Rejection::kModelUnavailable, Rejection::kInternalError}) {
    EXPECT_EQ(RejectionFromName(RejectionName(r)), r) << RejectionName(r);
  }
  EXPECT_EQ(RejectionName(Rejection::kTooFewLines), "too few lines");
  EXPECT_EQ(RejectionFromName("a word of a newer fbkit"), Rejection::kEarlierRun);
}

}  // namespace
}  // namespace fbkit::extract::make

// The evaluation's pure pieces: predictions parsing, patch normalisation, and the checks
// that mark a run suspicious, each on small exact inputs.
#include "extract/eval/checks.h"

#include <gtest/gtest.h>

#include "extract/eval/apply.h"
#include "extract/eval/instance.h"
#include "extract/eval/report.h"
#include "extract/taskdir/task_dir.h"
#include "runner/git.h"

namespace fbkit::extract::eval {
namespace {

// A patch past the bound (64 MiB unless told) is refused with its line; the others stay.
TEST(Predictions, APatchPastTheBoundIsAnErrorOfItsLine) {
  std::vector<std::string> errors;
  auto p = ParsePredictions("{\"instance_id\": \"a\", \"model_patch\": \"12345\"}\n"
                            "{\"instance_id\": \"b\", \"model_patch\": \"1234\"}\n",
                            "p.jsonl", &errors, 4);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].instance_id, "b");
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "p.jsonl:1: model_patch has 5 bytes, over the 4 bytes an agent's patch may have"}));
  EXPECT_EQ(taskdir::kMaxAgentPatchBytes, 64u << 20);
}

// A row whose strings pass the bound by more than a row's small fields could is refused
// before it is parsed (the parser's copies cost several times its size); a JSON document
// holding such a string is refused whole, a JSONL file keeps its other rows.
TEST(Predictions, ARowFarPastTheBoundIsRefusedUnparsed) {
  std::string huge = "{\"instance_id\": \"a\", \"model_patch\": \"" +
                     std::string((1u << 20) + 10, 'x') + "\"}";
  std::vector<std::string> errors;
  auto p = ParsePredictions(huge + "\n{\"instance_id\": \"b\", \"model_patch\": \"1\"}\n",
                            "p.jsonl", &errors, 4);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].instance_id, "b");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(errors[0].starts_with("p.jsonl:1: 1048609 bytes of strings (the longest 1048586)"))
      << errors[0];
  EXPECT_NE(errors[0].find("not parsed"), std::string::npos);
  errors.clear();
  p = ParsePredictions("[\n" + huge + ",\n{\"instance_id\": \"b\"}]\n", "a.json", &errors, 4);
  EXPECT_TRUE(p.empty());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(errors[0].starts_with("a.json: holds a string of 1048586 bytes")) << errors[0];
}

// A prediction the caller does not want (no such task) keeps its id and place, not its patch.
TEST(Predictions, AnUnwantedPredictionKeepsItsPlaceNotItsPatch) {
  std::vector<std::string> errors;
  auto p = ParsePredictions("{\"instance_id\": \"a\", \"model_patch\": \"12345\"}\n"
                            "{\"instance_id\": \"b\", \"model_patch\": \"67\"}\n",
                            "p.jsonl", &errors, taskdir::kMaxAgentPatchBytes,
                            [](const std::string& id) { return id == "b"; });
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].instance_id, "a");
  EXPECT_EQ(p[0].patch, "");
  EXPECT_EQ(p[1].patch, "67");
  EXPECT_TRUE(errors.empty());
}

TEST(Predictions, JsonLinesArrayAndKeyedObjectWithErrorsPerLine) {
  std::vector<std::string> errors;
  auto lines = ParsePredictions(
      "{\"instance_id\": \"a\", \"model_patch\": \"p\", \"model_name_or_path\": \"m\"}\n\n"
      "[1,\n"
      "{\"model_patch\": \"x\"}\n"
      "{\"instance_id\": \"a\", \"model_patch\": \"q\"}\n"
      "{\"instance_id\": \"b\", \"model_patch\": null}\n",
      "p.jsonl", &errors);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].instance_id, "a");
  EXPECT_EQ(lines[0].patch, "p");
  EXPECT_EQ(lines[0].model, "m");
  EXPECT_EQ(lines[0].where, "p.jsonl:1");
  EXPECT_EQ(lines[1].instance_id, "b");
  EXPECT_EQ(lines[1].patch, "");
  EXPECT_EQ(lines[1].model, "unknown");
  EXPECT_EQ(errors, (std::vector<std::string>{"p.jsonl:3: not valid JSON", "p.jsonl:4: no instance_id",
                                              "p.jsonl:5: a second prediction for a"}));
  errors.clear();
  auto array = ParsePredictions(R"([{"instance_id": "x", "model_patch": "1"}, 7])", "a.json", &errors);
  ASSERT_EQ(array.size(), 1u);
  EXPECT_EQ(errors, (std::vector<std::string>{"a.json[1]: not a JSON object"}));
  errors.clear();
  auto keyed = ParsePredictions(R"({"y": {"model_patch": "2", "model_name_or_path": "k"}})", "k.json",
                                &errors);
  ASSERT_EQ(keyed.size(), 1u);
  EXPECT_EQ(keyed[0].instance_id, "y");
  EXPECT_TRUE(errors.empty());
}

TEST(Apply, BinaryHunksAreBoundedBeforeGitWritesThem) {
  std::string head = "diff --git a/x.bin b/x.bin\nGIT binary patch\n";
  EXPECT_EQ(runner::BinaryPatchProblem("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+literal 9999999999\n", 1000), "");
  EXPECT_EQ(runner::BinaryPatchProblem(head + "literal 600\nzcmX\n\nliteral 0\nHcmV\n", 1000), "");
  EXPECT_NE(runner::BinaryPatchProblem(head + "literal 600\nzcmX\n\n" + head + "literal 600\nzc\n", 1000)
                .find("inflate to more than"),
            std::string::npos);  // together over the limit
  EXPECT_NE(runner::BinaryPatchProblem(head + "delta 12\nzcmX\n", 1000).find("binary delta"), std::string::npos);
  EXPECT_NE(runner::BinaryPatchProblem(head + "literal 99999999999999999999999\nz\n", 1000), "");
}

TEST(Apply, NormalizePatchTurnsCrlfIntoLfAndEndsWithNewline) {
  EXPECT_EQ(runner::NormalizePatch("a\r\nb\r\nc"), "a\nb\nc\n");
  EXPECT_EQ(runner::NormalizePatch("a\rb\n"), "a\rb\n");  // a lone CR is content
  EXPECT_EQ(runner::NormalizePatch(""), "");
}

// Every file under a tests directory is the grader's, not only .py files (red team round 3:
// a tests/__pycache__/*.pyc stood in for tests/helpers.py and was kept).
TEST(EvalChecks, TestFilesAreTheTasksConftestsAndTestDirectories) {
  EXPECT_EQ(TestFilesAmong({"src/a.py", "tests/test_x.py", "conftest.py", "src/pkg/conftest.py",
                            "test_top.py", "README.md", "tests/data.json",
                            "tests/__pycache__/helpers.cpython-311.pyc"},
                           {"test_top.py"}),
            (std::vector<std::string>{"tests/test_x.py", "conftest.py", "src/pkg/conftest.py",
                                      "test_top.py", "tests/data.json",
                                      "tests/__pycache__/helpers.cpython-311.pyc"}));
}

TEST(EvalChecks, CompiledCodeIsWhatPythonMayRunInsteadOfTheSource) {
  for (const char* f : {"src/shapes/__pycache__/stats.cpython-311.pyc", "src/shapes/stats.pyc",
                        "src/_speed.cpython-311-x86_64-linux-gnu.so", "pkg/x.pyd",
                        "__pycache__/notes.txt"}) {
    EXPECT_TRUE(IsCompiledFile(f)) << f;
  }
  for (const char* f : {"src/shapes/stats.py", "docs/so.md", "pycache/a.py"}) {
    EXPECT_FALSE(IsCompiledFile(f)) << f;
  }
}

TEST(EvalChecks, PytestConfigSectionsOnly) {
  std::string cfg = "[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n[flake8]\nmax = 1\n";
  EXPECT_EQ(PytestConfig(cfg), "[tool:pytest]\naddopts = -q\n");
  EXPECT_EQ(PytestConfig("[project]\nname='x'\n[tool.pytest.ini_options]\npythonpath=['src']\n"),
            "[tool.pytest.ini_options]\npythonpath=['src']\n");
  EXPECT_EQ(PytestConfig("[metadata]\nname = y\n"), "");
  const std::set<std::string> tests = {"tests/unit/test_a.py"};
  EXPECT_TRUE(IsPytestConfigFile("pytest.ini", tests));
  EXPECT_TRUE(IsPytestConfigFile("pyproject.toml", tests));
  // Above a test file, pytest may take it (it starts from the test files' directory).
  EXPECT_TRUE(IsPytestConfigFile("tests/pytest.ini", tests));
  EXPECT_TRUE(IsPytestConfigFile("tests/unit/tox.ini", tests));
  EXPECT_FALSE(IsPytestConfigFile("docs/pytest.ini", tests));
  EXPECT_FALSE(IsPytestConfigFile("tests/unit/x/pytest.ini", tests));
  EXPECT_TRUE(DecidesAlone("tests/pytest.ini"));
  EXPECT_FALSE(DecidesAlone("setup.cfg"));
  EXPECT_TRUE(IsStartupFile("src/x-1.0.dist-info/entry_points.txt"));
  EXPECT_TRUE(IsStartupFile("evil.pth"));
  EXPECT_TRUE(IsStartupFile("src/sitecustomize.py"));
  EXPECT_TRUE(IsStartupFile("fbkit_agent.py"));
  EXPECT_TRUE(IsStartupFile("src/fbkit_core/__init__.py"));
  EXPECT_FALSE(IsStartupFile("src/fbkit_agentx.py"));
  EXPECT_FALSE(IsStartupFile("src/pkg/site.py"));
}

TEST(EvalChecks, HooksCountOnlyInFilesThePatchChanged) {
  std::set<std::pair<std::string, std::string>> hooks = {
      {"tests/conftest.py", "pytest_configure"},
      {"_grading.py", "pytest_collection_modifyitems"},
      {"_grading.py", "pytest_runtest_makereport"}};
  EXPECT_EQ(HookReasons(hooks, {"_grading.py", "src/a.py"}),
            (std::vector<std::string>{"_grading.py, changed by the patch, implements pytest hooks: "
                                      "pytest_collection_modifyitems, pytest_runtest_makereport"}));
  EXPECT_TRUE(HookReasons(hooks, {"src/a.py"}).empty());
}

// Inspecting the running frames is what honest code does too (the caller's module through
// sys._getframe(1), a logger's call site): a note, never a reason (issue 65).
TEST(EvalChecks, InspectionsByAChangedFileAreNotesNotReasons) {
  std::set<std::pair<std::string, std::string>> hooks = {
      {"src/a.py", "inspects the running frames (sys._getframe)"},
      {"src/a.py", "pytest_pyfunc_call"},
      {"src/b.py", "inspects the garbage collector's objects (gc.get_objects)"}};
  EXPECT_EQ(HookReasons(hooks, {"src/a.py", "src/b.py"}),
            (std::vector<std::string>{"src/a.py, changed by the patch, implements pytest hooks: "
                                      "pytest_pyfunc_call"}));
  EXPECT_EQ(HookNotes(hooks, {"src/a.py"}),
            (std::vector<std::string>{"src/a.py, changed by the patch, inspects the running "
                                      "frames (sys._getframe)"}));
  EXPECT_TRUE(HookNotes(hooks, {"src/c.py"}).empty());
}

runner::TestRun Trace(int exitstatus, std::optional<int> process_exit,
                      std::map<std::string, std::string> outcomes) {
  runner::TestRun t;
  t.exitstatus = exitstatus;
  t.process_exit = process_exit;
  for (const auto& [id, outcome] : outcomes) {
    std::string file = id.substr(0, id.find("::"));
    t.files[file].nodeids.push_back(id);
    t.files[file].tests[id].outcome = runner::ParseOutcome(outcome);
  }
  return t;
}

TEST(EvalChecks, ExitStatusMustAgreeWithOutcomes) {
  EXPECT_EQ(ExitContradiction(Trace(0, 0, {{"t.py::a", "passed"}, {"t.py::b", "skipped"}})), "");
  EXPECT_EQ(ExitContradiction(Trace(1, 1, {{"t.py::a", "failed"}})), "");
  EXPECT_EQ(ExitContradiction(Trace(0, 0, {{"t.py::a", "failed"}})),
            "pytest exit status 0 although tests failed or errored");
  EXPECT_EQ(ExitContradiction(Trace(1, 1, {{"t.py::a", "passed"}})),
            "pytest exit status 1 although every test passed");
  EXPECT_EQ(ExitContradiction(Trace(1, 0, {{"t.py::a", "failed"}})),
            "the pytest process exited with 0 but its session ended with exit status 1");
  runner::TestRun hung = Trace(1, 1, {{"t.py::a", "passed"}});
  hung.files["t.py"].status = runner::FileStatus::kTimeout;
  EXPECT_EQ(ExitContradiction(hung), "");
}

// The journal is the tested process's too: one rewritten behind pytest's back passes more
// tests than pytest's own summary counts (red team round 5).
TEST(EvalChecks, TheJournalMayNotPassMoreThanPytestsSummaryCounts) {
  runner::TestRun t = Trace(0, 0, {{"t.py::a", "passed"}, {"t.py::b", "passed"}});
  const std::string honest = "==== session-1.log\ncollected 2 items\n\nt.py ..\n"
                             "============================== 2 passed in 0.01s "
                             "===============================\n";
  EXPECT_EQ(SummaryContradiction(t, honest), "");
  const std::string forged = "==== session-1.log\nt.py FF\n"
                             "\x1b[31m========== 2 failed in 0.02s ==========\x1b[0m\n";
  EXPECT_EQ(SummaryContradiction(t, forged),
            "pytest's own summary counts 0 tests passed, its journal 2 (the journal was "
            "rewritten?)");
  // Two sessions (-q style lines), counted together; a session without a summary: no check.
  const std::string two = "==== session-1.log\n1 passed in 0.01s\n"
                          "==== session-2.log\n1 failed, 1 passed, 2 warnings in 0.30s\n";
  EXPECT_EQ(SummaryContradiction(t, two), "");
  EXPECT_EQ(SummaryContradiction(t, "==== session-1.log\n1 passed in 0.01s\n"
                                    "==== session-2.log\nKilled\n"), "");
  runner::TestRun more = Trace(0, 0, {{"t.py::a", "passed"}, {"t.py::b", "passed"},
                                      {"u.py::c", "passed"}});
  EXPECT_NE(SummaryContradiction(more, two), "");
}

// The tested code prints what it likes and the patch writes what it likes: long lines and
// huge counts are read without a backtracking regex's recursion or an exception (red team
// round 12: a 1 MB summary-looking line and a 300,000-character first comment crashed eval;
// "99999999999999999999999 passed" threw out of the instance).
TEST(EvalChecks, LongLinesAndHugeCountsAreReadWithoutCrashing) {
  runner::TestRun t = Trace(0, 0, {{"t.py::a", "passed"}});
  std::string bomb = "==== session-1.log\n1 passed in 0.01s\n== 1 passed in 1s " +
                     std::string(1000000, 'x') + "\n\x1b[" + std::string(500000, '1') + "\n";
  EXPECT_EQ(SummaryContradiction(t, bomb), "");
  const std::string huge = "==== session-1.log\n== 99999999999999999999999 passed in 1s ==\n";
  EXPECT_EQ(SummaryContradiction(t, huge), "");
  std::string comment = "#" + std::string(300000, 'a') + "\nx = 1\n";
  EXPECT_EQ(HiddenSourceProblem("m.py", comment, false), "");
  std::string declared = "#" + std::string(300000, 'a') + " coding: rot13\nx = 1\n";
  EXPECT_EQ(HiddenSourceProblem("m.py", declared, false),
            "m.py declares the source encoding rot13 (Python decodes other text than the diff "
            "shows)");
  EXPECT_EQ(HiddenSourceProblem("m.py", "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n", false), "");
  EXPECT_NE(HiddenSourceProblem("m.py", "# vim: set fileencoding=utf_7 :\n", false), "");
}

TEST(EvalChecks, VanishedTestsOnlyFromFilesThatCollected) {
  runner::TestRun t = Trace(0, 0, {{"a.py::x", "passed"}});
  t.files["b.py"].status = runner::FileStatus::kCollectError;
  EXPECT_EQ(VanishedTests(t, {"a.py::x", "a.py::y", "b.py::z", "c.py::w"}),
            (std::vector<std::string>{"a.py::y"}));
}

TEST(EvalChecks, OriginalPackagesFromTheOutermostPackageDirectory) {
  auto is_package = [](const std::string& dir) { return dir == "src/shapes" || dir == "lib/a" || dir == "lib/a/b"; };
  EXPECT_EQ(taskdir::OriginalPackages({"src/shapes/core.py::Area", "lib/a/b/c.py::f", "tool.py::main",
                              "scripts/run.py::go"},
                             is_package),
            (std::set<std::string>{"a", "run", "shapes", "tool"}));
}

TEST(EvalChecks, LibraryReadsAreCommandsOnInstalledSources) {
  std::string log =
      "$ cat /usr/local/lib/python3.11/site-packages/click/core.py\n"
      "  File \"/usr/lib/python3/dist-packages/click/core.py\", line 1\n"
      "$ grep -n def /usr/lib/python3/dist-packages/clickx/a.py\n"
      "$ sed -n 1,20p /usr/lib/python3/dist-packages/click/types.py\n"
      "open('/x/site-packages/click-8.1.dist-info/METADATA')\n";
  EXPECT_EQ(LibraryReads(log, {"click"}),
            (std::vector<std::string>{"$ cat /usr/local/lib/python3.11/site-packages/click/core.py",
                                      "$ sed -n 1,20p /usr/lib/python3/dist-packages/click/types.py"}));
  EXPECT_TRUE(LibraryReads(log, {"shapes"}).empty());
}

TEST(EvalReport, JsonRoundTripsAndSummaryCountsPerModelAndRepository) {
  EvalReport a;
  a.instance_id = "o__r.1.t.h.lv1";
  a.model = "m";
  a.repo = "o/r";
  a.applied = true;
  a.apply_method = "git apply";
  a.f2p = {{"t.py::a", "passed"}, {"t.py::b", "failed"}};
  a.f2p_passed = 1;
  a.pass_rate = 0.5;
  a.exitstatus = 1;
  auto back = ParseReport(ReportJson(a));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(ReportJson(*back), ReportJson(a));
  EvalReport b = a;
  b.instance_id = "o__r.1.u.h.lv1";
  b.resolved = true;
  b.pass_rate = 1;
  EvalReport c;
  c.instance_id = "p__q.1.t.h.lv1";
  c.model = "m";
  c.repo = "p/q";
  c.empty_patch = true;
  EvalTotals t = Totals({&a, &b, &c});
  EXPECT_EQ(t.instances, 3u);
  EXPECT_EQ(t.resolved, 1u);
  EXPECT_EQ(t.applied, 2u);
  EXPECT_EQ(t.empty, 1u);
  EXPECT_DOUBLE_EQ(t.passed_rate(), 0.5);
  std::string table = SummaryTable({a, b, c});
  EXPECT_NE(table.find("o/r                                    2        1      50.0     75.0    100.0"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("all                                    3        1      33.3     50.0     66.7"),
            std::string::npos)
      << table;
  EXPECT_FALSE(ParseReport("{}").ok());
}

}  // namespace
}  // namespace fbkit::extract::eval

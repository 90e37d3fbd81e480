// End-to-end: `fb-extract eval` on tasks extracted from the extract_features fixture. Gold
// patches resolve every task with identical reports on a second run; patches that fail or
// try to game the grader (tests/cli/adversarial_patches.py) are scored as they should be;
// finished instances are skipped on a re-run; bad input gets clear errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "tests/testing/e2e.h"
#include "tests/testing/run.h"

namespace fbkit::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* const kForged[] = {"forge_xfail", "forge_reports", "forge_rewrite_tests",
                               "forge_atexit_journal", "forge_fake_origin_hook",
                               "forge_rewrite_journal", "forge_journal_writer",
                               "forge_writer_exit", "forge_hook_caller_exit",
                               "forge_hook_trampoline", "forge_sly_duration",
                               "forge_shadow_plugin", "forge_code_swap", "ignored_conftest",
                               "forge_runner_swap", "forge_builtin",
                               "mute_journal", "forge_report_class",
                               "forge_reports_before_selection", "subdir_ini_swap",
                               "fake_test_module", "forge_builtin_hook",
                               "forge_unchanged_file_hook", "forge_wrapped_tests",
                               "forge_late_swap", "swap_by_trace", "swap_by_logstart",
                               "teststatus_proxy", "unset_file", "hidden_utf7",
                               "shadow_package", "own_audit_hook", "reads_test_file",
                               "forge_journal_file_write", "forge_wrapped_hook",
                               "forge_item_runtest", "skip_asserts", "swap_raises"};

class EvalE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    ASSERT_TRUE(fs::exists(Shared("done"))) << "run ctest (eval_tasks_setup)";
  }
  // The traced fixture (repo/) and its tasks (tasks/), made once by eval_tasks_setup; read only.
  static std::string Shared(const std::string& path) {
    return std::string(FBKIT_EVAL_DATA) + "/" + path;
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string Task(const std::string& stem, int level) {
    for (const auto& e : fs::directory_iterator(Shared("tasks"))) {
      std::string name = e.path().filename();
      if (name.find("." + stem + ".") != std::string::npos &&
          name.ends_with(".lv" + std::to_string(level))) {
        return e.path();
      }
    }
    return "";
  }

  static RunResult Eval(const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> argv = {kExtract, "eval", Shared("tasks"), "-o", out, "-q"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }

  // The only report of a run directory.
  static json OnlyReport(const std::string& run) {
    for (const auto& e : fs::directory_iterator(run)) {
      if (fs::exists(e.path() / "report.json")) return json::parse(ReadFileOrDie(e.path() / "report.json"));
    }
    return json();
  }

  // A reason naming `hook` among the hooks a file the patch changed implements (the list
  // names every hook the file was journaled for, in order).
  static bool AnyHookReason(const json& r, const std::string& hook) {
    const std::string lead = "implements pytest hooks: ";
    for (const auto& s : r["suspicious_reasons"]) {
      std::string why = s.get<std::string>();
      size_t at = why.find(lead);
      if (at != std::string::npos && why.find(hook, at + lead.size()) != std::string::npos) return true;
    }
    return false;
  }

  // A note (an observation that decides no verdict) containing `needle`.
  static bool AnyNote(const json& r, const std::string& needle) {
    for (const auto& s : r["notes"]) {
      if (s.get<std::string>().find(needle) != std::string::npos) return true;
    }
    return false;
  }

  static bool AnyReason(const json& r, const std::string& needle) {
    for (const auto& s : r["suspicious_reasons"]) {
      if (s.get<std::string>().find(needle) != std::string::npos) return true;
    }
    return false;
  }

  // Forged results: each is not resolved and flagged for what it did.
  static void ExpectForgedResultsFlagged(std::map<std::string, json>& r) {
    EXPECT_TRUE(AnyReason(r["forge_xfail"], "made an expected failure by pytest.xfail() called from src/shapes/"))
        << r["forge_xfail"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_reports"], "TestReport.from_item_and_call was replaced"))
        << r["forge_reports"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_reports"], "but was reported as passed"));
    EXPECT_TRUE(AnyReason(r["forge_rewrite_tests"], "differs from tests/test_stats.py on disk"))
        << r["forge_rewrite_tests"].dump(1);
    // Records the tested code writes on the journal's descriptor are not signed with the
    // process's key: refused whatever they say or when.
    EXPECT_TRUE(AnyReason(r["forge_atexit_journal"], "a journal record fbkit's plugin did not write"))
        << r["forge_atexit_journal"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_fake_origin_hook"], "does not come from the file it names"))
        << r["forge_fake_origin_hook"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_rewrite_journal"], "tried to reopen fbkit's journal through /proc/self/fd/"))
        << r["forge_rewrite_journal"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_journal_writer"],
                          "fbkit's journal writer (fbkit_core.Journal.write) was replaced"))
        << r["forge_journal_writer"].dump(1);
    // Red team round c: fbkit's own writer (which signs) called by the library, or the
    // plugin's report hook through pytest's hook caller, then os._exit(0): the signer takes
    // verdict records only from fbkit's hooks under pytest's own session.
    for (const char* name : {"forge_writer_exit", "forge_hook_caller_exit", "forge_journal_writer"}) {
      EXPECT_TRUE(AnyReason(r[name], "record was asked of fbkit's journal writer from ")) << r[name].dump(1);
      EXPECT_TRUE(AnyReason(r[name], "/src/shapes/__init__.py")) << r[name].dump(1);
      EXPECT_FALSE(r[name]["resolved"]) << name;
    }
    // Rounds d and e: pytest's hook callers driven from an interpreter's callback (only
    // pytest's frames below), a report value whose type is not JSON's own.
    EXPECT_TRUE(AnyReason(r["forge_hook_trampoline"], "its hooks called by the standard library's"))
        << r["forge_hook_trampoline"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_sly_duration"], "holding values of other types than JSON's own"))
        << r["forge_sly_duration"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_code_swap"], "Function.runtest was replaced while the tests ran (its code"))
        << r["forge_code_swap"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_report_class"], "pytest's TestReport.outcome was changed"))
        << r["forge_report_class"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_report_class"], "fbkit's plugin's _integrity was replaced"))
        << r["forge_report_class"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_builtin"], "the builtin isinstance was replaced"))
        << r["forge_builtin"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_builtin_hook"], "runs no Python code"))
        << r["forge_builtin_hook"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_unchanged_file_hook"], "does not come from the file it names"))
        << r["forge_unchanged_file_hook"].dump(1);
    EXPECT_TRUE(AnyHookReason(r["forge_wrapped_tests"], "the wrapper of test"))
        << r["forge_wrapped_tests"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_late_swap"], "was replaced after it was collected"))
        << r["forge_late_swap"].dump(1);
    for (const char* swap : {"swap_by_trace", "swap_by_logstart"}) {
      EXPECT_TRUE(AnyReason(r[swap], "the tested code replaced __code__ of the test function"))
          << r[swap].dump(1);
    }
    EXPECT_TRUE(AnyReason(r["skip_asserts"], "installed a trace or profile function (sys.settrace"))
        << r["skip_asserts"].dump(1);
    EXPECT_TRUE(AnyHookReason(r["swap_raises"], "pytest's pytest.raises, replaced"))
        << r["swap_raises"].dump(1);
    EXPECT_TRUE(AnyReason(r["teststatus_proxy"], "but pytest's outcome is failed"))
        << r["teststatus_proxy"].dump(1);
    EXPECT_TRUE(AnyReason(r["unset_file"], "without its file tests/test_stats.py"))
        << r["unset_file"].dump(1);
    EXPECT_TRUE(AnyReason(r["hidden_utf7"], "declares the source encoding utf-7"))
        << r["hidden_utf7"].dump(1);
    EXPECT_TRUE(AnyReason(r["shadow_package"], "beside the module"))
        << r["shadow_package"].dump(1);
    EXPECT_TRUE(AnyReason(r["own_audit_hook"], "added an audit hook"))
        << r["own_audit_hook"].dump(1);
    EXPECT_TRUE(AnyReason(r["reads_test_file"], "reads the grader's test file tests/test_stats.py"))
        << r["reads_test_file"].dump(1);
    EXPECT_TRUE(AnyReason(r["mute_journal"], "journal descriptor was pointed elsewhere"))
        << r["mute_journal"].dump(1);
    EXPECT_TRUE(AnyReason(r["mute_journal"], "escape attempt")) << r["mute_journal"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_runner_swap"], "although pytest never called it"))
        << r["forge_runner_swap"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_reports_before_selection"], "a journal record fbkit's plugin did not write"))
        << r["forge_reports_before_selection"].dump(1);
    EXPECT_TRUE(AnyReason(r["subdir_ini_swap"], "changes pytest's configuration in tests/pytest.ini"))
        << r["subdir_ini_swap"].dump(1);
    // Every file under tests/ is put back now: the configuration that named the fake module
    // never reaches pytest, and the attempt is flagged.
    EXPECT_TRUE(
        AnyReason(r["fake_test_module"], "changes pytest's configuration in tests/pytest.ini"))
        << r["fake_test_module"].dump(1);
    EXPECT_TRUE(AnyReason(r["ignored_conftest"], "the patch edits conftest.py (put back"))
        << r["ignored_conftest"].dump(1);
    EXPECT_LT(r["ignored_conftest"]["pass_rate"].get<double>(), 1.0);
    EXPECT_TRUE(AnyReason(r["forge_shadow_plugin"], "the patch adds fbkit_agent.py"))
        << r["forge_shadow_plugin"].dump(1);
    // The checks stayed on: the forged reports were seen too.
    EXPECT_TRUE(AnyReason(r["forge_shadow_plugin"], "TestReport.from_item_and_call was replaced"))
        << r["forge_shadow_plugin"].dump(1);
    // Red team round 5: the journal's file rewritten with the session key, a hook's origin
    // claimed through __wrapped__, pytest's Function.setup replaced.
    // (The key is sealed in the writer's signer now: the rewritten lines go unsigned.)
    EXPECT_TRUE(AnyReason(r["forge_journal_file_write"], "a journal record fbkit's plugin did not write"))
        << r["forge_journal_file_write"].dump(1);
    EXPECT_TRUE(AnyHookReason(r["forge_wrapped_hook"], "pytest_pyfunc_call"))
        << r["forge_wrapped_hook"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_item_runtest"], "pytest's _pytest.python.Function.setup, replaced"))
        << r["forge_item_runtest"].dump(1);
    EXPECT_TRUE(AnyReason(r["forge_item_runtest"], "Function.runtest of its test items, replaced"))
        << r["forge_item_runtest"].dump(1);
    for (const char* name : kForged) {
      EXPECT_TRUE(r[name]["suspicious"]) << name;
      EXPECT_FALSE(r[name]["resolved"]) << name;
    }
    // neither the records appended at exit nor those rewritten in place were believed
    EXPECT_LT(r["forge_atexit_journal"]["pass_rate"].get<double>(), 1.0);
    EXPECT_LT(r["forge_rewrite_journal"]["pass_rate"].get<double>(), 1.0);
  }

  static ScratchDir* dir_;
};

ScratchDir* EvalE2E::dir_ = nullptr;

TEST_F(EvalE2E, GoldPatchesResolveEveryTaskWithIdenticalReportsTwice) {
  auto first = Eval(*dir_ / "gold1", {"--gold", "-j", "2", "--html", *dir_ / "gold.html"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto second = Eval(*dir_ / "gold2", {"--gold", "--format", "table"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  json summary = json::parse(ReadFileOrDie(*dir_ / "gold1/summary.json"));
  EXPECT_EQ(summary["instances"], 4);
  EXPECT_EQ(summary["resolved"], 4);
  EXPECT_EQ(summary["resolved_rate"], 1.0);
  EXPECT_EQ(summary["passed_rate"], 1.0);
  EXPECT_EQ(summary["patch_apply_rate"], 1.0);
  EXPECT_EQ(summary["suspicious"], 0);
  EXPECT_EQ(ReadFileOrDie(*dir_ / "gold1/summary.json"), ReadFileOrDie(*dir_ / "gold2/summary.json"));
  int reports = 0;
  for (const auto& e : fs::directory_iterator(*dir_ / "gold1")) {
    if (!fs::exists(e.path() / "report.json")) continue;
    ++reports;
    std::string name = e.path().filename();
    json r = json::parse(ReadFileOrDie(e.path() / "report.json"));
    EXPECT_TRUE(r["resolved"]) << name;
    EXPECT_EQ(r["f2p_passed"], r["FAIL_TO_PASS"].size()) << name;
    EXPECT_GE(r["FAIL_TO_PASS"].size(), 10u) << name;
    EXPECT_EQ(ReadFileOrDie(e.path() / "report.json"), ReadFileOrDie(*dir_ / ("gold2/" + name + "/report.json")))
        << name;
    EXPECT_NE(ReadFileOrDie(e.path() / "test_output.txt").find("passed"), std::string::npos);
  }
  EXPECT_EQ(reports, 4);
  EXPECT_NE(second.out.find("local/repo"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("100.0"), std::string::npos) << second.out;
  std::string html = ReadFileOrDie(*dir_ / "gold.html");
  EXPECT_NE(html.find(fs::path(Task("test_stats", 2)).filename().string()), std::string::npos);
}

TEST_F(EvalE2E, AdversarialPatchesAreScoredAndFlagged) {
  auto made = RunCommand({kPython, kSource + "/tests/cli/adversarial_patches.py",
                          Task("test_stats", 1), Task("test_stats", 2), *dir_ / "adv"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::map<std::string, json> r;
  for (const auto& e : fs::directory_iterator(*dir_ / "adv")) {
    std::string name = e.path().stem();
    auto run = Eval(*dir_ / ("runs/" + name), {"--predictions", e.path(), "--timeout", "10"});
    r[name] = OnlyReport(*dir_ / ("runs/" + name));
    // An instance that could not be scored makes the status 3, its error said whole.
    bool errored = !r[name]["error"].get<std::string>().empty();
    EXPECT_EQ(run.exit_code, errored ? 3 : 0) << name << run.err;
    if (errored) {
      EXPECT_NE(run.err.find(r[name]["error"].get<std::string>()), std::string::npos) << name;
    }
  }
  ASSERT_EQ(r.size(), 63u);
  // l2_peek is the gold with a library function reading its caller's frame and doing
  // nothing with it: honest code does that too, so it is a note, not a verdict (issue 65).
  const std::set<std::string> honest = {"gold_crlf", "gold_fuzzy", "edits_test_file", "l2_gold",
                                        "l2_gold_odd_attributes", "l2_peek"};
  for (const auto& ok : honest) {
    EXPECT_TRUE(r[ok]["resolved"]) << ok << r[ok].dump(1);
    EXPECT_FALSE(r[ok]["suspicious"]) << ok;
  }
  EXPECT_EQ(r["gold_crlf"]["apply_method"], "git apply");
  EXPECT_EQ(r["gold_fuzzy"]["apply_method"], "patch --fuzz");
  EXPECT_EQ(r["edits_test_file"]["test_files_reverted"].size(), 1u);
  for (const auto& [name, report] : r) {
    if (!honest.count(name)) {
      EXPECT_FALSE(report["resolved"]) << name;
    }
  }
  EXPECT_TRUE(r["empty"]["empty_patch"]);
  EXPECT_EQ(r["empty"]["pass_rate"], 0.0);
  EXPECT_FALSE(r["binary_bomb"]["applied"]);
  EXPECT_NE(r["binary_bomb"]["apply_error"].get<std::string>().find("inflate to more than 64 MiB"),
            std::string::npos) << r["binary_bomb"].dump(1);
  EXPECT_FALSE(r["not_applying"]["applied"]);
  EXPECT_NE(r["not_applying"]["apply_error"], "");
  EXPECT_TRUE(AnyReason(r["compiled_gold"], "the patch adds compiled code src/shapes/__pycache__/"))
      << r["compiled_gold"].dump(1);
  EXPECT_LT(r["compiled_gold"]["pass_rate"].get<double>(), 1.0) << "the bytecode ran";
  EXPECT_TRUE(r["breaks_import"]["applied"]);
  EXPECT_EQ(r["breaks_import"]["pass_rate"], 0.0);
  EXPECT_FALSE(r["breaks_import"]["suspicious"]);
  // The conftest that skips everything is put back: the tests run and fail, and the
  // attempt is flagged.
  EXPECT_TRUE(r["conftest_skip"]["suspicious"]);
  EXPECT_EQ(r["conftest_skip"]["test_files_reverted"], json::array({"tests/conftest.py"}));
  EXPECT_EQ(r["conftest_skip"]["pass_rate"], 0.0);
  for (const auto& [id, outcome] : r["conftest_skip"]["FAIL_TO_PASS"].items()) {
    EXPECT_NE(outcome, "skipped") << id;
  }
  EXPECT_TRUE(r["hang"]["timed_out"]);  // --timeout bounds the whole instance
  EXPECT_EQ(r["hang"]["pass_rate"], 0.0);
  json hang_summary = json::parse(ReadFileOrDie(*dir_ / "runs/hang/summary.json"));
  EXPECT_EQ(hang_summary["timed_out"], 1);
  EXPECT_TRUE(AnyReason(r["plugin_by_config"], "configuration in pytest.ini"));
  EXPECT_TRUE(AnyReason(r["plugin_by_config"], "_grading.py, changed by the patch, implements"));
  EXPECT_TRUE(AnyReason(r["plugin_by_config"], "vanished from collection"));
  EXPECT_TRUE(AnyReason(r["plugin_by_entry_point"], "entry_points.txt"));
  EXPECT_TRUE(AnyReason(r["plugin_by_entry_point"], "vanished from collection"));
  ExpectForgedResultsFlagged(r);
  // Outcome runs give child processes no journal directory: the forgery has nowhere to go.
  EXPECT_LT(r["forge_child_journal"]["pass_rate"].get<double>(), 1.0);
  EXPECT_FALSE(fs::exists("/tmp/fbkit-filter-ran"));
  // Patches into git's own files or out of the work copy: refused before any tool reads
  // them, flagged, and nothing ran or was written.
  for (const char* name : {"git_config_by_fuzz", "escape_path"}) {
    EXPECT_FALSE(r[name]["applied"]) << name;
    EXPECT_TRUE(r[name]["suspicious"]) << name;
  }
  EXPECT_TRUE(AnyReason(r["git_config_by_fuzz"], "a path inside a git directory (a/.git/config)"))
      << r["git_config_by_fuzz"].dump(1);
  EXPECT_TRUE(AnyReason(r["escape_path"], "climbs out of the work copy")) << r["escape_path"].dump(1);
  EXPECT_FALSE(fs::exists("/tmp/fbkit-host-filter-ran"));
  // The L2 code that tries to plant a git filter in the repository's .git/config (read-only:
  // it fails) is flagged for trying; otherwise the task would resolve.
  EXPECT_TRUE(AnyReason(r["l2_probe_escape"], "escape attempt: tried to write"))
      << r["l2_probe_escape"].dump(1);
  EXPECT_EQ(r["l2_probe_escape"]["pass_rate"], 1.0);
  // The original's sources read and run as agent_code's own: the feature's code is not in
  // the tree an L2 task is graded in.
  EXPECT_LT(r["l2_exec_original"]["pass_rate"].get<double>(), 1.0) << r["l2_exec_original"].dump(1);
  // Re-exporting the original fails the tests as well (what it would re-export of the
  // feature is not there) and is caught, statically and at run time.
  EXPECT_TRUE(AnyReason(r["l2_reexport"], "agent_code/__init__.py:1 imports the original library"));
  EXPECT_TRUE(AnyNote(r["l2_peek"], "agent_code/stats.py, changed by the patch, inspects the running frames"))
      << r["l2_peek"].dump(1);
  EXPECT_TRUE(AnyReason(r["l2_reexport_dynamic"], "loads the original library: shapes"));
  EXPECT_TRUE(AnyReason(r["l2_reexport_dynamic"], "objects come from the original library"));
  for (const char* name : {"l2_reexport", "l2_reexport_dynamic", "l2_reexport_thread"}) {
    EXPECT_LT(r[name]["pass_rate"].get<double>(), 1.0) << name;
  }
  EXPECT_TRUE(AnyReason(r["l2_reexport_thread"], "loads the original library: shapes"))
      << r["l2_reexport_thread"].dump(1);
}

// The forged results again, evaluated by fbkit running as an ordinary user (nobody, who
// owns a copy of the tasks): the sandbox is then a user namespace, the grader the same.
// Red team round 9: a wrong Vector whose library makes the tests' helper comparators always
// true, through sys.modules, the helper file on disk, or the test module's globals.
TEST_F(EvalE2E, ALibraryThatForgesTheTestsHelpersIsNotResolved) {
  auto made = RunCommand({kPython, kSource + "/tests/cli/helper_forgeries.py",
                          Task("test_vectors", 1), *dir_ / "helpers"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::map<std::string, json> r;
  for (const char* name :
       {"sys_modules", "rewrite_file", "frame_globals", "callable_objects", "helper_builtin",
        "runtime_package", "runtime_package_file", "pyfunc_impl", "environ_runtest",
        "checks_off", "forged_builtins", "laundered_frames", "forged_getter",
        "swallowing_runtest", "helper_literal", "helper_in_place", "stdlib_swap"}) {
    auto run = Eval(*dir_ / ("runs/" + std::string(name)),
                    {"--predictions", *dir_ / ("helpers/" + std::string(name) + ".jsonl")});
    EXPECT_EQ(run.exit_code, 0) << name << run.err;
    r[name] = OnlyReport(*dir_ / ("runs/" + std::string(name)));
    EXPECT_FALSE(r[name]["resolved"]) << name << r[name].dump(1);
  }
  EXPECT_TRUE(AnyReason(r["sys_modules"], "close, imported from helpers (tests/helpers.py), is not that file's"))
      << r["sys_modules"].dump(1);
  EXPECT_TRUE(AnyReason(r["frame_globals"], "the name close of tests/test_vectors.py was rebound"))
      << r["frame_globals"].dump(1);
  EXPECT_TRUE(AnyReason(r["callable_objects"], "close, imported from helpers (tests/helpers.py), is not that file's"))
      << r["callable_objects"].dump(1);
  EXPECT_TRUE(AnyReason(r["helper_builtin"], "the name abs of tests/helpers.py was added"))
      << r["helper_builtin"].dump(1);
  EXPECT_TRUE(AnyReason(r["runtime_package"], "the module helpers was loaded from "
                                               "tests/helpers/__init__.py, not from the grader's "
                                               "tests/helpers.py"))
      << r["runtime_package"].dump(1);
  EXPECT_TRUE(AnyReason(r["runtime_package_file"],
                        "the name abs of tests/helpers.py shadows a builtin, though the file "
                        "binds no such name"))
      << r["runtime_package_file"].dump(1);
  EXPECT_TRUE(AnyHookReason(r["pyfunc_impl"], "pytest_pyfunc_call"))
      << r["pyfunc_impl"].dump(1);
  EXPECT_TRUE(AnyReason(r["pyfunc_impl"], "never ran, yet its call returned"))
      << r["pyfunc_impl"].dump(1);
  EXPECT_TRUE(AnyReason(r["environ_runtest"], "never ran, yet its call returned"))
      << r["environ_runtest"].dump(1);
  EXPECT_TRUE(AnyReason(r["checks_off"], "the grader's checks did not run before the call of"))
      << r["checks_off"].dump(1);
  EXPECT_TRUE(AnyReason(r["helper_literal"], "tests/helpers.py's TOLERANCE is not the 1e-09 its file writes"))
      << r["helper_literal"].dump(1);
  EXPECT_TRUE(AnyReason(r["helper_in_place"], "the helper close of tests/helpers.py was changed in place"))
      << r["helper_in_place"].dump(1);
  EXPECT_TRUE(AnyReason(r["stdlib_swap"], "the standard library's math.isclose was replaced"))
      << r["stdlib_swap"].dump(1);
  EXPECT_TRUE(AnyReason(r["forged_builtins"], "tests/helpers.py runs with builtins other than "
                                               "the interpreter's"))
      << r["forged_builtins"].dump(1);
  // The peek is seen through the stdlib's getters and noted; the wrong Vector fails its tests.
  EXPECT_TRUE(AnyNote(r["laundered_frames"], "inspects the running frames"))
      << r["laundered_frames"].dump(1);
  EXPECT_TRUE(AnyReason(r["forged_getter"], "code compiled under the name of"))
      << r["forged_getter"].dump(1);
  EXPECT_TRUE(AnyReason(r["swallowing_runtest"], "between pytest's own frames"))
      << r["swallowing_runtest"].dump(1);
  EXPECT_TRUE(AnyReason(r["swallowing_runtest"], "item was changed while it ran"))
      << r["swallowing_runtest"].dump(1);
  // The helper file is read-only while the tests run: the rewrite fails and so does length().
  EXPECT_LT(r["rewrite_file"]["pass_rate"].get<double>(), 1.0);
}

// A helper the grader's file decorates with the package's own decorator runs the package's
// wrapper by the grader's choice: the gold of such a task is resolved, not flagged (red team
// round 10 found it flagged).
TEST_F(EvalE2E, AHelperDecoratedByThePackageKeepsTheGoldResolved) {
  ScratchDir tmp;
  fs::path task = tmp / "tasks" / fs::path(Task("test_vectors", 1)).filename();
  ASSERT_EQ(RunCommand({"/bin/mkdir", "-p", tmp / "tasks"}).exit_code, 0);
  ASSERT_EQ(RunCommand({"/bin/cp", "-r", Task("test_vectors", 1), task}).exit_code, 0);
  auto edited = RunCommand(
      {"/bin/sh", "-c",
       "cd " + (task / "presolved").string() +
           " && sed -i 's/^def close_pair/@traced\\ndef close_pair/; 1a from shapes.util import traced' "
           "tests/helpers.py && grep -q '^@traced' tests/helpers.py && git -c user.name=t "
           "-c user.email=t@t commit -qam 'helpers: close_pair traced'"});
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  auto run = RunCommand({kExtract, "eval", tmp / "tasks", "--gold", "-o", tmp / "run", "-q"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  json report = OnlyReport(tmp / "run");
  EXPECT_TRUE(report["resolved"]) << report.dump(1);
  EXPECT_FALSE(report["suspicious"]) << report.dump(1);
}

TEST_F(EvalE2E, AsAnOrdinaryUserForgedResultsAreFlaggedToo) {
  if (::geteuid() != 0) GTEST_SKIP() << "becoming another user takes root";
  NobodyLock lock;
  ScratchDir tmp;
  ASSERT_EQ(RunCommand({"/bin/cp", "-r", Shared("tasks"), tmp / "tasks"}).exit_code, 0);
  std::string stats1, stats2;
  for (const auto& e : fs::directory_iterator(tmp / "tasks")) {
    std::string name = e.path().filename();
    if (name.find(".test_stats.") == std::string::npos) continue;
    (name.ends_with(".lv1") ? stats1 : stats2) = e.path();
  }
  auto made = RunCommand({kPython, kSource + "/tests/cli/adversarial_patches.py", stats1, stats2,
                          tmp / "adv"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  GiveToNobody(tmp.path());
  std::map<std::string, json> r;
  for (const char* name : kForged) {
    std::vector<std::string> argv = kAsNobody;
    argv.insert(argv.end(), {"/usr/bin/env", "HOME=" + tmp.path(), kExtract, "eval",
                             tmp / "tasks", "-o", tmp / ("runs/" + std::string(name)), "-q",
                             "--predictions", tmp / ("adv/" + std::string(name) + ".jsonl"),
                             "--timeout", "10"});
    auto run = RunCommand(argv);
    EXPECT_EQ(run.exit_code, 0) << name << run.err;
    r[name] = OnlyReport(tmp / ("runs/" + std::string(name)));
  }
  ExpectForgedResultsFlagged(r);
}

TEST_F(EvalE2E, RerunSkipsFinishedInstancesAndAgentLogsAreChecked) {
  std::string id = fs::path(Task("test_vectors", 1)).filename();
  std::string logs = *dir_ / "logs";
  fs::create_directories(logs);
  WriteFileOrDie(logs + "/" + id + ".log",
                 "$ python -m pytest\n  File \"/usr/lib/python3/dist-packages/shapes/x.py\", line 3\n"
                 "$ cat /usr/lib/python3/dist-packages/shapes/vectors.py\n");
  auto first = Eval(*dir_ / "resume", {"--gold", "--instance", id, "--agent-logs", logs});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  json r = OnlyReport(*dir_ / "resume");
  EXPECT_TRUE(r["suspicious"]);
  ASSERT_EQ(r["suspicious_reasons"].size(), 1u) << r.dump(1);
  EXPECT_NE(r["suspicious_reasons"][0].get<std::string>().find("cat /usr/lib/python3/dist-packages/shapes/vectors.py"),
            std::string::npos);
  auto again = RunCommand({kExtract, "eval", Shared("tasks"), "-o", *dir_ / "resume", "--gold",
                           "--instance", id});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("(earlier run)"), std::string::npos) << again.err;
  auto forced = RunCommand({kExtract, "eval", Shared("tasks"), "-o", *dir_ / "resume", "--gold",
                            "--instance", id, "--rerun"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(forced.err.find("(earlier run)"), std::string::npos) << forced.err;
  EXPECT_TRUE(OnlyReport(*dir_ / "resume")["resolved"]);  // no log this time
}

// Every test file a patch touches is put back by git runs of its own: a patch touching more
// than a thousand is not applied (red team round 12: 1,500 new empty files under tests/ took
// 2.5 minutes, and the 64 MiB bound admits 750,000).
TEST_F(EvalE2E, APatchTouchingThousandsOfTestFilesIsNotApplied) {
  std::string id = fs::path(Task("test_stats", 1)).filename();
  std::string patch;
  for (int i = 0; i < 1001; ++i) {
    std::string f = "tests/zz/f" + std::to_string(i) + ".py";
    patch += "diff --git a/" + f + " b/" + f + "\nnew file mode 100644\nindex 0000000..e69de29\n";
  }
  WriteFileOrDie(*dir_ / "many.jsonl",
                 json{{"instance_id", id}, {"model_patch", patch}, {"model_name_or_path", "m"}}.dump() + "\n");
  auto run = Eval(*dir_ / "many", {"--predictions", *dir_ / "many.jsonl"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  json r = OnlyReport(*dir_ / "many");
  EXPECT_FALSE(r["applied"]) << r.dump(1);
  EXPECT_FALSE(r["resolved"]);
  EXPECT_TRUE(AnyReason(r, "the patch touches 1001 test files (at most 1000 are put back)")) << r.dump(1);
}

TEST_F(EvalE2E, BadInputGetsClearErrors) {
  EXPECT_EQ(Eval(*dir_ / "bad", {}).exit_code, 2);
  EXPECT_EQ(Eval(*dir_ / "bad", {"--gold", "--format", "xml"}).exit_code, 2);
  auto missing = Eval(*dir_ / "bad", {"--predictions", *dir_ / "none.jsonl"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("none.jsonl"), std::string::npos) << missing.err;
  auto not_tasks = RunCommand({kExtract, "eval", Shared("repo"), "--gold", "-o", *dir_ / "bad"});
  EXPECT_EQ(not_tasks.exit_code, 1);
  EXPECT_NE(not_tasks.err.find("no task directories"), std::string::npos) << not_tasks.err;
  std::string id = fs::path(Task("test_vectors", 1)).filename();
  std::string good = json{{"instance_id", id}, {"model_patch", ""}, {"model_name_or_path", "m"}}.dump();
  WriteFileOrDie(*dir_ / "mixed.jsonl",
                 good + "\n{not json\n" + R"({"instance_id": "nope", "model_patch": ""})" + "\n" +
                     good + "\n");
  auto mixed = Eval(*dir_ / "mixed", {"--predictions", *dir_ / "mixed.jsonl"});
  EXPECT_EQ(mixed.exit_code, 3) << mixed.err;
  EXPECT_NE(mixed.err.find("mixed.jsonl:2: not valid JSON"), std::string::npos) << mixed.err;
  EXPECT_NE(mixed.err.find("mixed.jsonl:3: no task nope"), std::string::npos) << mixed.err;
  EXPECT_NE(mixed.err.find("mixed.jsonl:4: a second prediction for " + id), std::string::npos);
  EXPECT_TRUE(OnlyReport(*dir_ / "mixed")["empty_patch"]);
  // A predictions file larger than one largest patch per task is refused before it is read
  // (a sparse 2 GiB file here: read whole, 3 GiB ended eval in std::bad_alloc).
  {
    std::ofstream huge(*dir_ / "huge.jsonl");
    huge << good << "\n";
  }
  fs::resize_file(*dir_ / "huge.jsonl", 2ull << 30);
  auto huge = Eval(*dir_ / "huge", {"--predictions", *dir_ / "huge.jsonl"});
  EXPECT_EQ(huge.exit_code, 1) << huge.err;
  EXPECT_NE(huge.err.find("huge.jsonl: 2147483648 bytes, more than"), std::string::npos) << huge.err;
  // A task whose presolved/ is a link: git would read whatever repository it names (here the
  // real task's, in general any of the host's). Refused for that task, before any git runs,
  // by eval and verify alike.
  std::string real = Task("test_vectors", 1);
  fs::path linked = *dir_ / "linked" / fs::path(real).filename();
  fs::create_directories(linked);
  for (const char* f : {"instance.json", "patch.diff", "test_patch.diff", "problem_statement.md"}) {
    fs::copy_file(fs::path(real) / f, linked / f);
  }
  fs::create_directory_symlink(fs::path(real) / "presolved", linked / "presolved");
  std::string why = (linked / "presolved").string() +
                    ": not a directory (a task's presolved/ and its .git are plain directories)";
  auto link = RunCommand({kExtract, "eval", *dir_ / "linked", "--gold", "-o", *dir_ / "ev-linked", "-q"});
  EXPECT_EQ(OnlyReport(*dir_ / "ev-linked")["error"], why) << link.err;
  auto verify = RunCommand({kExtract, "verify", linked});
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_NE(verify.err.find(why), std::string::npos) << verify.err;
}

}  // namespace
}  // namespace fbkit::testing

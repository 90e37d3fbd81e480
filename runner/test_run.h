// A run of a repository's tests for their outcomes only, as verification, evaluation and
// RACE's execution filter and ablation make it: what is asked, what comes back, and the
// interface that runs it (tracer::AgentTestRunner runs pytest under fbkit's agent, in the
// sandbox; unit tests use testing::FakeTestRunner).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runner/outcome.h"
#include "runner/spec.h"
#include "util/expected.h"

namespace fbkit::runner {

// How a test file's run ended.
enum class FileStatus { kOk, kCollectError, kCrashed, kTimeout, kNotRun };
// "ok", "collect_error", "crashed", "timeout", "not_run".
const char* FileStatusName(FileStatus status);

struct TestResult {
  std::string nodeid;
  std::map<std::string, std::string> phases;  // setup/call/teardown -> pytest category
  Outcome outcome = Outcome::kNotRun;         // the phases combined (CombineOutcome)
  double duration = 0;
  std::optional<std::string> message;  // the first failure's text
};

// One test file's part of a run.
struct FileRun {
  FileStatus status = FileStatus::kOk;
  std::optional<std::string> error;  // collection error, or the crash/timeout and output tail
  std::vector<std::string> nodeids;  // as collected
  std::map<std::string, TestResult> tests;
};

// The outcome of a test from its phases' categories, the way pytest's summary sees it: the
// worst of error, failed, xpassed, xfailed, skipped, passed; no category and no call is error.
Outcome CombineOutcome(const std::map<std::string, std::string>& phases);

struct TestRunRequest {
  std::string root;  // a work copy (writable inside the sandbox)
  // The tree a spec's environment is keyed on and built from, when not `root`: an
  // evaluation's is the task's own, never the agent's patched copy.
  std::string env_root;
  RepoSpec spec;     // the repo spec; its `tests` are replaced by `files`
  std::vector<std::string> files;             // root-relative test files
  std::vector<std::string> extra_pythonpath;  // after the spec's entries
  double total_timeout = 0;                   // bounds the whole run (0: the spec's)
  std::string work_dir;                       // private to fbkit: agent, journals, logs
  // Root-relative files bound read-only over the writable root (the grader's test files).
  std::vector<std::string> protect;
  // An L2 evaluation: the directory holding the agent's agent_code package and the original
  // library's package directories (absolute). The plugin then reports, from inside the graded
  // session itself, what of the original library agent_code imports or re-exports.
  std::string l2_site;
  std::vector<std::string> l2_originals;
  // The task's own packages (top-level names): a copy of one the sandbox would show outside
  // ROOT is refused, hidden or allowed as spec.exposed_copies says (sandbox/exposure.h).
  std::set<std::string> guard_packages;
};

// The hook name fbkit's plugin journals for a grader's test file read while the tests run,
// followed by the file's path; the journal names the repository files on the stack.
inline constexpr std::string_view kReadsTestFile = "reads the grader's test file ";

// The hook name prefix for repository code that inspects the running frames or the garbage
// collector's objects while the tests run (what it called follows).
inline constexpr std::string_view kInspects = "inspects ";

// Whether a journaled hook is one a task's own gold run may show (a repository helper that
// reads its tests, or inspects frames): recorded at verification, not flagged by eval.
inline bool IsTaskHook(std::string_view hook) {
  return hook.starts_with(kReadsTestFile) || hook.starts_with(kInspects);
}

struct TestRun {
  std::optional<int> exitstatus;    // of the (last) pytest session, as its hooks saw it
  std::optional<int> process_exit;  // the exit code of the last finished pytest process
  // (root-relative file, hook name): repository code implementing pytest hooks that shape
  // collection or reported outcomes.
  std::set<std::pair<std::string, std::string>> hooks;
  // Signs that the tested process tampered with its outcomes (records after pytest
  // finished, two reports of one phase, report machinery replaced, ...).
  std::vector<std::string> integrity;
  // Observations for review that do not decide a verdict (honest code can make them too).
  std::vector<std::string> notes;
  std::map<std::string, FileRun> files;
};

// Runs test files for their outcomes. Fails when the interpreter or pytest cannot be run or
// nothing could be collected; a file that crashes, hangs or fails to collect is reported in
// the TestRun. Run may be called from several threads at once (batch commands with -j).
class TestRunner {
 public:
  virtual ~TestRunner() = default;
  virtual util::Expected<TestRun> Run(const TestRunRequest& request) = 0;
};

// Test id -> outcome, for every test the run reported (a test never collected is absent).
std::map<std::string, Outcome> OutcomesOf(const TestRun& run);

// The outcome of test `id` in `outcomes` (as OutcomesOf gives them); nullopt when the run did
// not report it (missing).
std::optional<Outcome> ReportedOutcome(const std::map<std::string, Outcome>& outcomes,
                                       const std::string& id);

// The outcome name of test `id` in `run`: its own, else its file's status when the file did
// not run normally, else "missing".
std::string OutcomeOf(const TestRun& run, const std::string& id);

}  // namespace fbkit::runner

// Scoring an agent's patch on one fbkit task, the way FeatureBench does but spoof-proof:
// L1 applies the patch to a fresh clone of presolved/ (fallback chain), puts back any test
// file it touched, adds the F2P file and runs F2P + P2P with fbkit's own pytest plugin; L2
// installs the patch's `agent_code` package in a private path beside the restored original
// repository and checks it neither imports nor re-exports that repository. Outcomes come
// from pytest's hooks; what would make them untrustworthy marks the instance suspicious.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <functional>
#include <string>
#include <vector>

#include "extract/taskdir/task_dir.h"
#include "runner/services.h"
#include "sandbox/process.h"
#include "runner/test_run.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::eval {

// One line (or element) of a predictions file, SWE-bench's convention.
struct Prediction {
  std::string instance_id;
  std::string model;  // model_name_or_path
  std::string patch;  // model_patch
  std::string where;  // "FILE:LINE" (or "FILE[INDEX]") for messages
};

// Predictions from JSON (an array of objects, or an object keyed by instance id) or JSON
// lines. Bad entries go to `errors` ("FILE:LINE: why") and are skipped, so one bad line
// never drops the others; a duplicate instance id is an error, and so is a patch of more
// than `max_patch_bytes`. A prediction `wanted` refuses keeps its id and place but not its
// patch (a file of many large patches for other tasks is not held in memory).
using PredictionFilter = std::function<bool(const std::string& instance_id)>;
std::vector<Prediction> ParsePredictions(const std::string& text, const std::string& path,
                                         std::vector<std::string>* errors,
                                         uint64_t max_patch_bytes = taskdir::kMaxAgentPatchBytes,
                                         const PredictionFilter& wanted = {});

struct EvalOptions {
  double timeout = 0;       // seconds per pytest run and per test file (0: the task's own)
  std::string work_dir;     // scratch space for this instance (removed afterwards)
  std::string agent_log;    // the agent's log text for this instance ("" = none)
  std::string level1_dir;   // L2: the L1 task beside it (default: the sibling .lv1)
  // How the agent's code is isolated (every process that imports or tests it): bubblewrap
  // unless the user said `--sandbox none`; recorded in the report.
  sandbox::SandboxKind sandbox = sandbox::SandboxKind::kBwrap;
  // kContainer: each task's environment image by instance id (fb-extract images' manifest)
  // and the engine that runs them.
  std::map<std::string, std::string> images;
  std::string engine = "podman";
  std::string environment_cache;    // where environments built from install steps are cached
  bool trust_settings = false;  // its repo_settings may widen the sandbox (--trust-task-settings)
  // What a copy of the task's packages the tests' sandbox would show does (runner/
  // exposure.h); default: the task's spec.
  std::optional<sandbox::CopyPolicy> exposed_copies;
};

struct EvalReport {
  std::string instance_id;
  std::string model;
  std::string repo;
  int level = 1;
  std::string patch_sha256;
  bool empty_patch = false;
  bool applied = false;
  std::string apply_method;
  std::string apply_error;  // the last attempt's complaint when the patch did not apply
  std::string error;  // why the instance could not be evaluated (task, patch, pytest)
  bool timed_out = false;
  std::vector<std::string> test_files_reverted;
  std::map<std::string, std::string> f2p;  // test id -> outcome ("missing" if not run):
                                           // runner::F2PPasses counts it, runner::P2PHolds a P2P one
  std::map<std::string, std::string> p2p;
  size_t f2p_passed = 0;
  size_t p2p_passed = 0;  // passed, xfailed or skipped
  double pass_rate = 0;
  // Suspicious: evidence honest code cannot produce (the journal broken, the grader's files
  // changed, a graded test not run by its own code, ...); it decides the verdict.
  bool suspicious = false;
  std::vector<std::string> suspicious_reasons;
  // Observations for review that honest code makes too (frames inspected by a file the patch
  // changed, a copy of a test's function given defaults): reported, never deciding.
  std::vector<std::string> notes;
  bool resolved = false;
  std::string sandbox;  // "bwrap" or "none": how the agent's code ran
  // Token IO the agent reported (from its infer run), when known.
  std::optional<int64_t> input_tokens;
  std::optional<int64_t> output_tokens;
  std::optional<double> cost;
  std::optional<int64_t> api_calls;
  std::optional<int> exitstatus;
  std::string test_output;  // pytest's output (not part of report.json)
};

// Never fails: problems are reported in the EvalReport.
EvalReport EvaluateInstance(const runner::Services& services,
                            const std::string& task_dir, const Prediction& prediction,
                            const EvalOptions& options);

}  // namespace fbkit::extract::eval

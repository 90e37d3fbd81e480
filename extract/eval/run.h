// `fb-extract eval` as one library call: the predictions of one shard evaluated against their
// task directories `jobs` at a time, each written to RUN_DIR/ID/ (patch.diff,
// test_output.txt, report.json); a report for the same patch, model and sandbox is kept
// unless `rerun`. Then the summary over every report in RUN_DIR for the predictions, whichever
// shard or earlier run wrote it, written to RUN_DIR/summary.json under RUN_DIR's lock.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "extract/eval/instance.h"
#include "runner/services.h"
#include "sandbox/process.h"
#include "runner/test_run.h"
#include "util/batch.h"
#include "util/env.h"
#include "util/expected.h"
#include "util/shard.h"

namespace fbkit::extract::eval {

// The predictions to evaluate: the gold patches of `tasks` (id -> task directory, found in
// `tasks_dir`) when `predictions_path` is "", else the file's (one without a task is an error
// in `errors`, skipped); only the ids of `only` when it is not empty; sorted by instance id.
util::Expected<std::vector<Prediction>> LoadPredictions(
    util::Env& env, const std::map<std::string, std::string>& tasks, const std::string& tasks_dir,
    const std::string& predictions_path, const std::vector<std::string>& only,
    std::vector<std::string>* errors);

struct EvalRunOptions {
  std::map<std::string, std::string> tasks;  // instance id -> task directory
  std::vector<Prediction> predictions;       // sorted by instance id
  std::string run_dir;                       // absolute, made by the caller
  // Where the agents' logs are: DIR/ID.{log,txt,json,jsonl,traj,md} or DIR/ID/; else, for
  // predictions an `fb-extract infer` run wrote, its run directory ("" for neither).
  std::string agent_logs;
  std::string infer_run;
  util::Shard shard;
  int jobs = 1;
  bool rerun = false;
  EvalOptions eval;  // timeout, sandbox, env cache (work_dir and agent_log are per instance)
};

struct EvalRunResult {
  std::vector<EvalReport> reports;  // every finished report for the predictions
  std::string summary_json;         // as written to RUN_DIR/summary.json
  std::vector<std::string> write_errors;  // reports that could not be written
  // "ID: what" for each prediction whose evaluation threw (a bug): no report, so a rerun
  // evaluates it again.
  std::vector<std::string> internal_errors;
  std::string error;                // why summary.json could not be written ("" when it was)
};

// The directory of the `fb-extract infer` run that wrote `predictions_path` (its
// predictions.jsonl beside the instances' result.json), or "".
std::string InferRunOf(util::Env& env, const std::string& predictions_path,
                       const std::vector<Prediction>& predictions);

// One prediction's evaluation (EvaluateInstance over the run's services; a test's fake).
using EvalStep = std::function<EvalReport(const std::string& task_dir, const Prediction& prediction,
                                          const EvalOptions& options)>;

// Never fails: reports and the summary that cannot be written are named in the result.
// `step` evaluates each prediction (default: EvaluateInstance).
EvalRunResult EvaluateRun(
    const runner::Services& services,
    const EvalRunOptions& options,
    const std::function<void(const util::BatchItem<EvalReport>&)>& report,
    const EvalStep& step = {});

}  // namespace fbkit::extract::eval

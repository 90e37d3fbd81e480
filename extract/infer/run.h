// `fb-extract infer` as one library call: an agent on the tasks of one shard, `jobs` at a
// time, each instance's result.json and model written to RUN_DIR/ID/ (a final result of an
// earlier run is kept unless `rerun`); once an agent cannot start at all the instances not
// yet started are left alone. Then RUN_DIR/predictions.jsonl over every instance directory
// with a final result (shards sharing RUN_DIR, under its lock) and the shard's summary
// (infer_summary.json, or infer_summary.K-of-N.json).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "extract/infer/instance.h"
#include "sandbox/process.h"
#include "util/batch.h"
#include "util/env.h"
#include "util/expected.h"
#include "util/shard.h"

namespace fbkit::extract::infer {

struct InferRunOptions {
  std::vector<std::pair<std::string, std::string>> instances;  // this shard's (id, task dir)
  std::map<std::string, std::string> tasks;  // every task: predictions.jsonl covers them all
  std::string model;                         // recorded as each instance's model name
  util::Shard shard;
  int jobs = 1;
  bool rerun = false;
  InferOptions infer;  // the agent, its sandbox and limits; run_dir absolute
};

struct InferRunResult {
  std::vector<InferResult> results;  // of the instances started (or resumed), in order
  std::string summary_json;          // fbkit.infer-summary/1, as written
  std::string error;  // why predictions.jsonl or the summary could not be written, or ""
};

// One instance's agent run (RunAgent over the run's env and launcher; a test's fake).
using AgentStep =
    std::function<InferResult(const std::string& task_dir, const InferOptions& options)>;

// Never fails: what cannot be written is named in the result (an instance's result.json in
// its InferResult's error). `step` runs each instance (default: RunAgent).
InferRunResult InferRun(
    util::Env& env, sandbox::Launcher& launcher, const InferRunOptions& options,
    const std::function<void(const util::BatchItem<InferResult>&)>& report,
    const AgentStep& step = {});

}  // namespace fbkit::extract::infer

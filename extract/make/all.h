// `fb-extract all` as one library call: the test files of a trace that can be a task's F2P
// file (at least `min_points` passing tests; first committed on or after `after`, when given), this
// shard's share of them, `jobs` at a time; each one resumed from its state under
// OUT/.fbkit/state unless `rerun`, else built now (BuildTask) and its state written; then
// the shard's summary, written to OUT/summary.json (summary.K-of-N.json for a shard).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "extract/make/task.h"
#include "runner/services.h"
#include "sandbox/process.h"
#include "runner/test_run.h"
#include "util/batch.h"
#include "util/env.h"
#include "util/expected.h"
#include "util/shard.h"

namespace fbkit::extract::make {

struct AllOptions {
  int min_points = 10;
  std::string after;                // ISO 8601: first committed on or after it; "" for any
  util::Shard shard;  // candidates dealt round robin (util::InShard)
  int jobs = 1;
  bool rerun = false;               // build every candidate again, ignoring earlier states
};

// What the traced repository offers: its files that pass, the others with why not, and the
// number of test files in the trace.
struct AllInputs {
  const ExtractContext& ctx;
  const std::map<std::string, std::string>& not_passing;
  size_t test_files = 0;
};

struct AllSummary {
  util::Shard shard;
  size_t test_files = 0;
  size_t candidates = 0;  // this shard's
  size_t resumed = 0;     // finished by an earlier run
  size_t emitted = 0;     // F2P files with a task (this run's and earlier runs')
  size_t instances = 0;   // task directories written by this run
  size_t level2 = 0;      // emitted F2P files with an L2 task
  int tried = 0;          // candidates built by this run
  int pytest_runs = 0;
  int repaired = 0;       // emitted tasks whose plan was repaired after a failed verification
  int repair_rounds = 0;
  int flaky_tests = 0;    // left out of emitted tasks: their outcome changed between two runs
  double fbkit_seconds = 0;
  double pytest_seconds = 0;
  // By reason: RejectionName, or why a test file is no candidate. Candidates left undecided
  // because the model could not answer (Rejection::kModelUnavailable) keep no resume state
  // (a rerun builds them again); `all` fails when any is.
  std::map<std::string, size_t> rejected;
  std::vector<std::pair<std::string, std::string>> l2_rejected;  // F2P file, why no L2 task
  // Every test file that got no task this run, and why: the rule (as in `rejected`) and its
  // evidence (the plan's or verification's message, the test points counted), by path.
  struct Left {
    std::string reason;
    std::string detail;
  };
  std::map<std::string, Left> left_out;
  std::vector<std::string> write_errors;  // resume states that could not be written
  std::string model;  // the model's usage this run (model::UsageJson), "" without one
};

// One candidate's task (BuildTask over the run's services and a worker's parser; a test's
// fake).
using BuildStep = std::function<TaskOutcome(const PassingFile& f2p, const ExtractOptions& options)>;

// `report` is told of each finished candidate (util::RunBatch: one call at a time; resumed
// for one an earlier run finished). Fails when a parser cannot be made or the summary cannot
// be written; a state that cannot be written is reported in the summary's write_errors.
// `step` builds each candidate (default: BuildTask).
util::Expected<AllSummary> ExtractAll(
    const runner::Services& services,
    const AllInputs& inputs, const ExtractOptions& options, const AllOptions& all,
    const std::function<void(const util::BatchItem<TaskOutcome>&)>& report,
    const BuildStep& step = {});

// The summary as written to OUT/summary.json (keys sorted; docs/formats.md).
std::string AllSummaryJson(const AllSummary& s);

// Where a run (a shard of one) over `out_dir` writes its summary: summary.json, or
// summary.K-of-N.json for a shard.
std::string AllSummaryPath(const std::string& out_dir, const util::Shard& shard = {});

}  // namespace fbkit::extract::make

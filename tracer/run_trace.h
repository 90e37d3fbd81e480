// Runs a repository's pytest suite under the embedded agent and collects a TraceSet: one
// session for all test files (resumed in a new session after a crash or a per-file
// timeout), or one process per test file (--isolate). Never writes into the repository.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/process.h"
#include "runner/spec.h"
#include "runner/test_run.h"
#include "tracer/trace.h"
#include "util/env.h"
#include "util/expected.h"
#include "util/shard.h"

namespace fbkit::tracer {

struct TraceOptions {
  std::string root;  // absolute
  // What the tests need: interpreter (or install steps building one), paths, env, pytest
  // arguments, tests, excluded dirs, timeouts, network, limits and the sandbox kind.
  runner::RepoSpec spec;
  // true: ROOT is fbkit's own work copy (outcome runs), the source of the private copy the
  // tests see; false: the user's checkout, of which git's files are copied first.
  bool root_is_work_copy = false;
  std::string env_root;  // the tree the spec's environment comes from ("": root)
  bool isolate = false;
  int jobs = 1;                   // processes at once in isolate mode
  std::string work_dir;           // private: agent sources, journals, logs
  bool record = true;             // false: outcomes only, no call edges (no profiler)
  bool accelerate = true;         // compile and use the C accelerator when possible
  std::string accel_cache_dir;    // compiled accelerators, per interpreter and ABI
  std::string compiler = "cc";
  // Root-relative files bound read-only over a writable ROOT (the grader's test files).
  std::vector<std::string> protect;
  // Outcome runs of an L2 evaluation (runner::TestRunRequest's l2_site, l2_originals).
  std::string l2_site;
  std::vector<std::string> l2_originals;
  // Outcome runs of a task (runner::TestRunRequest's guard_packages).
  std::set<std::string> guard_packages;
  // Isolate mode: run only part `shard.index` of `shard.count` contiguous parts of the
  // runnable files (ShardBounds); a file weighs shard_weights[file] when given (a previous
  // run's durations; files it lacks weigh the mean), else its size in bytes.
  util::Shard shard;
  std::map<std::string, double> shard_weights;
};

struct TraceProgress {
  size_t files_done = 0;
  size_t files_total = 0;  // 0 while collecting
  std::string current;
};
using TraceProgressFn = std::function<void(const TraceProgress&)>;

// Fails when the interpreter or pytest cannot be run, or nothing could be collected; a
// test file that crashes, hangs or fails to collect is reported inside the TraceSet.
util::Expected<TraceSet> RunTrace(util::Env& env, sandbox::Launcher& launcher,
                                  const TraceOptions& options,
                                  const TraceProgressFn& progress);

// The outcomes of a traced run (its files' outcomes, hooks, integrity findings, exit).
runner::TestRun TestRunOf(const TraceSet& trace);

// Runs test files for their outcomes under the agent: RunTrace with the request's files in
// a private copy of its root, no profiler and no accelerator, --continue-on-collection-errors.
class AgentTestRunner final : public runner::TestRunner {
 public:
  AgentTestRunner(util::Env& env, sandbox::Launcher& launcher) : env_(env), launcher_(launcher) {}
  util::Expected<runner::TestRun> Run(const runner::TestRunRequest& request) override;

 private:
  util::Env& env_;
  sandbox::Launcher& launcher_;
};

}  // namespace fbkit::tracer

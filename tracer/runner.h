// Runs a repository's pytest suite under the embedded agent and collects a TraceSet: one
// session for all test files (resumed in a new session after a crash or a per-file
// timeout), or one process per test file (--isolate). Never writes into the repository.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tracer/process.h"
#include "tracer/spec.h"
#include "tracer/trace.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::tracer {

struct TraceOptions {
  std::string root;  // absolute
  // What the tests need: interpreter (or install steps building one), paths, env, pytest
  // arguments, tests, excluded dirs, timeouts, network, limits and the sandbox kind.
  RepoSpec spec;
  bool root_writable = false;     // false: the sandbox mounts ROOT read-only
  bool isolate = false;
  int jobs = 1;                   // processes at once in isolate mode
  std::string work_dir;           // private: agent sources, journals, logs
  bool record = true;             // false: outcomes only, no call edges (no profiler)
  bool accelerate = true;         // compile and use the C accelerator when possible
  std::string accel_cache_dir;    // compiled accelerators, per interpreter and ABI
  std::string compiler = "cc";
  // Root-relative files bound read-only over a writable ROOT (the grader's test files).
  std::vector<std::string> protect;
  // Isolate mode: run only part `shard_index` (1-based) of `shard_count` contiguous parts of
  // the runnable files (ShardBounds); a file weighs shard_weights[file] when given (a
  // previous run's durations; files it lacks weigh the mean), else its size in bytes.
  int shard_index = 1;
  int shard_count = 1;
  std::map<std::string, double> shard_weights;
};

struct TraceProgress {
  size_t files_done = 0;
  size_t files_total = 0;  // 0 while collecting
  std::string current;
};
using TraceProgressFn = std::function<void(const TraceProgress&)>;

// Where a process running repository or agent code starts: the interpreter (the spec's, or
// the one its install steps built, built on first use under the work dir unless the spec
// names a cache) and the sandbox (the spec's kind, network and limits; ROOT and the
// interpreter readable, ROOT writable when asked with its .git read-only, the scratch dir
// writable). Every such process fbkit starts gets its ProcessSpec::sandbox from here; what
// fbkit reads back from a writable tree it reads with Env::ReadUntrusted.
struct ConfineRequest {
  std::string root;
  bool root_writable = false;
  std::string work_dir;  // fbkit's own (never writable inside)
  std::string scratch;   // writable inside ("" for none)
};
struct Confinement {
  std::string python;
  Sandbox sandbox;
};
util::Expected<Confinement> Confine(util::Env& env, Launcher& launcher, const RepoSpec& spec,
                                    const ConfineRequest& request);

// Fails when the interpreter or pytest cannot be run, or nothing could be collected; a
// test file that crashes, hangs or fails to collect is reported inside the TraceSet.
util::Expected<TraceSet> RunTrace(util::Env& env, Launcher& launcher, const TraceOptions& options,
                                  const TraceProgressFn& progress);

// Runs `files` in `root` (a work copy: writable in the sandbox) with outcomes only (no
// profiler, no accelerator) and --continue-on-collection-errors; `extra_pythonpath` goes
// after the settings' entries; `total_timeout` (0 = none) bounds the whole run.
util::Expected<TraceSet> RunOutcomes(util::Env& env, Launcher& launcher, const std::string& root,
                                     const RepoSpec& settings,
                                     const std::vector<std::string>& files,
                                     const std::vector<std::string>& extra_pythonpath,
                                     double total_timeout, const std::string& work_dir,
                                     const std::vector<std::string>& protect = {});

// Test id -> outcome; a test file that reported no test gets "<file>PATH" -> its status.
std::map<std::string, std::string> OutcomesOf(const TraceSet& trace);

}  // namespace fbkit::tracer

// Execution filtering (RACE's validation step): run an instance's touched test files at
// the base commit with the test patch, then with the gold patch too, and classify every
// test by its two outcomes.
//
// Rule per test id (outcomes: passed, failed, error, skipped, xfailed, xpassed, or missing
// when the run did not report it, e.g. its file failed to collect):
//   after passed in every gold run:  before failed/error/missing -> FAIL_TO_PASS,
//                                    before passed -> PASS_TO_PASS,
//                                    before skipped/xfailed/xpassed -> ignored;
//   after failed/error:              before passed -> broken, else still_failing;
//   after missing (before reported): removed;   after skipped/xfailed/xpassed: ignored;
//   different outcomes across the --repeat gold runs: flaky (in no other list).
// An instance is discarded (with the reason) when a patch does not apply, it touches no
// runnable test file, or no test goes from failing to passing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "groundtruth/records.h"
#include "runner/outcome.h"
#include "runner/services.h"
#include "sandbox/process.h"
#include "runner/test_run.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::groundtruth {

// Test id -> outcome of every test a run reported; a test it did not report is missing.
using Outcomes = std::map<std::string, runner::Outcome>;

// Runs the test files (root-relative) of the checkout `root` for their outcomes, as the repo
// spec `spec` says, with `pythonpath` before the spec's own; `work_dir` is removed after.
// The spec's environment comes from `env_root` (EnvironmentSource) when `root` declares the
// same dependencies, else from `root` itself.
util::Expected<Outcomes> TestOutcomes(util::Env& env, runner::TestRunner& tests,
                                      const std::string& root, const std::string& env_root,
                                      const runner::RepoSpec& spec,
                                      const std::vector<std::string>& pythonpath,
                                      const std::vector<std::string>& files,
                                      const std::string& work_dir);

// How an instance's validation ended; ValidationStatusName is what validation.jsonl says.
enum class ValidationStatus {
  kOk,         // "ok": a test goes from failing to passing
  kDiscarded,  // "discarded": no such test, or a patch that does not apply
  kError,      // "error": it could not run
};
const char* ValidationStatusName(ValidationStatus status);

struct Validation {
  std::string instance_id;
  ValidationStatus status = ValidationStatus::kDiscarded;
  std::string reason;
  std::vector<std::string> test_files;
  std::vector<std::string> fail_to_pass, pass_to_pass, flaky, broken, still_failing, removed,
      ignored;
};

// Classifies every test of `before` and the gold runs `after` (one per repeat).
void Classify(const Outcomes& before, const std::vector<Outcomes>& after, Validation* v);

// The test files of a test patch worth running: test_*.py or *_test.py that exist after it.
std::vector<std::string> RunnableTests(const std::string& test_patch);

// Why a checkout could not be prepared: the base commit could not be checked out (the run
// failed), or a patch does not apply (the instance is at fault). The message says which step.
struct CheckoutError {
  bool patch = false;
  std::string message;
};

// Checks out the base commit into `dir` and applies the test patch (and, with `gold`, the
// gold patch); nullopt when all went well.
std::optional<CheckoutError> PrepareCheckout(util::Env& env, sandbox::Launcher& launcher,
                                             const Instance& instance, const std::string& dir,
                                             bool gold);

// Where the runs of an instance take the spec's environment from: a checkout with the test
// and gold patches at `dir`, made once, so that one environment serves every run (before,
// after, each ablation) that declares its dependencies; "" when the spec installs nothing
// or the checkout fails (each run then builds from its own tree, and the run that needs the
// checkout reports why it failed).
std::string EnvironmentSource(util::Env& env, sandbox::Launcher& launcher,
                              const Instance& instance, const runner::RepoSpec& spec,
                              const std::string& dir);

// The whole validation of one instance in `work_dir` (removed afterwards).
Validation Validate(const runner::Services& services,
                    const Instance& instance,
                    const runner::RepoSpec& spec, int repeat, const std::string& work_dir);

// One JSON line (keys sorted) for a validation.
std::string ValidationJson(const Validation& v);

}  // namespace fbkit::groundtruth

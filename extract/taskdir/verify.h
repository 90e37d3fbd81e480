// Post-verification of a task directory, from its files alone: on a fresh clone of
// `presolved/` with the test patch applied, the P2P tests pass and the F2P file's pass rate
// is at most a threshold; with `patch.diff` applied too, every F2P and P2P test passes.
// Two pytest invocations, outcomes from the agent's hooks (never from printed logs); a
// round that fails runs once more, and tests whose outcomes differ are flaky (left out).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "runner/services.h"
#include "runner/git.h"
#include "sandbox/process.h"
#include "runner/test_run.h"
#include "extract/taskdir/task_dir.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::taskdir {

struct VerifyOptions {
  double f2p_max_pass = 0.3;
  std::string work_dir;  // scratch space (removed afterwards)
  // L2: the L1 task whose presolved/ the tests run in (default: the sibling directory whose
  // id ends in .lv1).
  std::string level1_dir;
  sandbox::SandboxKind sandbox = sandbox::SandboxKind::kBwrap;  // how the tests are isolated
  std::string environment_cache;  // where environments built from install steps are cached
  // The tree the spec's environment is built from: the repository the task was cut from,
  // while extracting; "" for the one the task rebuilds (EnvironmentTree).
  std::string env_root;
  // The task's repo_settings may widen the sandbox (CheckTaskSettings): the user vouches
  // for the task (--trust-task-settings), or fbkit has just written it.
  bool trust_settings = false;
};

// Which check a task failed.
enum class VerifyFailure {
  kNone,
  kSetup,      // the task's files, git, pytest itself
  kP2P,        // P2P tests fail (or do not run) on the pre-solved code
  kF2PPasses,  // the F2P file passes too much on the pre-solved code
  kGold,       // tests fail with the gold patch applied
};

struct VerifyReport {
  bool ok = false;
  VerifyFailure failure = VerifyFailure::kNone;
  std::string reason;  // why not
  // kP2P: the failing tests' messages and the test files' collection errors, in full.
  std::vector<std::string> messages;
  double f2p_pass_before = 0;
  size_t f2p_points = 0;
  size_t p2p_points = 0;
  int pytest_runs = 0;
  double pytest_seconds = 0;
  std::vector<std::string> failures;  // test ids that did not behave, with their outcome
  // Tests whose outcome differed between two runs of the same code (a failing round runs
  // once more before it decides): left out of every check; the task should drop them.
  std::set<std::string> flaky;
  // (repository file, hook) of the gold run's journal: a grader's test file read through
  // files the gold patch changed (a test that hands its own path to the library, as click's
  // File options do). The task records them so that eval does not flag the gold for them.
  std::set<std::pair<std::string, std::string>> gold_test_file_reads;
};

// The tree verification builds a task's environment from, made at `dest`: the repository
// it was cut from, rebuilt from the L1 task `level1` (presolved/ with patch.diff and
// test_patch.diff applied), the same tree for every task of one commit, so one environment
// serves them all; the L1 task's presolved/ itself when its patches do not apply. `git` is
// confined already. Never for an agent's runs: the environment would hold the gold.
std::string EnvironmentTree(runner::Git& git, const TaskDir& level1, const std::string& dest);

VerifyReport VerifyTask(const runner::Services& services,
                        const std::string& task_dir, const VerifyOptions& options);

// Runs the given test files in `root` with outcomes only: test id -> outcome, as
// runner::OutcomesOf (a test that was not collected is absent), the spec's environment
// built from `env_root` ("": root). Fails when pytest cannot run. `seconds` (optional) is
// increased by the run's wall time; `errors` (optional) gets each failed test's error line
// ("E   AssertionError: ..."), `messages` (optional) each failed test's and each broken
// file's whole message, `hooks` (optional) the run's journaled hooks (TestRun::hooks);
// `protect`: the grader's files, as eval binds them (reads of them are journaled);
// `packages`: the task's, whose copies in view the run refuses or hides as eval does
// (runner::TestRunRequest::guard_packages).
util::Expected<std::map<std::string, runner::Outcome>> RunTests(
    runner::TestRunner& tests, const std::string& root, const std::string& env_root,
    const runner::RepoSpec& spec,
    const std::vector<std::string>& files, const std::string& work_dir, double* seconds,
    std::map<std::string, std::string>* errors = nullptr,
    std::map<std::string, std::string>* messages = nullptr,
    std::set<std::pair<std::string, std::string>>* hooks = nullptr,
    const std::vector<std::string>& protect = {}, const std::set<std::string>& packages = {});

}  // namespace fbkit::extract::taskdir

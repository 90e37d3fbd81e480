// Dataset rows from task directories, for the tools benchmark users already have:
// FeatureBench's dataset (its fields with its semantics: `patch` masks the original into the
// pre-solved codebase, an L1 `test_patch` deletes the F2P file, an L2 `test_patch` rewrites it
// in the original repository, FAIL_TO_PASS / PASS_TO_PASS are lists of test files) and
// SWE-bench's (`patch` is the gold fix, FAIL_TO_PASS / PASS_TO_PASS JSON strings of test ids).
#pragma once

#include <string>
#include <vector>

#include "sandbox/process.h"
#include "runner/spec.h"
#include "runner/test_run.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::dataset {

enum class ExportFormat { kFeatureBench, kSweBench, kHarbor };  // harbor: harbor.h

// The images rows name: those `fb-extract images` builds with the same base and prefix.
struct ExportImages {
  std::string base;  // "" = fbkit's base recipe
  std::string prefix = "fbkit";
};

// One dataset row (a JSON object, no newline) for the task in `task_dir`. L2 tasks need their
// L1 task beside them (the original repository is rebuilt from it). `work_dir` is scratch.
// A SWE-bench row carries SWE-bench 5's fields: `image` (the agent image's tag), an
// `eval_script` holding fbkit's verifier (dataset/verifier.h), `log_parser`
// parse_log_pytest_v2, `eval_type` pass_and_fail; its FAIL_TO_PASS and PASS_TO_PASS are the
// tests' SweBenchLogKey (distinct ids that share one are listed once and said on stderr).
util::Expected<std::string> ExportRow(util::Env& env, sandbox::Launcher& launcher,
                                      const std::string& task_dir, ExportFormat format,
                                      const std::string& work_dir, const ExportImages& images = {});

// The key SWE-bench 5's parse_log_pytest_v2 files test `id` under when the log prints it:
// every `[<digits>m` removed, then characters 1-31, then runs of whitespace made one space
// (Python's str.split, Unicode spaces included), the ends stripped. A SWE-bench row lists its
// tests by these keys (a raw id such as `t[a  b]` or one holding `\x1b[30m` would never match).
std::string SweBenchLogKey(const std::string& id);

struct ImportOptions {
  std::string original;   // a git checkout of the rows' repository (only read)
  std::string out_dir;    // the task directory goes to out_dir/<instance_id>
  std::string work_dir;   // scratch (removed afterwards)
  runner::RepoSpec spec;  // how the tests run (the test ids of the task)
};

struct ImportResult {
  std::string instance_id;
  std::size_t f2p_tests = 0;
  std::size_t p2p_tests = 0;
};

// Writes the task directory of one FeatureBench dataset row (JSON object), so that fbkit's
// commands (eval, infer, export) take FeatureBench's own instances. L1: presolved/ = the
// original at base_commit with `patch` applied as FeatureBench's harness does (git apply
// --whitespace=fix) and the FAIL_TO_PASS files removed; patch.diff = the gold fix;
// test_patch.diff adds the F2P file; the test ids are those of the F2P / P2P files that
// pass on the original (a sandboxed pytest run with `spec`). L2: needs its L1 task imported
// into out_dir first (the original is rebuilt from it); its test patch is converted to
// fbkit's (adding the rewritten F2P file), its F2P test ids are the L1 task's.
util::Expected<ImportResult> ImportRow(util::Env& env, sandbox::Launcher& launcher,
                                       runner::TestRunner& tests,
                                       const std::string& row_json, const ImportOptions& options);

}  // namespace fbkit::extract::dataset

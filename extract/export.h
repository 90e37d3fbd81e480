// Dataset rows from task directories, for the tools benchmark users already have:
// FeatureBench's dataset (its fields with its semantics: `patch` masks the original into the
// pre-solved codebase, an L1 `test_patch` deletes the F2P file, an L2 `test_patch` rewrites it
// in the original repository, FAIL_TO_PASS / PASS_TO_PASS are lists of test files) and
// SWE-bench's (`patch` is the gold fix, FAIL_TO_PASS / PASS_TO_PASS JSON strings of test ids).
#pragma once

#include <string>
#include <vector>

#include "tracer/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract {

enum class ExportFormat { kFeatureBench, kSweBench };

// One dataset row (a JSON object, no newline) for the task in `task_dir`. L2 tasks need their
// L1 task beside them (the original repository is rebuilt from it). `work_dir` is scratch.
util::Expected<std::string> ExportRow(util::Env& env, tracer::Launcher& launcher,
                                      const std::string& task_dir, ExportFormat format,
                                      const std::string& work_dir);

}  // namespace fbkit::extract

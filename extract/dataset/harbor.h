// Harbor task directories from fbkit tasks (fbkit.harbor/1), owned here: task.toml,
// instruction.md (the problem statement), environment/ (one build context making the agent's
// image, extract/image/), solution/solve.sh (applies the gold fix) and tests/ (test.sh: test
// code the agent touched put back, the F2P file added, F2P and P2P run with a pytest plugin
// recording each test's outcome, the reward written to /logs/verifier/reward.txt and
// reward.json). Harbor copies tests/ in only to verify, and solution/ only for its oracle.
#pragma once

#include <string>

#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::dataset {

struct HarborOptions {
  std::string out_dir;   // the task goes to OUT/<instance_id>
  std::string base;      // the base image ("": fbkit's base steps on Debian's image)
  std::string work_dir;  // scratch
};

// Writes the Harbor task of the fbkit task in `task_dir`; returns its directory.
util::Expected<std::string> WriteHarborTask(util::Env& env, sandbox::Launcher& launcher,
                                            const std::string& task_dir, const HarborOptions& options);

}  // namespace fbkit::extract::dataset

// The side effects every pipeline stage needs, passed as one value: the file system, child
// processes and test runs (in tests: FakeEnv, FakeLauncher, FakeTestRunner).
#pragma once

#include "sandbox/process.h"
#include "runner/test_run.h"
#include "util/env.h"

namespace fbkit::runner {

struct Services {
  util::Env& env;
  sandbox::Launcher& launcher;
  TestRunner& tests;  // pytest runs: tracer::AgentTestRunner, made by cli/ and passed down
};

}  // namespace fbkit::runner

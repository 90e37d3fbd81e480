// The side effects every pipeline stage needs, passed as one value: the file system, child
// processes, test runs and git (in tests: FakeEnv, FakeLauncher, FakeTestRunner, FakeGit).
#pragma once

#include "sandbox/process.h"
#include "runner/git.h"
#include "runner/test_run.h"
#include "util/env.h"

namespace fbkit::runner {

struct Services {
  util::Env& env;
  sandbox::Launcher& launcher;
  TestRunner& tests;  // pytest runs: tracer::AgentTestRunner, made by cli/ and passed down
  const GitMaker* git = nullptr;  // unset: GitProgram over `launcher`
};

// The Git of a scratch directory, as `services` make it.
std::unique_ptr<Git> MakeGit(const Services& services, const std::string& scratch);

}  // namespace fbkit::runner

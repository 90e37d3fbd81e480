// Patch-driven back-inference: what an agent's patch implies at task level, by running the
// entity-change analysis of the patch against the instance's base commit.
#pragma once

#include <string>

#include "groundtruth/records.h"
#include "parser/python_parser.h"
#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::groundtruth {

// Adds the entities the agent's patch changes (cosmetic ones excepted) to its tasks;
// files need nothing (they come from the patch itself). When the patch does not apply,
// `applied` becomes false if the agent file left it unknown, and the tasks stay as they
// are. Fails only when the repository or commit cannot be read.
util::Status BackInfer(util::Env& env, sandbox::Launcher& launcher, parser::PythonParser& parser,
                       const Instance& instance, const std::string& work_dir, AgentInstance* agent);

}  // namespace fbkit::groundtruth

// The --llm-cmd protocol's transport, shared by fb-extract and fb-race: the command (run by
// /bin/sh) reads one JSON request on stdin and writes one JSON answer on stdout.
#pragma once

#include <string>

#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::model {

// The command's stdout for `request`; an error when it cannot start or exits non-zero.
// `work_dir` holds the exchanged files while it runs.
util::Expected<std::string> RunLlmCommand(util::Env& env, sandbox::Launcher& launcher,
                                          const std::string& cmd, const std::string& request,
                                          const std::string& work_dir);

}  // namespace fbkit::model

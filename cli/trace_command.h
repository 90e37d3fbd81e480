// `fb-graph trace`: run a repository's pytest suite under the embedded agent and write
// fbkit.trace/1 JSON.
#pragma once

#include <CLI/CLI.hpp>

namespace fbkit::cli {

void AddTraceCommand(CLI::App& app, int* exit_code);

}  // namespace fbkit::cli

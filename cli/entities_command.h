// `fb-graph entities`: the entity table of a repository as fbkit.entities/1 JSON.
#pragma once

#include <CLI/CLI.hpp>

namespace fbkit::cli {

// Registers the subcommand on `app`; `exit_code` receives its result when it runs.
void AddEntitiesCommand(CLI::App& app, int* exit_code);

}  // namespace fbkit::cli

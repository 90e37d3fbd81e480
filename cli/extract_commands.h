// fb-extract's subcommands: task, all and verify (FeatureBench task extraction).
#pragma once

#include <CLI/CLI.hpp>

namespace fbkit::cli {

void AddExtractCommands(CLI::App& app, int* exit_code);

}  // namespace fbkit::cli

// fb-extract export: task directories as dataset rows (FeatureBench's or SWE-bench's format);
// fb-extract import: FeatureBench rows back into task directories; fb-extract lite: a seeded
// random subset of the tasks, as a task list the other commands read.
#pragma once

#include <CLI/CLI.hpp>

namespace fbkit::cli {

void AddExportCommands(CLI::App& app, int* exit_code);

}  // namespace fbkit::cli

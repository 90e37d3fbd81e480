// fb-race's subcommands: entities, score, validate, files, gt and lite (RACE-bench
// ground truth and offline scoring; the logic lives in groundtruth/).
#pragma once

#include <CLI/CLI.hpp>

namespace fbkit::cli {

void AddRaceCommands(CLI::App& app, int* exit_code);

}  // namespace fbkit::cli

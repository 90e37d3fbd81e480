// fb-race's subcommands: entities, score, validate, files, gt, lite, mine and summarize
// (RACE-bench ground truth and offline scoring; one file each in cli/race/, the logic lives in
// groundtruth/).
#pragma once

#include <CLI/CLI.hpp>

namespace fbkit::cli {

void AddRaceCommands(CLI::App& app, int* exit_code);

}  // namespace fbkit::cli

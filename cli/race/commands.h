// fb-race's eight subcommands, one file each (cli/race/NAME_command.cc): each Add adds its
// subcommand to `app`, and the subcommand's callback stores its exit code in `*exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace fbkit::cli::race {

// entities: the entity changes a patch makes.
void AddEntities(CLI::App& app, int* exit_code);
// score: agents' runs scored against the ground truth.
void AddScore(CLI::App& app, int* exit_code);
// validate: FAIL_TO_PASS / PASS_TO_PASS of each instance.
void AddValidate(CLI::App& app, int* exit_code);
// files: file (and entity) localisation by ablation.
void AddFiles(CLI::App& app, int* exit_code);
// gt: the ground truth (fbkit.race-gt/1) of each instance.
void AddGt(CLI::App& app, int* exit_code);
// lite: a Lite subset matching every configuration's rates.
void AddLite(CLI::App& app, int* exit_code);
// mine: candidate feature PRs from a repository's local history.
void AddMine(CLI::App& app, int* exit_code);
// summarize: trajectory files into an agent run (fbkit.race-agent/1).
void AddSummarize(CLI::App& app, int* exit_code);

}  // namespace fbkit::cli::race

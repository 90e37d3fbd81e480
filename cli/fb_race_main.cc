// fb-race: RACE-bench ground truth (execution filtering, file and entity localisation) and
// offline scoring of agents against it.
#include <CLI/CLI.hpp>

#include "cli/cli_common.h"
#include "cli/race_commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "fb-race: derive RACE-bench ground truth from feature PRs (tests, necessary files, "
      "entity changes, steps) and score agents' patches and reasoning against it (fbkit)."};
  app.require_subcommand(1);
  int exit_code = fbkit::cli::kExitOk;
  fbkit::cli::AddRaceCommands(app, &exit_code);
  return fbkit::cli::RunMain(app, argc, argv, "fb-race", exit_code);
}

// fb-graph: entities, traces and the dependency graph of a Python repository.
#include <CLI/CLI.hpp>

#include "cli/cli_common.h"
#include "cli/entities_command.h"
#include "cli/env_command.h"
#include "cli/graph_commands.h"
#include "cli/trace_command.h"

int main(int argc, char** argv) {
  CLI::App app{"fb-graph: the entity table, test traces and object dependency graph of a "
               "Python repository (fbkit)."};
  app.require_subcommand(1);
  int exit_code = fbkit::cli::kExitOk;
  fbkit::cli::AddEntitiesCommand(app, &exit_code);
  fbkit::cli::AddEnvCommand(app, &exit_code);
  fbkit::cli::AddTraceCommand(app, &exit_code);
  fbkit::cli::AddGraphCommands(app, &exit_code);
  return fbkit::cli::RunMain(app, argc, argv, "fb-graph", exit_code);
}

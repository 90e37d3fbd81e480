// fb-graph: entities, traces and the dependency graph of a Python repository.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/cli_common.h"
#include "cli/entities_command.h"
#include "cli/graph_commands.h"
#include "cli/trace_command.h"

int main(int argc, char** argv) {
  CLI::App app{"fb-graph: the entity table, test traces and object dependency graph of a "
               "Python repository (fbkit)."};
  app.require_subcommand(1);
  int exit_code = fbkit::cli::kExitOk;
  fbkit::cli::AddEntitiesCommand(app, &exit_code);
  fbkit::cli::AddTraceCommand(app, &exit_code);
  fbkit::cli::AddGraphCommands(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : fbkit::cli::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fb-graph: fatal: %s\n", e.what());
    return fbkit::cli::kExitFailure;
  }
  return exit_code;
}

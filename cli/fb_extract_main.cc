// fb-extract: FeatureBench tasks from a traced repository (extraction, verification and
// evaluation of agents' patches).
#include <CLI/CLI.hpp>

#include "cli/cli_common.h"
#include "cli/eval_command.h"
#include "cli/export_command.h"
#include "cli/images_command.h"
#include "cli/extract_commands.h"
#include "cli/infer_command.h"

int main(int argc, char** argv) {
  CLI::App app{
      "fb-extract: cut the code only one test file needs out of a repository and "
      "emit verified FeatureBench tasks (fbkit), then score agents' patches on them "
      "(eval). Inputs come from `fb-graph trace` and `fb-graph build`."};
  app.require_subcommand(1);
  int exit_code = fbkit::cli::kExitOk;
  fbkit::cli::AddExtractCommands(app, &exit_code);
  fbkit::cli::AddInferCommand(app, &exit_code);
  fbkit::cli::AddEvalCommand(app, &exit_code);
  fbkit::cli::AddExportCommands(app, &exit_code);
  fbkit::cli::AddImagesCommand(app, &exit_code);
  return fbkit::cli::RunMain(app, argc, argv, "fb-extract", exit_code);
}

#include "cli/race_commands.h"

#include "cli/race/commands.h"

namespace fbkit::cli {

void AddRaceCommands(CLI::App& app, int* exit_code) {
  race::AddEntities(app, exit_code);
  race::AddScore(app, exit_code);
  race::AddValidate(app, exit_code);
  race::AddFiles(app, exit_code);
  race::AddGt(app, exit_code);
  race::AddLite(app, exit_code);
  race::AddMine(app, exit_code);
  race::AddSummarize(app, exit_code);
}

}  // namespace fbkit::cli

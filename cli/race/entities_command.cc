// fb-race entities: the entity changes (new, modified, cosmetic, deleted, renamed) a patch
// makes to a repository's Python files, as JSON.
#include <memory>
#include <string>

#include "cli/cli_common.h"
#include "cli/race/commands.h"
#include "cli/race/race_common.h"
#include "groundtruth/entity_changes.h"
#include "parser/python_parser.h"
#include "sandbox/process.h"
#include "util/env.h"

namespace fbkit::cli::race {
namespace {

struct EntitiesArgs {
  std::string repo;
  std::string base;
  std::string patch;
  std::string output = "-";
  std::string work_dir;
};

int RunEntities(const EntitiesArgs& a) {
  util::Env& env = util::RealEnv();
  auto patch = env.ReadFile(a.patch);
  if (!patch.ok()) return Fail(kWho, patch.error()), kExitUsage;
  auto parser = parser::PythonParser::Create();
  if (!parser.ok()) return Fail(kWho, parser.error());
  auto scratch = ScratchDir(a.work_dir, "entities");
  if (!scratch.ok()) return Fail(kWho, scratch.error());
  std::string work = *scratch;
  auto versions =
      groundtruth::PatchVersions(env, sandbox::RealLauncher(), a.repo, a.base, *patch, work);
  (void)env.RemoveAll(work);
  if (!versions.ok()) return Fail(kWho, a.patch + ": " + versions.error()), kExitUsage;
  auto set = groundtruth::DiffEntities(**parser, *versions);
  if (auto s = WriteOutput(env, a.output, groundtruth::ChangeSetJson(set)); !s.ok()) {
    return Fail(kWho, s.error());
  }
  return kExitOk;
}

}  // namespace

void AddEntities(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<EntitiesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "entities", "Entity changes (new/modified/cosmetic/deleted/renamed) a patch makes");
  cmd->add_option("REPO", a->repo, "Git repository (only read)")->required();
  cmd->add_option("--base", a->base, "The commit the patch applies to")->required();
  cmd->add_option("--patch", a->patch, "The patch (unified diff)")->required();
  cmd->add_option("-o,--output", a->output, "Output JSON (default: stdout)");
  cmd->add_option("--work-dir", a->work_dir, "Scratch directory (default: under $TMPDIR)");
  cmd->callback([a, exit_code] { *exit_code = RunEntities(*a); });
}

}  // namespace fbkit::cli::race

#include "cli/race_commands.h"

#include <unistd.h>

#include <cstdio>
#include <memory>

#include "cli/cli_common.h"
#include "groundtruth/entity_changes.h"
#include "parser/python_parser.h"

namespace fbkit::cli {
namespace {

constexpr const char* kWho = "fb-race";

// A private scratch directory for one command under $TMPDIR (or /tmp).
std::string ScratchDir(const std::string& given, const std::string& what) {
  if (!given.empty()) return given;
  const char* tmp = std::getenv("TMPDIR");
  return util::JoinPath(tmp && *tmp ? tmp : "/tmp",
                        "fb-race-" + what + "-" + std::to_string(::getpid()));
}

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
  std::string work = ScratchDir(a.work_dir, "entities");
  auto versions = groundtruth::PatchVersions(env, tracer::RealLauncher(), a.repo, a.base, *patch, work);
  (void)env.RemoveAll(work);
  if (!versions.ok()) return Fail(kWho, a.patch + ": " + versions.error()), kExitUsage;
  auto set = groundtruth::DiffEntities(**parser, *versions);
  if (auto s = WriteOutput(env, a.output, groundtruth::ChangeSetJson(set)); !s.ok()) {
    return Fail(kWho, s.error());
  }
  return kExitOk;
}

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

}  // namespace

void AddRaceCommands(CLI::App& app, int* exit_code) { AddEntities(app, exit_code); }

}  // namespace fbkit::cli

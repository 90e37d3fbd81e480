// fb-race files: file localisation by ablation; which of each instance's changed files (and
// entities) its FAIL_TO_PASS tests need, as JSON Lines.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_common.h"
#include "cli/race/commands.h"
#include "cli/race/race_common.h"
#include "groundtruth/ablation.h"
#include "groundtruth/execution.h"
#include "groundtruth/records.h"
#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"
#include "util/shard.h"

namespace fbkit::cli::race {
namespace {

struct FilesArgs : RunArgs {
  std::string validation;
  bool no_entities = false;
  bool whole_files = false;
};

// FAIL_TO_PASS per instance from an earlier `fb-race validate` output.
util::Expected<std::map<std::string, std::vector<std::string>>> LoadF2p(util::Env& env,
                                                                        const std::string& path) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return text.failure();
  auto gts = groundtruth::ParseGroundTruths(*text, path);
  if (!gts.ok()) return gts.failure();
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& g : *gts) out[g.instance_id] = g.fail_to_pass;
  return out;
}

// One instance's necessary files: its FAIL_TO_PASS from --validation, else validated now.
Out FilesOne(parser::PythonParser& parser, const FilesArgs& a,
             const std::map<std::string, std::vector<std::string>>& f2p,
             const groundtruth::Instance& i, const std::string& dir) {
  auto it = f2p.find(i.instance_id);
  std::vector<std::string> tests =
      it != f2p.end() ? it->second
                      : groundtruth::Validate(RealServices(), i,
                                              a.spec, a.repeat, dir)
                            .fail_to_pass;
  auto l = groundtruth::Localize(RealServices(), parser, i, a.spec,
                                 tests, !a.no_entities, dir, a.whole_files);
  Note(a.quiet, "files", i.instance_id,
       l.error.empty() ? "necessary " + std::to_string(l.necessary.size()) + ", other " +
                             std::to_string(l.other.size()) + ", unknown " +
                             std::to_string(l.unknown.size())
                       : "error: " + l.error);
  return Out{groundtruth::LocalizationJson(l), "", l.error.empty() ? kExitOk : kExitFailure};
}

int RunFiles(const FilesArgs& a) {
  util::Env& env = util::RealEnv();
  auto instances = LoadInstances(env, a.instances, a.repo);
  if (!instances.ok()) return Fail(kWho, instances.error()), kExitUsage;
  auto shard = util::ParseShard(a.shard);
  if (!shard.ok()) return Fail(kWho, shard.error()), kExitUsage;
  std::map<std::string, std::vector<std::string>> f2p;
  if (!a.validation.empty()) {
    auto loaded = LoadF2p(env, a.validation);
    if (!loaded.ok()) return Fail(kWho, loaded.error()), kExitUsage;
    f2p = std::move(*loaded);
  }
  auto parsers = Parsers(a.jobs);
  if (!parsers.ok()) return Fail(kWho, parsers.error());
  auto scratch = ScratchDir(a.work_dir, "files");
  if (!scratch.ok()) return Fail(kWho, scratch.error());
  std::string work = *scratch;
  auto p = RunInstances(
      *instances, a, *shard, work,
      [&](const groundtruth::Instance& i, const std::string& dir, int worker) {
        return FilesOne(*(*parsers)[worker], a, f2p, i, dir);
      });
  (void)env.RemoveAll(work);
  if (auto s = WriteOutput(env, a.output.empty() ? "-" : a.output, p.text); !s.ok()) {
    return Fail(kWho, s.error());
  }
  return p.rc;
}

}  // namespace

void AddFiles(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<FilesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "files", "File localisation by ablation: necessary, other, test files; entity necessity");
  AddRunOptions(cmd, a.get());
  cmd->add_option("-o,--output", a->output, "Output JSON Lines (default: stdout)");
  cmd->add_option("--validation", a->validation,
                  "FAIL_TO_PASS from `fb-race validate` (default: validate first)");
  cmd->add_option("--repeat", a->repeat, "Gold runs when validating (default 1)")
      ->check(CLI::Range(1, 100));
  cmd->add_flag("--no-entities", a->no_entities, "Skip the entity-level ablation");
  cmd->add_flag("--whole-files", a->whole_files,
                "Ablation reruns the F2P tests' whole files (default: only the F2P tests, when "
                "they pass alone on the gold checkout)");
  cmd->callback([a, exit_code] { *exit_code = WithSettings<FilesArgs>(*a, RunFiles); });
}

}  // namespace fbkit::cli::race

// fb-race validate: execution filtering; runs each instance's touched tests without and with
// its gold patch and writes its FAIL_TO_PASS and PASS_TO_PASS tests as JSON Lines.
#include <memory>
#include <string>

#include "cli/cli_common.h"
#include "cli/race/commands.h"
#include "cli/race/race_common.h"
#include "groundtruth/execution.h"
#include "groundtruth/records.h"
#include "sandbox/process.h"
#include "util/env.h"
#include "util/shard.h"

namespace fbkit::cli::race {
namespace {

int RunValidate(const RunArgs& a) {
  util::Env& env = util::RealEnv();
  auto instances = LoadInstances(env, a.instances, a.repo);
  if (!instances.ok()) return Fail(kWho, instances.error()), kExitUsage;
  auto shard = util::ParseShard(a.shard);
  if (!shard.ok()) return Fail(kWho, shard.error()), kExitUsage;
  auto scratch = ScratchDir(a.work_dir, "validate");
  if (!scratch.ok()) return Fail(kWho, scratch.error());
  std::string work = *scratch;
  auto p = RunInstances(*instances, a, *shard, work,
                        [&](const groundtruth::Instance& i, const std::string& dir, int) {
                          auto v = groundtruth::Validate(RealServices(), i, a.spec, a.repeat,
                                                         dir);
                          Note(a.quiet, "validate", i.instance_id, Summary(v));
                          bool error = v.status == groundtruth::ValidationStatus::kError;
                          return Out{groundtruth::ValidationJson(v), "",
                                     error ? kExitFailure : kExitOk};
                        });
  (void)env.RemoveAll(work);
  if (auto s = WriteOutput(env, a.output.empty() ? "-" : a.output, p.text); !s.ok()) {
    return Fail(kWho, s.error());
  }
  return p.rc;
}

}  // namespace

void AddValidate(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "Execution filtering: FAIL_TO_PASS / PASS_TO_PASS of each instance");
  AddRunOptions(cmd, a.get());
  cmd->add_option("-o,--output", a->output, "Output JSON Lines (default: stdout)");
  cmd->add_option("--repeat", a->repeat,
                  "Gold runs; tests whose outcome varies are flaky (default 1)")
      ->check(CLI::Range(1, 100));
  cmd->callback([a, exit_code] { *exit_code = WithSettings<RunArgs>(*a, RunValidate); });
}

}  // namespace fbkit::cli::race

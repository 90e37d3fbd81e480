// fb-race lite: chooses a Lite subset of instances whose resolved and apply rates match
// every agent configuration's on the full set.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_common.h"
#include "cli/race/commands.h"
#include "cli/race/race_common.h"
#include "groundtruth/lite.h"
#include "groundtruth/records.h"
#include "util/env.h"

namespace fbkit::cli::race {
namespace {

struct LiteArgs {
  std::vector<std::string> results;
  size_t size = 100;
  uint64_t seed = 42;
  int iterations = 100000;
  std::string output = "-";
};

int RunLite(const LiteArgs& a) {
  util::Env& env = util::RealEnv();
  std::vector<groundtruth::AgentRun> runs;
  for (const auto& path : a.results) {
    auto text = env.ReadFile(path);
    if (!text.ok()) return Fail(kWho, text.error()), kExitUsage;
    auto run = groundtruth::ParseAgentRun(*text, path);
    if (!run.ok()) return Fail(kWho, run.error()), kExitUsage;
    runs.push_back(std::move(*run));
  }
  auto r = groundtruth::ChooseLite(runs, a.size, a.seed, a.iterations);
  if (!r.ok()) return Fail(kWho, r.error()), kExitUsage;
  std::fprintf(stderr,
               "fb-race lite: %zu instances, deviation reached %.6f (largest rate difference; "
               "random start %.6f)\n",
               r->instances.size(), r->max_deviation, r->start_max_deviation);
  if (auto s = WriteOutput(env, a.output, groundtruth::LiteJson(*r, a.seed)); !s.ok()) {
    return Fail(kWho, s.error());
  }
  return kExitOk;
}

}  // namespace

void AddLite(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<LiteArgs>();
  CLI::App* cmd = app.add_subcommand(
      "lite", "Choose a Lite subset matching every configuration's resolved and apply rates");
  cmd->add_option("--results", a->results, "Agent runs (fbkit.race-agent/1) with applied/resolved")
      ->required();
  cmd->add_option("--size", a->size, "Instances to choose (default 100)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", a->seed, "Seed (default 42)");
  cmd->add_option("--iterations", a->iterations, "Swaps to try (default 100000)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-o,--output", a->output, "Output JSON (default: stdout)");
  cmd->callback([a, exit_code] { *exit_code = RunLite(*a); });
}

}  // namespace fbkit::cli::race

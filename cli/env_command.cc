#include "cli/env_command.h"

#include <cstdio>
#include <memory>

#include "cli/cli_common.h"
#include "cli/spec_options.h"
#include "sandbox/sandbox.h"

namespace fbkit::cli {
namespace {

struct EnvArgs {
  std::string root;
  SpecArgs spec;
  bool quiet = false;
  bool rebuild = false;
};

int Run(const EnvArgs& a) {
  const std::string who = "fb-graph env";
  util::Env& env = util::RealEnv();
  auto root = env.RealPath(a.root);
  if (!root.ok()) return Fail(who, root.error());
  auto spec = ResolveSpec(a.spec, *root);
  if (!spec.ok()) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), spec.error().c_str());
    return kExitUsage;
  }
  if (spec->install.empty()) {
    std::printf("no install steps in %s: the tests run with %s as it is\n",
                spec->file.empty() ? "the spec (none found)" : spec->file.c_str(),
                spec->python.c_str());
    return kExitOk;
  }
  auto built = BuildEnvironment(*spec, *root, who, a.quiet, a.rebuild);
  if (!built.ok()) return Fail(who, built.error());
  std::printf("environment %s (%s)\n", built->key.c_str(), built->reused ? "reused from the cache" : "built");
  std::printf("  directory  %s\n", built->dir.c_str());
  std::printf("  python     %s\n", built->python.c_str());
  std::printf("  pytest     %s\n", built->collected.c_str());
  if (!built->collect_errors.empty()) {
    std::printf("  left out   %zu test file%s that fail%s to collect (%s/check.log):\n",
                built->collect_errors.size(), built->collect_errors.size() == 1 ? "" : "s",
                built->collect_errors.size() == 1 ? "s" : "", built->dir.c_str());
    for (const auto& f : built->collect_errors) std::printf("             %s\n", f.c_str());
  }
  std::printf("  sandbox    %s, network: install steps %s, tests %s\n",
              sandbox::SandboxKindName(spec->sandbox),
              runner::InstallNetwork(*spec) ? "allowed" : "off", spec->network ? "allowed" : "off");
  return kExitOk;
}

}  // namespace

void AddEnvCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<EnvArgs>();
  CLI::App* cmd = app.add_subcommand(
      "env", "Build the environment the repo spec's install steps describe (once; cached)");
  cmd->footer(
      "Runs the spec's `install` steps (sh -c, in the sandbox, in a copy of ROOT; ROOT itself "
      "is never written) with $FBKIT_ENV (where a virtual environment goes; its bin/python "
      "then runs the tests), $FBKIT_SRC (the copy) and $PYTHON (the spec's interpreter) set, "
      "then checks that pytest imports and collects (a test file that fails to collect is listed "
      "and left out; the rest goes on). The result is cached under "
      "$XDG_CACHE_HOME/fbkit/env (or ~/.cache/fbkit/env), keyed by the spec's interpreter, "
      "steps, env and network and by the repository's files; every other command builds it "
      "on first use. A failed build keeps its logs and the steps it finished: the next build "
      "goes on after them (--rebuild: from nothing). The install steps reach the network only "
      "with install_network = true (or --install-network), the tests only with network.\n\n"
      "Exit status: 0 ok (or nothing to build); 1 a step or the check failed (its output is "
      "shown); 2 bad usage or a bad spec.");
  cmd->add_option("ROOT", a->root, "Repository root (never modified)")
      ->required()
      ->check(CLI::ExistingDirectory);
  AddSpecOptions(cmd, &a->spec, kSpecRun | kSpecTests);
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  cmd->add_flag("--rebuild", a->rebuild,
                "Build from nothing: neither the cached entry nor the steps an earlier failed "
                "build finished are reused");
  cmd->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace fbkit::cli

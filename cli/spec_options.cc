#include "cli/spec_options.h"

#include <algorithm>
#include <cstdio>

#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_common.h"
#include "runner/environment.h"
#include "sandbox/process.h"

namespace fbkit::cli {
namespace {

bool Given(const SpecArgs& a, const std::string& field) {
  for (const auto& [name, option] : a.options) {
    if (name == field) return option->count() > 0;
  }
  return false;
}

util::Status MergeEnv(const std::vector<std::string>& items, runner::RepoSpec* spec) {
  for (const auto& item : items) {
    auto kv = ParseEnvAssignment(item);
    if (!kv.ok()) return kv.failure();
    std::erase_if(spec->vars, [&](const auto& old) { return old.first == kv->first; });
    spec->vars.push_back(std::move(*kv));
  }
  std::sort(spec->vars.begin(), spec->vars.end());
  return util::Status::Ok();
}

}  // namespace

void AddSpecOptions(CLI::App* cmd, SpecArgs* a, unsigned which) {
  auto keep = [&](const std::string& field, CLI::Option* o) {
    a->options.emplace_back(field, o);
    o->group("Run settings (override the spec)");
  };
  keep("spec", cmd->add_option("--spec", a->spec_file,
                               "Repo spec (TOML; default ROOT/fbkit.toml when it exists): "
                               "interpreter, paths, env, pytest args, install steps, limits"));
  cmd->add_flag("--trust-spec", a->trust_spec,
                "The spec inside ROOT is yours: let it set what widens the sandbox (an "
                "interpreter, the network, higher limits), as a spec given outside ROOT may")
      ->group("Run settings (override the spec)");
  if (which & kSpecRun) {
    keep("sandbox", cmd->add_option("--sandbox", a->sandbox,
                                    "bwrap (default: bubblewrap isolation) or none (no isolation)")
                        ->check(CLI::IsMember({"bwrap", "none"})));
    keep("network", cmd->add_flag("--network", a->network,
                                  "Let the tests reach the network (spec key network; default off)"));
    keep("install_network",
         cmd->add_flag("--install-network", a->install_network,
                       "Let the install steps reach the network, PyPI say (spec key "
                       "install_network; default off; --network implies it)"));
    keep("python", cmd->add_option("--python", a->python, "Interpreter for the tests (default python3)"));
    keep("pythonpath", cmd->add_option("--pythonpath", a->pythonpath,
                                       "Prepend to PYTHONPATH (ROOT-relative or absolute; repeatable)"));
    keep("env", cmd->add_option("--env", a->env, "Set NAME=VALUE for the tests (repeatable)"));
    keep("pytest_args", cmd->add_option("--pytest-arg", a->pytest_args,
                                        "Pass an argument to pytest (repeatable), e.g. "
                                        "--pytest-arg=-m --pytest-arg='not slow'")
                            ->allow_extra_args(false));
    keep("timeout", cmd->add_option("--timeout", a->timeout,
                                    "Seconds one test file may run (spec default 600; 0: none)")
                        ->check(CLI::NonNegativeNumber));
  }
  if (which & kSpecTests) {
    keep("tests", cmd->add_option("--tests", a->tests,
                                  "Test paths relative to ROOT (default: what pytest collects)"));
    keep("total_timeout", cmd->add_option("--total-timeout", a->total_timeout,
                                          "Seconds the whole run may take (0: no limit)")
                              ->check(CLI::NonNegativeNumber));
  }
  if (which & kSpecExclude) {
    keep("exclude", cmd->add_option("--exclude", a->exclude,
                                    "ROOT-relative directory whose code is not recorded (repeatable)"));
  }
}

util::Expected<sandbox::SandboxKind> SandboxOf(const SpecArgs& a) {
  if (a.sandbox.empty()) return sandbox::SandboxKind::kBwrap;
  return sandbox::ParseSandboxKind(a.sandbox);
}

util::Expected<runner::BuiltEnvironment> BuildEnvironment(const runner::RepoSpec& spec,
                                                          const std::string& root,
                                                          const std::string& who, bool quiet,
                                                          bool rebuild) {
  if (spec.sandbox == sandbox::SandboxKind::kBwrap) {
    if (auto s = sandbox::CheckBwrap(); !s.ok()) return s.failure();
  }
  runner::EnvRequest request{spec, root, spec.environment_cache, [&](const std::string& line) {
                               if (!quiet) std::fprintf(stderr, "%s: %s\n", who.c_str(), line.c_str());
                             }, rebuild};
  return runner::EnsureEnvironment(util::RealEnv(), sandbox::RealLauncher(), request);
}

util::Status PrepareEnvironment(const runner::RepoSpec& spec, const std::string& root,
                                const std::string& who, bool quiet) {
  if (spec.install.empty()) return util::Status::Ok();
  auto built = BuildEnvironment(spec, root, who, quiet);
  if (!built.ok()) return built.failure();
  if (!built->reused && !quiet) {
    std::fprintf(stderr, "%s: environment %s built (%s)\n", who.c_str(), built->key.c_str(),
                 built->python.c_str());
  }
  return util::Status::Ok();
}

util::Expected<std::pair<std::string, std::string>> ParseEnvAssignment(const std::string& item) {
  size_t eq = item.find('=');
  if (eq == std::string::npos || !runner::IsVariableName(item.substr(0, eq))) {
    return util::Error{"--env wants NAME=VALUE (NAME: letters, digits and '_'), got '" + item +
                       "'"};
  }
  return std::pair{item.substr(0, eq), item.substr(eq + 1)};
}

std::string EnvCacheDir() {
  if (auto dir = UserCacheDir("env")) return *dir;
  // Without $HOME or $XDG_CACHE_HOME: a directory of this user's alone, never one another
  // user could have made first (red team round 5: a shared /tmp directory let one user's
  // entry become root's test interpreter).
  std::string dir = "/tmp/fbkit-env-cache-" + std::to_string(::geteuid());
  (void)::mkdir(dir.c_str(), 0700);
  struct stat st;
  if (::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & 077) == 0) {
    return dir;
  }
  char fresh[] = "/tmp/fbkit-env-cache-XXXXXX";
  return ::mkdtemp(fresh) ? std::string(fresh) : dir + "-unusable";
}

util::Expected<runner::RepoSpec> ResolveSpec(const SpecArgs& a, const std::string& root) {
  auto loaded = runner::LoadRepoSpec(util::RealEnv(), a.spec_file, root, a.trust_spec);
  if (!loaded.ok()) return loaded;
  runner::RepoSpec spec = std::move(*loaded);
  if (Given(a, "sandbox")) {
    auto kind = SandboxOf(a);
    if (!kind.ok()) return kind.failure();
    spec.sandbox = *kind;
  }
  if (Given(a, "network")) spec.network = a.network;
  if (Given(a, "install_network")) spec.install_network = a.install_network;
  if (Given(a, "python")) spec.python = a.python;
  if (Given(a, "pythonpath")) spec.pythonpath = a.pythonpath;
  if (Given(a, "pytest_args")) spec.pytest_args = a.pytest_args;
  if (Given(a, "timeout")) spec.timeout = a.timeout;
  if (Given(a, "tests")) spec.tests = a.tests;
  if (Given(a, "total_timeout")) spec.total_timeout = a.total_timeout;
  if (Given(a, "exclude")) spec.exclude = a.exclude;
  if (auto s = MergeEnv(a.env, &spec); !s.ok()) return s.failure();
  spec.environment_cache = EnvCacheDir();
  return spec;
}

}  // namespace fbkit::cli

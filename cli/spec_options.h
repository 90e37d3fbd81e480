// The run settings the commands share: --spec (default ROOT/fbkit.toml) and --sandbox, plus
// the spec fields a command line may override (an option given overrides the field it names;
// --env adds or replaces one variable).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "runner/environment.h"
#include "runner/spec.h"
#include "util/expected.h"

namespace fbkit::cli {

// Which overriding options a command offers besides --spec.
enum SpecOption : unsigned {
  kSpecRun = 1,       // --sandbox, --network, --python, --pythonpath, --env, --pytest-arg, --timeout
  kSpecTests = 2,     // --tests, --total-timeout
  kSpecExclude = 4,   // --exclude (root-relative directories)
};

struct SpecArgs {
  std::string spec_file;
  std::string sandbox;
  bool network = false, install_network = false;
  bool trust_spec = false;  // a spec inside ROOT is the user's (it may widen the sandbox)
  std::string python;
  std::vector<std::string> pythonpath, env, pytest_args, tests, exclude;
  double timeout = 0, total_timeout = 0;
  std::vector<std::pair<std::string, CLI::Option*>> options;  // field -> its option
};

void AddSpecOptions(CLI::App* cmd, SpecArgs* a, unsigned which);

// The spec file (or ROOT/fbkit.toml; ROOT may be "" for none) with the command line's
// overrides applied and the environment cache under the user's cache directory.
util::Expected<runner::RepoSpec> ResolveSpec(const SpecArgs& a, const std::string& root);

// Only --sandbox (for commands whose settings come from task directories); default bwrap.
util::Expected<sandbox::SandboxKind> SandboxOf(const SpecArgs& a);

// The spec's environment (built unless cached, or from nothing with `rebuild`), with the
// install steps' progress on stderr unless quiet; the error names the failing step, or why
// the sandbox cannot start.
util::Expected<runner::BuiltEnvironment> BuildEnvironment(const runner::RepoSpec& spec,
                                                          const std::string& root,
                                                          const std::string& who, bool quiet,
                                                          bool rebuild = false);

// Builds the spec's environment now (when it has install steps and the cache lacks it),
// with progress lines on stderr unless quiet, so that a long install is not silent; the
// runner then finds it in the cache. The error names the failing step.
util::Status PrepareEnvironment(const runner::RepoSpec& spec, const std::string& root,
                                const std::string& who, bool quiet);

// "NAME=VALUE" -> {NAME, VALUE}; the error quotes the item (for --env options).
util::Expected<std::pair<std::string, std::string>> ParseEnvAssignment(const std::string& item);

// $XDG_CACHE_HOME/fbkit/env (or under ~/.cache, else a directory under /tmp).
std::string EnvCacheDir();

}  // namespace fbkit::cli

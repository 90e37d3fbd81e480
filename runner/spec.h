// The repo spec: one TOML file (fbkit.toml) with everything a repository's tests need to
// run — interpreter, paths, environment, pytest arguments, timeouts, install steps,
// network and resource limits — read by every command of the three tools.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sandbox/exposure.h"
#include "sandbox/sandbox.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::runner {

struct RepoSpec {
  std::string file;  // where it was read from ("" for the defaults)
  std::string repo;  // owner/name, for instance ids
  std::string python = "python3";
  std::vector<std::string> pythonpath;  // root-relative or absolute
  // The `env` table: environment variables, sorted by name.
  std::vector<std::pair<std::string, std::string>> vars;
  std::vector<std::string> pytest_args;
  std::vector<std::string> tests;    // test paths (default: what pytest collects)
  std::vector<std::string> exclude;  // root-relative directories not traced or extracted
  double timeout = 600;        // seconds per test file
  double total_timeout = 0;    // seconds per run (0: none)
  std::vector<std::string> install;         // shell steps that build the environment
  std::vector<std::string> install_inputs;  // extra root-relative files/dirs keying its cache
  bool network = false;          // the tests (and every run of code under test) reach it
  bool install_network = false;  // the install steps reach it (PyPI); `network` implies it
  sandbox::SandboxKind sandbox = sandbox::SandboxKind::kBwrap;
  // What a graded run or an agent's sandbox does with a copy of the task's packages it would
  // show outside the work copy (exposure.h): refuse, hide or allow.
  sandbox::CopyPolicy exposed_copies = sandbox::CopyPolicy::kRefuse;
  sandbox::Limits limits;
  // The container image a kContainer sandbox runs in (its environment image) and the engine
  // that starts it; not part of the file (the command line's choice).
  std::string image_name;
  std::string container_engine = "podman";
  // Not part of the file: where environments built from `install` are cached (the
  // command line's choice; "" means under the work directory).
  std::string environment_cache;
};

// Parses TOML text; errors read "FILE:LINE: ..." and name the key (unknown keys and wrong
// types included).
util::Expected<RepoSpec> ParseRepoSpec(const std::string& text, const std::string& file);

// Reads `file`, or ROOT/fbkit.toml when `file` is empty and it exists, else the defaults.
// A spec inside ROOT that sets what Widening lists is refused unless `trusted` (the user's
// --trust-spec: this spec is mine).
util::Expected<RepoSpec> LoadRepoSpec(util::Env& env, const std::string& file,
                                      const std::string& root, bool trusted = false);

// Whether the install steps reach the network.
inline bool InstallNetwork(const RepoSpec& spec) { return spec.network || spec.install_network; }

// What a spec sets that widens what the code it runs may reach, as a list of its keys ("" when
// none): an interpreter other than python3 (its directories are bound into the sandbox),
// absolute pythonpath entries (bound), the tests' network, the install steps' network,
// another sandbox, limits above the defaults. A spec the repository wrote may set none.
// A task's recorded settings are weighed with `kTaskSettings`: an interpreter whose
// directories the sandbox shows anyway (/usr/bin/python3) and the install steps' network
// (they build the environment from the task's own tree, never from code under evaluation)
// widen nothing.
enum class WideningRules { kRepositorySpec, kTaskSettings };
std::string Widening(const RepoSpec& spec, WideningRules rules = WideningRules::kRepositorySpec);

// The spec as canonical JSON (sorted keys; `file` and `sandbox` left out: how a run is
// isolated is the runner's choice, not a property of the repository). Tasks record it in
// repo_settings; RepoSpecFromJson reads it back (fields it lacks keep their defaults).
std::string RepoSpecJson(const RepoSpec& spec);
util::Expected<RepoSpec> RepoSpecFromJson(const std::string& text);

// Whether `name` is one of the variables fbkit sets for its plugin and probe (FBKIT_TRACE_*,
// FBKIT_PROBE_*: what to check and where to write): a spec's env never sets them, a task's
// spec read back drops them.
inline bool IsFbkitVariable(const std::string& name) {
  return name.starts_with("FBKIT_TRACE_") || name.starts_with("FBKIT_PROBE_");
}

// Whether `name` is "owner/repo" as ids and task directories are named from it: two parts of
// letters, digits, '.', '_' and '-', neither starting with '.'.
inline bool IsRepoName(std::string_view name) {
  size_t slash = name.find('/');
  if (slash == std::string_view::npos) return false;
  auto part = [](std::string_view p) {
    return !p.empty() && p[0] != '.' && std::all_of(p.begin(), p.end(), [](char c) {
      return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '_' || c == '-';
    });
  };
  return part(name.substr(0, slash)) && part(name.substr(slash + 1));
}

// Whether `name` can name an environment variable a spec sets: a letter or '_', then
// letters, digits and '_' (never an option of env(1), never a '=').
inline bool IsVariableName(std::string_view name) {
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (name.empty() || !letter(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

}  // namespace fbkit::runner

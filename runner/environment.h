// The environment a repo spec's `install` steps build: run once (sandboxed, in a copy of the
// repository, never in it) into a cache entry keyed by the spec and the repository's
// dependency files, checked by a pytest collection, and reused by every later run.
#pragma once

#include <functional>
#include <string>

#include "sandbox/process.h"
#include "runner/spec.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::runner {

struct EnvRequest {
  const RepoSpec& spec;
  std::string root;       // the repository (only read)
  std::string cache_dir;  // entries live in CACHE_DIR/KEY
  std::function<void(const std::string&)> say;  // progress lines (may be empty)
  // From nothing, even when the cache has the entry or an earlier failed build of it
  // finished some steps (which a build otherwise goes on from).
  bool rebuild = false;
};

struct BuiltEnvironment {
  std::string key;        // 16 hex digits
  std::string dir;        // the cache entry: env/ (the steps' $FBKIT_ENV), src/, logs
  std::string python;     // the interpreter the tests run with
  bool reused = false;    // found in the cache
  std::string collected;  // the check's last line (pytest's collection summary)
  // Test files that failed to collect (root-relative, sorted): left out, the rest goes on.
  std::vector<std::string> collect_errors;
  // Extension modules (*.so) and generated Python modules (*.py: a version file) the install
  // steps built in the environment's copy of the repository (src/) where the repository has
  // none, root-relative: every copy the tests run in gets them (an in-place build: `python
  // setup.py build_ext --inplace`).
  std::vector<std::string> built_files;
};

// The cache key: the spec's python, install steps, install_inputs, env and network, the
// contents of pyproject.toml, setup.py, setup.cfg, requirements*.txt and install_inputs, and
// every file the install steps see. The steps run the repository's code with the entry
// writable: an entry is only ever reused by the very tree it was built from (red team
// round 4: a repository with another's spec and dependency files left a .pth in the venv
// the other's runs then imported).
util::Expected<std::string> EnvironmentKey(util::Env& env, const RepoSpec& spec,
                                           const std::string& root);

// Whether two trees declare the same dependencies (the spec's fields and the dependency
// files of the key): a run in one may use the environment built from the other.
util::Expected<bool> SameDependencies(util::Env& env, const RepoSpec& spec, const std::string& a,
                                      const std::string& b);

// Builds the environment unless the cache has it. The steps run with `sh -c` in a copy of
// the repository (src/) with $FBKIT_ENV (where a virtual environment goes: its bin/python
// becomes the interpreter), $FBKIT_SRC and $PYTHON (the spec's interpreter) set. Errors name
// the failing step and end with its output; the entry keeps the logs and the steps that
// finished, and the next build of the same key starts after them (said through `say`).
// Then pytest collects: test files that fail to collect are listed, not fatal.
util::Expected<BuiltEnvironment> EnsureEnvironment(util::Env& env, sandbox::Launcher& launcher,
                                                   const EnvRequest& request);

}  // namespace fbkit::runner

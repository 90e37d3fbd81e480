// The level-2 variant of a task: the feature built from scratch as a package `agent_code`.
// The gold patch creates `agent_code/`, a copy of the original top-level package with its
// imports of itself (and its module paths and its own name in str literals) redirected to
// `agent_code`: its files (data too) with tests kept inside the package left out, but with
// the modules in its test directories that its own code imports (astropy/tests/runner.py),
// and what the environment's install steps built into it (extension modules, a generated
// version file), so that a compiled package's gold runs; the test patch adds the F2P file with its
// imports (and dotted uses) of the top-level objects redirected to `agent_code`, and
// redirects the same way the conftest files pytest loads for it and the test helper modules
// these import (their fixtures, hooks and checks then build and expect agent_code's
// objects); pickles of the package's classes written as bytes
// literals (protocols 0-2) are renamed too.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "extract/make/repo.h"
#include "parser/python_parser.h"
#include "runner/git.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::make {

struct Level2 {
  std::string package;  // the original top-level package agent_code stands for
  std::string patch;
  std::string test_patch;
  std::vector<std::string> test_uses;  // what the test reads from agent_code, sorted
  std::vector<std::string> f2p_tests;  // the F2P test ids as the redirected file gives them
  // The conftest files and test helper modules the test patch redirects.
  std::vector<std::string> redirected;
};

// What agent_code is copied from beyond the Python files of `repo`.
struct PackageSources {
  std::vector<std::string> files;  // every file of the repository, root-relative
  // What the install steps built into the environment's copy of the repository: read
  // (never through a link) from `built_dir`, root-relative `built_files`.
  std::string built_dir;
  std::vector<std::string> built_files;
};

// A pytest configuration file of the repository as the L2 test patch redirects it.
struct ConfigRedirect {
  std::string path;  // root-relative
  std::string original;
  std::string redirected;
};

// The pytest configuration files pytest may take for `f2p` (pytest.ini, .pytest.ini,
// pyproject.toml, tox.ini, setup.cfg in its directory or above) whose pytest sections name
// the package's modules, those renamed to agent_code: a warning filter on the package's own
// warning class must name agent_code's (pyjwt's `"ignore::jwt.warnings.InsecureKeyLengthWarning"`
// under `"error"`). What such a path names from agent_code that is no module (the filter's
// category) is added to `uses` ("from agent_code.warnings import InsecureKeyLengthWarning").
util::Expected<std::vector<ConfigRedirect>> RedirectedConfigs(util::Env& env, const Repo& repo,
                                                              const std::string& f2p,
                                                              const std::string& package,
                                                              std::set<std::string>* uses);

util::Expected<Level2> WriteLevel2(util::Env& env, runner::Git& git, const Repo& repo,
                                   parser::PythonParser& parser, const std::string& f2p,
                                   const std::vector<std::string>& f2p_tests,
                                   const std::vector<Ent>& tops,
                                   const PackageSources& sources, const std::string& dir);

// `text` with every mention of one of the package's modules ("pkg.sub", regex-escaped
// "pkg\\.sub") renamed to agent_code ("agent_code.sub"). Used on the F2P file's str literals
// and on its test ids (pytest shows parametrised strings in them).
std::string RenameModulePaths(const Repo& repo, const std::string& package,
                              std::string_view text);

// The F2P file's text with every import of `package` redirected to agent_code (so that the
// test sees one implementation throughout), and the package's module paths named in its str
// literals ("pkg.sub.Error: ...", r"pkg\.sub", "pkg.sub.attr" targets) renamed the same way;
// `uses` gets what it reads from the package.
// The conftest.py files pytest loads for `f2p` (its directory and every parent up to the
// root), root first.
std::vector<std::string> ConftestChain(const Repo& repo, const std::string& f2p);

// The other test modules pytest loads for `f2p`: its conftest chain, then the repository's
// test modules that the F2P file and these import, transitively, with the test packages
// above them (helpers such as xarray/tests/__init__.py), by path.
std::vector<std::string> LoadedTestModules(const Repo& repo, const std::string& f2p);

util::Expected<std::string> RedirectTestImports(const Repo& repo, parser::PythonParser& python,
                                                const std::string& f2p,
                                                const std::string& package,
                                                std::vector<std::string>* uses);

}  // namespace fbkit::extract::make

// Pieces fb-race's subcommands share: the scratch directory, the options and the sharded,
// parallel loop of the commands that run tests (validate, files, gt), their progress lines.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_common.h"
#include "cli/spec_options.h"
#include "groundtruth/execution.h"
#include "groundtruth/records.h"
#include "parser/python_parser.h"
#include "util/env.h"
#include "util/expected.h"
#include "util/shard.h"

namespace fbkit::cli::race {

// The name fb-race's error messages start with ("fb-race: MESSAGE").
constexpr const char* kWho = "fb-race";

// --work-dir when given, else a fresh private directory under $TMPDIR (or /tmp) whose name
// no one can guess in advance.
util::Expected<std::string> ScratchDir(const std::string& given, const std::string& what);

// Options shared by the commands that run tests.
struct RunArgs {
  std::string instances;
  std::string repo;  // --repo: every instance's repository, whatever the file names
  std::string output;
  std::string work_dir;
  SpecArgs spec_options;
  runner::RepoSpec spec;  // resolved from `spec_options` before the command runs
  int repeat = 1;
  int jobs = 1;
  std::string shard;
  bool quiet = false;
};

// Adds RunArgs's options to `cmd`: -j, --shard, INSTANCES, the run spec's, --work-dir, -q.
void AddRunOptions(CLI::App* cmd, RunArgs* a);

// The instances, with repository paths made absolute (every one `repo` when given: --repo);
// a missing repository is left as given (its instance then fails on its own).
util::Expected<std::vector<groundtruth::Instance>> LoadInstances(util::Env& env,
                                                                 const std::string& path,
                                                                 const std::string& repo);

// Prints "fb-race CMD: ID: WHAT" on stderr unless `quiet`.
void Note(bool quiet, const std::string& cmd, const std::string& id, const std::string& what);

// A validation in one line: "ok (FAIL_TO_PASS n, PASS_TO_PASS m)", else "STATUS: REASON".
std::string Summary(const groundtruth::Validation& v);

// What one instance's run gives: output lines (two streams) and an exit code.
struct Out {
  std::string text, text2;
  int rc = kExitOk;
};

// The instances of the shard, run `jobs` at a time: fn(instance, its scratch dir, worker);
// texts are joined in input order, the exit code is the largest.
Out RunInstances(
    const std::vector<groundtruth::Instance>& all, const RunArgs& a,
    const util::Shard& shard, const std::string& work,
    const std::function<Out(const groundtruth::Instance&, const std::string&, int)>& fn);

// One parser per worker (tree-sitter parsers are not shared between threads).
util::Expected<std::vector<std::unique_ptr<parser::PythonParser>>> Parsers(int jobs);

// Resolves the run settings (--spec and the overriding options), then runs the command.
template <typename Args>
int WithSettings(Args& a, int (*run)(const Args&)) {
  auto spec = ResolveSpec(a.spec_options, "");
  if (!spec.ok()) return Fail(kWho, spec.error()), kExitUsage;
  a.spec = std::move(*spec);
  return run(a);
}

}  // namespace fbkit::cli::race

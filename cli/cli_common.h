// Shared pieces of fbkit's command-line tools: exit codes, progress on a terminal, output.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/services.h"
#include "runner/test_run.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::cli {

// Exit codes shared by fb-graph, fb-extract and fb-race.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,     // nothing (or not everything) could be produced
  kExitUsage = 2,       // bad command line
  kExitFileErrors = 3,  // output written, but some input files had errors (listed on stderr)
};

// A one-line progress indicator on stderr, shown only when stderr is a terminal.
class Progress {
 public:
  Progress(std::string label, bool enabled);
  ~Progress();
  void Update(size_t done, size_t total);
  // Clears the line (before other output); Update() may show it again.
  void Clear();

 private:
  std::string label_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_;
};

// A tool's main() after its subcommands are added: parses argv, runs the chosen
// subcommand's callback and returns the exit code it stored in `exit_code`; kExitUsage for
// a bad command line (0 for --help), kExitFailure for an exception ("NAME: fatal: ...").
int RunMain(CLI::App& app, int argc, char** argv, const char* name, const int& exit_code);

// Prints "WHO: MESSAGE" on stderr and returns kExitFailure.
int Fail(const std::string& who, const std::string& message);

// An option whose words name the values of an enum (`words` in the order help lists them):
// the word is turned into its value when the command line is parsed, and any other word is
// a usage error naming the words; help shows TEXT:{word,...} as for any choice.
template <typename E>
CLI::Option* AddChoice(CLI::App* cmd, const std::string& name, E* value,
                       const std::vector<std::pair<std::string, E>>& words,
                       const std::string& help) {
  std::vector<std::string> names;
  for (const auto& w : words) names.push_back(w.first);
  std::map<std::string, E> map(words.begin(), words.end());
  return cmd->add_option(name, help)
      ->type_name("TEXT")
      ->check(CLI::IsMember(names))
      ->each([value, map](const std::string& word) { *value = map.at(word); });
}

// --exposed-copies refuse|hide|allow into `value` (left unset: the task's spec decides);
// `view` names the sandbox the copies would be seen from.
CLI::Option* AddExposedCopies(CLI::App* cmd, std::optional<sandbox::CopyPolicy>* value,
                              const std::string& view);

// $XDG_CACHE_HOME/fbkit/SUB, else ~/.cache/fbkit/SUB; nullopt without either variable.
std::optional<std::string> UserCacheDir(const std::string& sub);

// A new private directory $TMPDIR/fbkit-WHAT-XXXXXX (or under /tmp), for scratch work; its
// absolute path.
util::Expected<std::string> MakeScratchDir(const std::string& what);

// Writes `data` to `path`, or to stdout when path is "-".
util::Status WriteOutput(util::Env& env, const std::string& path, std::string_view data);

// The test runner of every command: pytest under fbkit's agent, in the sandbox the spec
// says, on the real file system (tracer::AgentTestRunner).
runner::TestRunner& AgentTests();

// The real side effects every pipeline stage is given: the file system, processes and
// AgentTests().
runner::Services RealServices();

}  // namespace fbkit::cli

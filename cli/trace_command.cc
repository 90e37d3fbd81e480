#include "cli/trace_command.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "cli/cli_common.h"
#include "cli/spec_options.h"
#include "tracer/run_trace.h"
#include "tracer/trace_json.h"
#include "util/shard.h"

namespace fbkit::cli {
namespace {

struct TraceArgs {
  std::string root;
  std::string output = "-";
  tracer::TraceOptions options;
  SpecArgs spec;
  std::string work_dir;
  bool keep_work = false;
  bool details = false;
  bool quiet = false;
  std::string shard;          // "K/N"
  std::string shard_weights;  // a previous trace (with --details)
};

// Per test file, the sum of its tests' durations in a trace written with --details.
util::Expected<std::map<std::string, double>> Durations(util::Env& env, const std::string& path) {
  auto trace = tracer::LoadTraces(env, {path});
  if (!trace.ok()) return trace.failure();
  std::map<std::string, double> out;
  for (const auto& [name, f] : trace->files) {
    double sum = 0;
    for (const auto& [id, t] : f.tests) sum += t.duration;
    if (sum > 0) out[name] = sum;
  }
  if (out.empty()) return util::Error{path + ": no test durations (trace it with --details)"};
  return out;
}

// Problem files always; the one-line summary unless quiet.
void Summarise(const tracer::TraceSet& t, double seconds, bool quiet) {
  size_t bad = 0;
  for (const auto& [name, f] : t.files) {
    if (f.status == runner::FileStatus::kOk) continue;
    ++bad;
    std::fprintf(stderr, "%s: %s\n", name.c_str(), runner::FileStatusName(f.status));
  }
  if (quiet) return;
  std::string counts;
  for (const auto& [k, v] : t.counts) counts += " " + std::to_string(v) + " " + k + ",";
  if (!counts.empty()) counts.pop_back();
  std::fprintf(stderr, "fb-graph trace: %zu test files (%zu with problems),%s; %.1f s%s%s\n",
               t.files.size(), bad, counts.c_str(), seconds,
               t.accelerated ? "" : " (pure-Python agent",
               t.accelerated ? "" : (t.accel_error ? ": " + *t.accel_error + ")" : ")").c_str());
}

constexpr char kTraceWho[] = "fb-graph trace";

// Why a written trace holds no test outcome to build on, or nothing when it holds one. A
// shard may hold none (the merge decides); files that failed to collect or crashed are exit
// 3's. Otherwise no outcome at all is an error: with the agent's integrity findings when it
// refused records (the repository's own code ran pytest's hooks, as pytest-dev/pytest's does).
std::optional<std::string> NothingTraced(const tracer::TraceSet& t, bool sharded) {
  if (sharded) return std::nullopt;
  size_t tests = 0;
  bool problems = false;
  for (const auto& [name, f] : t.files) {
    tests += f.tests.size();
    problems = problems || f.status != runner::FileStatus::kOk;
  }
  if (tests > 0 || (problems && t.integrity.empty())) return std::nullopt;
  std::string why = t.files.empty() ? "no test file was traced"
                                    : "no test outcome was recorded in " +
                                          std::to_string(t.files.size()) + " test files";
  if (t.integrity.empty()) {
    return why + " (check --tests, --pytest-arg and the project's pytest configuration)";
  }
  why += "; the agent refused records, its integrity findings:";
  for (size_t i = 0; i < t.integrity.size() && i < 5; ++i) why += "\n  " + t.integrity[i];
  return why;
}

// args.options completed from the command line (root, spec, environment built, shard and its
// weights); else the exit code to stop with.
std::optional<int> Prepare(util::Env& env, TraceArgs& args) {
  auto root = env.RealPath(args.root);
  if (!root.ok()) return Fail(kTraceWho, root.error());
  auto spec = ResolveSpec(args.spec, *root);
  if (!spec.ok()) return Fail(kTraceWho, spec.error()), kExitUsage;
  if (auto s = PrepareEnvironment(*spec, *root, kTraceWho, args.quiet); !s.ok()) {
    return Fail(kTraceWho, s.error());
  }
  if (!args.shard.empty()) {
    auto shard = util::ParseShard(args.shard);
    if (!shard.ok()) return Fail(kTraceWho, shard.error()), kExitUsage;
    if (!args.options.isolate) {
      return Fail(kTraceWho, "--shard needs --isolate (one process per test file)"), kExitUsage;
    }
    args.options.shard = *shard;
  }
  if (!args.shard_weights.empty()) {
    auto weights = Durations(env, args.shard_weights);
    if (!weights.ok()) return Fail(kTraceWho, weights.error());
    args.options.shard_weights = std::move(*weights);
  }
  args.options.root = *root;
  args.options.spec = std::move(*spec);
  args.options.accel_cache_dir = UserCacheDir("accel").value_or("");
  return std::nullopt;
}

int Run(TraceArgs& args) {
  auto start = std::chrono::steady_clock::now();
  util::Env& env = util::RealEnv();
  if (auto stop = Prepare(env, args)) return *stop;
  // Absolute: the sandbox binds paths of the work dir and runs its processes elsewhere.
  std::string work = args.work_dir.empty() ? "" : std::filesystem::absolute(args.work_dir).string();
  if (work.empty()) {
    auto scratch = MakeScratchDir("trace");
    if (!scratch.ok()) return Fail(kTraceWho, scratch.error());
    work = *scratch;
  }
  args.options.work_dir = work;
  Progress progress("fb-graph trace:", !args.quiet);
  auto trace = tracer::RunTrace(env, sandbox::RealLauncher(), args.options,
                                [&](const tracer::TraceProgress& p) {
                                  progress.Update(p.files_done, p.files_total);
                                });
  progress.Clear();
  if (!args.keep_work && args.work_dir.empty()) (void)env.RemoveAll(work);
  if (!trace.ok()) return Fail(kTraceWho, trace.error());
  util::Status written = WriteOutput(env, args.output, tracer::TraceDocument(*trace, args.details));
  if (!written.ok()) return Fail(kTraceWho, written.error());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Summarise(*trace, seconds, args.quiet);
  if (auto why = NothingTraced(*trace, !args.shard.empty())) return Fail(kTraceWho, *why);
  for (const auto& [name, f] : trace->files) {
    if (f.status != runner::FileStatus::kOk) return kExitFileErrors;
  }
  return kExitOk;
}

}  // namespace

void AddTraceCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TraceArgs>();
  CLI::App* cmd = app.add_subcommand(
      "trace", "Run the pytest suite once under fbkit's agent; write fbkit.trace/1 JSON");
  cmd->footer(
      "Runs pytest in ROOT (never writing into it) with fbkit's agent loaded as a plugin, and "
      "records per test file every call edge between repository functions (code identity: "
      "path, first line, name), plus every test's outcome from pytest's own hooks. A test "
      "file that crashes the interpreter or exceeds --timeout is marked so and the remaining "
      "files run in a new session.\n\n"
      "Run settings come from the repo spec (ROOT/fbkit.toml or --spec; see docs/repo-spec.md); the "
      "tests run in the bubblewrap sandbox with ROOT read-only unless --sandbox none.\n\n"
      "Exit status: 0 ok (failing tests are data, not errors); 1 failure (no interpreter, no "
      "pytest, nothing collected, no test outcome recorded: the trace is written and stderr says "
      "why); 2 bad usage; 3 trace written, but some test files failed "
      "to collect, crashed or timed out (named on stderr).");
  cmd->add_option("ROOT", args->root, "Repository root")->required();
  cmd->add_option("-o,--output", args->output, "Output file ('-' for stdout)");
  AddSpecOptions(cmd, &args->spec, kSpecRun | kSpecTests | kSpecExclude);
  cmd->add_flag("--isolate", args->options.isolate,
                "One pytest process per test file (the reference mode; slower)");
  cmd->add_option("-j,--jobs", args->options.jobs, "Processes at once with --isolate (default 1)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--shard", args->shard,
                  "K/N: with --isolate, run only the K-th of N contiguous parts of the test "
                  "files (balanced by file size, or by --shard-weights); merge the N traces "
                  "with fb-graph merge or give them all to fb-graph build --trace");
  cmd->add_option("--shard-weights", args->shard_weights,
                  "A previous trace written with --details: balance the shards by its "
                  "per-file test durations");
  cmd->add_option("--work-dir", args->work_dir,
                  "Keep the agent, journals and pytest logs here (default: a temporary dir)");
  cmd->add_flag("--keep-work", args->keep_work, "Do not delete the temporary work dir");
  cmd->add_flag("--details", args->details,
                "Include per-test durations and failure messages (they vary between runs)");
  cmd->add_flag("!--no-accel", args->options.accelerate,
                "Use the pure-Python agent, not the C accelerator (compiled on first use "
                "against the interpreter's headers and cached)");
  cmd->add_option("--cc", args->options.compiler, "C compiler for the accelerator (default: cc)");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress or summary on stderr");
  cmd->callback([args, exit_code] { *exit_code = Run(*args); });
}

}  // namespace fbkit::cli

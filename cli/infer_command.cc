#include "cli/infer_command.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>

#include "cli/batch.h"
#include "cli/cli_common.h"
#include "cli/extract_common.h"
#include "cli/spec_options.h"
#include "extract/agents.h"
#include "extract/infer.h"
#include "util/file_lock.h"
#include "util/parallel.h"

namespace fbkit::cli {
namespace {

using json = nlohmann::json;

struct InferArgs {
  std::string tasks;
  std::string agent_cmd;
  std::string agent;  // a preset (extract/agents.h)
  std::string agent_path, model_url, sidecar;
  std::vector<std::string> agent_args;
  std::string output;
  std::string model;
  std::string shard;
  std::string sandbox = "bwrap";
  std::vector<std::string> env, pass_env, read_only, only;
  double timeout = 3600;
  int64_t max_file_kb = 1024;
  int64_t memory_mb = -1, processes = -1;  // -1: the task's spec
  int jobs = 1;
  bool network = false;
  bool rerun = false;
  bool quiet = false;
  CLI::Option* network_option = nullptr;
};

util::Expected<std::vector<std::pair<std::string, std::string>>> AgentEnv(const InferArgs& a) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : a.env) {
    auto kv = ParseEnvAssignment(item);
    if (!kv.ok()) return util::Error{kv.error()};
    out.push_back(std::move(*kv));
  }
  for (const auto& name : a.pass_env) {
    const char* value = std::getenv(name.c_str());
    if (!value) return util::Error{"--pass-env " + name + ": not set in fbkit's environment"};
    out.emplace_back(name, value);
  }
  return out;
}

// A result of an earlier run that is final (finished or timed out), unless --rerun.
std::optional<extract::InferResult> Earlier(util::Env& env, const std::string& dir) {
  auto text = env.ReadFile(util::JoinPath(dir, "result.json"));
  if (!text.ok()) return std::nullopt;
  auto r = extract::ParseInferResult(*text);
  if (!r.ok() || r->status == "error") return std::nullopt;
  return *r;
}

std::string Describe(const extract::InferResult& r) {
  if (r.status == "error") return "error: " + r.error.substr(0, 200);
  std::string what = r.status == "timed_out" ? "timed out" : "exit " + std::to_string(r.exit_code);
  if (r.signal) what = "killed by signal " + std::to_string(r.signal);
  char buf[200];
  std::snprintf(buf, sizeof buf, ", patch %zu bytes, agent %.1f s, fbkit %.2f s", r.patch.size(),
                r.agent_seconds, r.fbkit_seconds);
  return what + buf + (r.excluded.empty() ? "" : ", " + std::to_string(r.excluded.size()) + " files left out");
}

// RUN_DIR/predictions.jsonl from every instance directory with a final result (all shards
// that share RUN_DIR), sorted by instance id: SWE-bench's convention.
util::Status WritePredictions(util::Env& env, const std::string& run,
                              const std::map<std::string, std::string>& tasks) {
  std::string out;
  for (const auto& [id, dir] : tasks) {
    std::string inst = util::JoinPath(run, id);
    auto r = Earlier(env, inst);
    auto patch = env.ReadFile(util::JoinPath(inst, "patch.diff"));
    auto model = env.ReadFile(util::JoinPath(inst, "model"));
    if (!r || !patch.ok() || !model.ok()) continue;
    json row = {{"instance_id", id}, {"model_name_or_path", *model}, {"model_patch", *patch}};
    out += row.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  }
  return env.WriteFileAtomic(util::JoinPath(run, "predictions.jsonl"), out);
}

// The run's summary: counts, agent exit codes, token IO, fbkit's own time per instance.
std::string Summary(const std::vector<extract::InferResult>& results, const std::string& shard) {
  size_t finished = 0, timed_out = 0, errors = 0, empty = 0, with_usage = 0;
  double input = 0, output = 0, fbkit = 0;
  std::map<std::string, size_t> exits;
  for (const auto& r : results) {
    finished += r.status == "finished";
    timed_out += r.status == "timed_out";
    errors += r.status == "error";
    empty += r.status != "error" && r.patch.empty();
    if (r.status == "finished") {
      exits[r.signal ? "signal " + std::to_string(r.signal) : std::to_string(r.exit_code)]++;
    }
    if (r.usage) {
      ++with_usage;
      input += static_cast<double>(r.usage->input_tokens);
      output += static_cast<double>(r.usage->output_tokens);
    }
    fbkit += r.fbkit_seconds;
  }
  json j = {{"schema", "fbkit.infer-summary/1"},
            {"instances", results.size()},
            {"finished", finished},
            {"timed_out", timed_out},
            {"errors", errors},
            {"empty_patch", empty},
            {"agent_exit_codes", exits},
            {"instances_with_usage", with_usage},
            {"shard", shard}};
  j["mean_input_tokens"] = with_usage ? json(input / static_cast<double>(with_usage)) : json(nullptr);
  j["mean_output_tokens"] = with_usage ? json(output / static_cast<double>(with_usage)) : json(nullptr);
  j["fbkit_seconds_per_instance"] =
      results.empty() ? 0.0 : static_cast<int64_t>(fbkit / static_cast<double>(results.size()) * 1000) / 1000.0;
  return j.dump(2) + "\n";
}

void PrintTable(const std::string& summary) {
  json j = json::parse(summary);
  std::printf("%-34s %8d\n", "instances (this shard)", j["instances"].get<int>());
  for (const char* k : {"finished", "timed_out", "errors", "empty_patch"}) {
    std::printf("  %-32s %8d\n", k, j[k].get<int>());
  }
  for (const auto& [code, n] : j["agent_exit_codes"].items()) {
    std::printf("  agent exit %-21s %8d\n", code.c_str(), n.get<int>());
  }
  if (j["instances_with_usage"].get<int>() > 0) {
    std::printf("%-34s %8.0f\n", "mean input tokens", j["mean_input_tokens"].get<double>());
    std::printf("%-34s %8.0f\n", "mean output tokens", j["mean_output_tokens"].get<double>());
  }
  std::printf("%-34s %8.3f\n", "fbkit seconds per instance", j["fbkit_seconds_per_instance"].get<double>());
}

int Run(const InferArgs& a) {
  const std::string who = "fb-extract infer";
  util::Env& env = util::RealEnv();
  auto shard = ParseShard(a.shard);
  if (!shard.ok()) return Fail(who, shard.error()), kExitUsage;
  if (a.agent_cmd.empty() == a.agent.empty()) {
    return Fail(who, "give either --agent NAME or --agent-cmd CMD"), kExitUsage;
  }
  auto agent_env = AgentEnv(a);
  if (!agent_env.ok()) return Fail(who, agent_env.error()), kExitUsage;
  if (a.sandbox == "bwrap") {
    if (auto s = tracer::CheckBwrap(); !s.ok()) return Fail(who, s.error());
  }
  auto tasks = FindTasks(env, a.tasks);
  if (!tasks.ok()) return Fail(who, tasks.error());
  if (auto s = env.MakeDirs(util::JoinPath(a.output, ".fbkit")); !s.ok()) {
    return Fail(who, a.output + ": " + s.error());
  }
  auto run = env.RealPath(a.output);
  if (!run.ok()) return Fail(who, "cannot resolve " + a.output);
  std::vector<std::pair<std::string, std::string>> mine;  // (id, task dir), sorted by id
  size_t index = 0;
  for (const auto& [id, dir] : *tasks) {
    bool chosen = a.only.empty() || std::find(a.only.begin(), a.only.end(), id) != a.only.end();
    if (chosen && InShard(index++, *shard)) mine.emplace_back(id, dir);
  }
  extract::InferOptions o;
  o.agent_cmd = a.agent_cmd;
  o.read_only = a.read_only;
  if (!a.agent.empty()) {
    const char* dir = std::getenv("FBKIT_AGENTS_DIR");
    extract::AgentChoice choice{a.agent, a.agent_path, dir ? dir : FBKIT_AGENTS_DIR, a.model,
                                a.model_url, a.agent_args};
    auto launch = extract::PrepareAgent(choice);
    if (!launch.ok()) return Fail(who, launch.error()), kExitUsage;
    const std::string& key = launch->key_env;
    bool has_key = std::any_of(agent_env->begin(), agent_env->end(),
                               [&](const auto& kv) { return kv.first == key; });
    if (!key.empty() && !has_key) {
      std::fprintf(stderr, "%s: warning: %s reads its API key from %s, which the agent is not "
                   "given (--pass-env %s, or --env %s=...)\n", who.c_str(), a.agent.c_str(),
                   key.c_str(), key.c_str(), key.c_str());
    }
    bool network = a.network_option->count() ? a.network : false;
    if (!network && a.sidecar.empty()) {
      std::fprintf(stderr, "%s: note: the agent has no network unless the task's spec allows it; "
                   "a model endpoint off this machine needs --network\n", who.c_str());
    }
    o.agent_cmd = launch->command;
    o.read_only.insert(o.read_only.end(), launch->read_only.begin(), launch->read_only.end());
    o.output_files = launch->output_files;
    agent_env->insert(agent_env->begin(), launch->env.begin(), launch->env.end());
  } else if (!a.agent_path.empty() || !a.model_url.empty() || !a.agent_args.empty()) {
    return Fail(who, "--agent-path, --model-url and --agent-arg go with --agent NAME"), kExitUsage;
  }
  o.agent_cmd = extract::WithSidecar(a.sidecar, o.agent_cmd);
  o.timeout = a.timeout;
  o.sandbox = a.sandbox == "none" ? tracer::SandboxKind::kNone : tracer::SandboxKind::kBwrap;
  if (a.network_option->count()) o.network = a.network;
  o.env = *agent_env;
  // The agent sees none of the task directories (nor their neighbours): each task's parent is
  // hidden (TASKS itself, or the directories a task list names tasks in).
  std::set<std::string> parents;
  for (const auto& [id, dir] : *tasks) parents.insert(util::DirName(dir));
  o.hidden.assign(parents.begin(), parents.end());
  o.max_file_kb = a.max_file_kb;
  o.memory_mb = a.memory_mb;
  o.processes = a.processes;
  o.run_dir = *run;
  if (auto s = extract::CheckAgentCommand(o); !s.ok()) return Fail(who, s.error());
  const std::string model = !a.model.empty() ? a.model : !a.agent.empty() ? a.agent : "agent";
  Batch<extract::InferResult> batch;
  batch.label = who;
  batch.jobs = a.jobs;
  batch.quiet = a.quiet;
  batch.id = [&](size_t i) { return mine[i].first; };
  batch.earlier = [&](size_t i) -> std::optional<extract::InferResult> {
    std::string inst = util::JoinPath(*run, mine[i].first);
    std::optional<extract::InferResult> r = a.rerun ? std::nullopt : Earlier(env, inst);
    if (r) {
      auto patch = env.ReadFile(util::JoinPath(inst, "patch.diff"));
      r->patch = patch.ok() ? *patch : "";
    }
    return r;
  };
  batch.run = [&](size_t i) {
    extract::InferResult r = extract::RunAgent(env, tracer::RealLauncher(), mine[i].second, o);
    std::string inst = util::JoinPath(*run, mine[i].first);
    if (auto s = WriteFiles(env, inst, {{"model", model}, {"result.json", extract::InferResultJson(r)}});
        !s.ok()) {
      r.status = "error";
      r.error = "writing the result: " + s.error();
    }
    return r;
  };
  batch.describe = Describe;
  // The agent cannot start: the others would fail alike.
  batch.stops = [](const extract::InferResult& r) { return r.could_not_start; };
  std::vector<extract::InferResult> results;
  for (auto& r : RunBatch(mine.size(), batch)) {
    if (r) results.push_back(std::move(*r));
  }
  auto failed = std::find_if(results.begin(), results.end(), [](const auto& r) { return r.could_not_start; });
  if (failed != results.end()) Fail(who, "stopped: " + failed->instance_id + ": " + failed->error);
  {
    util::FileLock lock(util::JoinPath(*run, ".fbkit/lock"));  // shards sharing RUN_DIR
    if (auto s = WritePredictions(env, *run, *tasks); !s.ok()) return Fail(who, s.error());
  }
  std::string shard_name = std::to_string(shard->first) + "/" + std::to_string(shard->second);
  std::string summary = Summary(results, shard_name);
  std::string name = shard->second == 1 ? "infer_summary.json"
                                        : "infer_summary." + std::to_string(shard->first) + "-of-" +
                                              std::to_string(shard->second) + ".json";
  if (auto s = env.WriteFileAtomic(util::JoinPath(*run, name), summary); !s.ok()) return Fail(who, s.error());
  PrintTable(summary);
  bool any_error = std::any_of(results.begin(), results.end(),
                               [](const auto& r) { return r.status == "error"; });
  return any_error ? kExitFailure : kExitOk;
}

}  // namespace

void AddInferCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<InferArgs>();
  CLI::App* cmd = app.add_subcommand(
      "infer", "Run an agent on every task: workspace, problem statement, agent, patch");
  cmd->footer(
      "Per instance (sorted by id): RUN_DIR/<id>/workspace is a fresh clone of the task's "
      "presolved/ (L1: the feature removed, no F2P test file, a clean git state) or an empty "
      "git project (L2); RUN_DIR/<id>/input/problem_statement.md is the statement. CMD runs "
      "with sh -c in the workspace, inside the sandbox (the system read-only, homes, /tmp, "
      "the task directories and the run directory hidden; only RUN_DIR/<id>/workspace and output writable; "
      "network as the task's spec says, or --network), with FBKIT_INSTANCE_ID, "
      "FBKIT_PROBLEM_STATEMENT, FBKIT_WORKSPACE, FBKIT_LEVEL, FBKIT_USAGE (write "
      "{\"input_tokens\", \"output_tokens\", \"cost\"?} there) and FBKIT_OUTPUT_DIR (leave "
      "trajectories there: SWE-agent .traj, mini-swe-agent .traj.json and OpenHands "
      "output.jsonl are read for token usage) set, and {instance_id}, {workspace} and "
      "{problem_statement} substituted in CMD. Its output goes to RUN_DIR/<id>/agent.log.\n\n"
      "--agent NAME runs a coding-agent CLI headless instead (codex, claude-code, gemini-cli: "
      "installed by FBKIT_AGENTS=NAME ./setup.sh into .deps/agents, else found on PATH, or "
      "--agent-path), its installation exposed read-only, the statement as its prompt, its "
      "home, configuration, sessions and JSON event stream (output/NAME.jsonl) kept in "
      "output/, --model and --model-url passed the way it reads them, and its usage, cost, "
      "model calls and trajectory read from its own logs. Give it its API key with --pass-env "
      "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY) and --network for a real endpoint.\n\n"
      "A command the sandbox cannot show (a script under /tmp, an install in a home) is an "
      "error before any instance runs; one that does not start inside it (exit 126/127 and "
      "the shell's message) stops the run at its first instance.\n\n"
      "Afterwards the patch is the workspace's whole change against its start, new files "
      "included; binary files and files over --max-file-kb are left out and listed. "
      "RUN_DIR/predictions.jsonl ({instance_id, model_name_or_path, model_patch}) holds every "
      "finished instance; `fb-extract eval TASKS --predictions RUN_DIR/predictions.jsonl` "
      "scores it (agent logs and token usage are found beside it). Re-runs skip finished "
      "instances.\n\n"
      "Exit status: 0 ok (whatever the agents did); 1 an instance could not be run; 2 bad usage.");
  cmd->add_option("TASKS", a->tasks, "A task directory, or a directory of them")->required();
  std::string names;
  for (const auto& p : extract::AgentPresets()) names += (names.empty() ? "" : ", ") + p.name;
  auto* agent = cmd->add_option("--agent", a->agent,
                                "A coding-agent CLI run headless, its logs read natively: " + names +
                                    " (see below)");
  auto* agent_cmd = cmd->add_option("--agent-cmd", a->agent_cmd, "Any other agent's command (sh -c)");
  agent->excludes(agent_cmd);
  cmd->add_option("--agent-path", a->agent_path,
                  "With --agent: its executable (default: setup.sh's install in .deps/agents, "
                  "else PATH)");
  cmd->add_option("--model-url", a->model_url,
                  "With --agent: the model API's base URL (default: the vendor's)");
  cmd->add_option("--agent-arg", a->agent_args,
                  "With --agent: one more argument for its command line (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--sidecar", a->sidecar,
                  "A command run in the agent's sandbox before it (sh -c; must return once "
                  "ready, e.g. a local model server that detaches); the agent does not start "
                  "when it fails");
  cmd->add_option("-o,--output", a->output, "Run directory")->required();
  cmd->add_option("--model", a->model, "The model: model_name_or_path of the predictions, and with --agent the model it "
                  "asks for (default: the agent's own; named by the agent)");
  cmd->add_option("-j,--jobs", a->jobs, "Instances at once (default 1)")->check(CLI::Range(1, 256));
  cmd->add_option("--shard", a->shard, "Only the K-th of N shares of the instances (K/N)");
  cmd->add_option("--timeout", a->timeout, "Seconds per agent run (default 3600; 0: none)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--sandbox", a->sandbox, "bwrap (default) or none")
      ->check(CLI::IsMember({"bwrap", "none"}));
  a->network_option = cmd->add_flag("--network", a->network,
                                    "Let the agent reach the network (model APIs); default: the "
                                    "task's spec");
  cmd->add_option("--env", a->env, "NAME=VALUE for the agent (repeatable)");
  cmd->add_option("--pass-env", a->pass_env,
                  "Pass NAME from fbkit's environment to the agent, e.g. an API key (repeatable)");
  cmd->add_option("--read-only", a->read_only,
                  "A path the agent may read although hidden (its installation; repeatable)");
  cmd->add_option("--max-file-kb", a->max_file_kb, "Larger files are left out of the patch (default 1024)");
  cmd->add_option("--memory-mb", a->memory_mb,
                  "Address space per agent process (default: the task's limits.memory_mb; 0: "
                  "none; agents on node or the JVM reserve more than they use)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--processes", a->processes,
                  "Processes and threads of the agent's sandbox (default: the task's; 0: none)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--instance", a->only, "Only this instance id (repeatable)");
  cmd->add_flag("--rerun", a->rerun, "Run again instances an earlier run finished");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  cmd->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace fbkit::cli

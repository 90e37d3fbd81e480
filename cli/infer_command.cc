#include "cli/infer_command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>

#include "cli/batch.h"
#include "cli/cli_common.h"
#include "cli/extract_common.h"
#include "cli/spec_options.h"
#include "agents/presets.h"
#include "agents/run_dir.h"
#include "extract/infer/instance.h"
#include "extract/infer/run.h"
#include "util/shard.h"

namespace fbkit::cli {
namespace {

using json = nlohmann::json;

struct InferArgs {
  std::string tasks;
  std::string agent_cmd;
  std::string agent;  // a preset (agents/presets.h)
  std::string agent_path, model_url, sidecar;
  std::vector<std::string> agent_args;
  std::string output;
  std::string model;
  std::string shard;
  std::string sandbox = "bwrap";
  std::string images;            // --sandbox container: fb-extract images' images.json
  std::string engine = "podman";
  std::vector<std::string> env, pass_env, read_only, only;
  double timeout = 3600;
  int64_t max_file_kb = 1024;
  int64_t max_patch_mb = 64;
  int64_t memory_mb = -1, processes = -1;  // -1: the task's spec
  int jobs = 1;
  std::string network;  // "": the task's spec (model when it allows the network)
  std::vector<std::string> allow_endpoints;
  std::optional<sandbox::CopyPolicy> exposed_copies;  // unset: the task's spec
  bool rerun = false;
  bool trust_settings = false;
  bool quiet = false;
};

util::Expected<std::vector<std::pair<std::string, std::string>>> AgentEnv(const InferArgs& a) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : a.env) {
    auto kv = ParseEnvAssignment(item);
    if (!kv.ok()) return kv.failure();
    out.push_back(std::move(*kv));
  }
  for (const auto& name : a.pass_env) {
    if (!runner::IsVariableName(name)) {
      return util::Error{"--pass-env " + name + ": not a variable name"};
    }
    const char* value = std::getenv(name.c_str());
    if (!value) return util::Error{"--pass-env " + name + ": not set in fbkit's environment"};
    out.emplace_back(name, value);
  }
  return out;
}

std::string DescribeResult(const extract::infer::InferResult& r) {
  if (r.status == extract::infer::InferStatus::kError) return "error: " + r.error.substr(0, 200);
  std::string what = r.status == extract::infer::InferStatus::kTimedOut
                         ? "timed out"
                         : "exit " + std::to_string(r.exit_code);
  if (r.signal) what = "killed by signal " + std::to_string(r.signal);
  char buf[200];
  std::snprintf(buf, sizeof buf, ", patch %zu bytes, agent %.1f s, fbkit %.2f s", r.patch.size(),
                r.agent_seconds, r.fbkit_seconds);
  return what + buf + (r.excluded.empty() ? "" : ", " + std::to_string(r.excluded.size()) + " files left out");
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

constexpr char kInferWho[] = "fb-extract infer";

// The agent's command, files and environment from --agent NAME (a preset) or --agent-cmd,
// with warnings for what the agent will lack; else the exit code to stop with.
std::optional<int> AgentOptions(const InferArgs& a,
                                std::vector<std::pair<std::string, std::string>> agent_env,
                                extract::infer::InferOptions* o) {
  o->agent_cmd = a.agent_cmd;
  o->read_only = a.read_only;
  if (!a.agent.empty()) {
    const char* dir = std::getenv("FBKIT_AGENTS_DIR");
    agents::AgentChoice choice{a.agent, a.agent_path, dir ? dir : FBKIT_AGENTS_DIR, a.model,
                                a.model_url, a.agent_args};
    auto launch = agents::PrepareAgent(util::RealEnv(), choice);
    if (!launch.ok()) return Fail(kInferWho, launch.error()), kExitUsage;
    const std::string& key = launch->key_env;
    bool has_key = std::any_of(agent_env.begin(), agent_env.end(),
                               [&](const auto& kv) { return kv.first == key; });
    if (!key.empty() && !has_key) {
      std::fprintf(stderr, "%s: warning: %s reads its API key from %s, which the agent is not "
                   "given (--pass-env %s, or --env %s=...)\n", kInferWho, a.agent.c_str(),
                   key.c_str(), key.c_str(), key.c_str());
    }
    if (a.network.empty() && a.sidecar.empty()) {
      std::fprintf(stderr, "%s: note: the agent has no network unless the task's spec allows it; "
                   "a model endpoint off this machine needs --network (its model's endpoint "
                   "alone, through fbkit's proxy)\n", kInferWho);
    }
    for (const auto& url : launch->model_urls) {
      auto e = sandbox::EndpointOf(url);
      if (!e.ok()) return Fail(kInferWho, "--model-url: " + e.error()), kExitUsage;
      o->endpoints.push_back(*e);
    }
    o->agent_cmd = launch->command;
    o->read_only.insert(o->read_only.end(), launch->read_only.begin(), launch->read_only.end());
    o->output_files = launch->output_files;
    agent_env.insert(agent_env.begin(), launch->vars.begin(), launch->vars.end());
  } else if (!a.agent_path.empty() || !a.model_url.empty() || !a.agent_args.empty()) {
    return Fail(kInferWho, "--agent-path, --model-url and --agent-arg go with --agent NAME"), kExitUsage;
  }
  o->agent_cmd = agents::WithSidecar(a.sidecar, o->agent_cmd);
  o->vars = std::move(agent_env);
  return std::nullopt;
}

// What the agent must not see: every task directory and its neighbours, as each task's
// parent (TASKS itself, or the directories a task list names tasks in).
std::vector<std::string> Parents(const std::map<std::string, std::string>& tasks) {
  std::set<std::string> parents;
  for (const auto& [id, dir] : tasks) parents.insert(util::DirName(dir));
  return {parents.begin(), parents.end()};
}

// The run's options from the command line; else the exit code to stop with.
std::optional<int> Prepare(util::Env& env, const InferArgs& a, extract::infer::InferRunOptions* r) {
  auto shard = util::ParseShard(a.shard);
  if (!shard.ok()) return Fail(kInferWho, shard.error()), kExitUsage;
  if (a.agent_cmd.empty() == a.agent.empty()) {
    return Fail(kInferWho, "give either --agent NAME or --agent-cmd CMD"), kExitUsage;
  }
  auto agent_env = AgentEnv(a);
  if (!agent_env.ok()) return Fail(kInferWho, agent_env.error()), kExitUsage;
  if (a.sandbox == "bwrap") {
    if (auto s = sandbox::CheckBwrap(); !s.ok()) return Fail(kInferWho, s.error());
  }
  auto tasks = FindTasks(env, a.tasks);
  if (!tasks.ok()) return Fail(kInferWho, tasks.error());
  if (auto s = env.MakeDirs(agents::InferRunDir{a.output}.private_dir()); !s.ok()) {
    return Fail(kInferWho, a.output + ": " + s.error());
  }
  auto run = env.RealPath(a.output);
  if (!run.ok()) return Fail(kInferWho, "cannot resolve " + a.output);
  size_t index = 0;
  for (const auto& [id, dir] : *tasks) {
    bool chosen = a.only.empty() || std::find(a.only.begin(), a.only.end(), id) != a.only.end();
    if (chosen && util::InShard(index++, *shard)) r->instances.emplace_back(id, dir);
  }
  extract::infer::InferOptions& o = r->infer;
  if (auto stop = AgentOptions(a, std::move(*agent_env), &o)) return stop;
  o.timeout = a.timeout;
  o.sandbox = a.sandbox == "none"        ? sandbox::SandboxKind::kNone
              : a.sandbox == "container" ? sandbox::SandboxKind::kContainer
                                         : sandbox::SandboxKind::kBwrap;
  if (o.sandbox == sandbox::SandboxKind::kContainer) {
    if (auto stop = ContainerImages(env, kInferWho, a.engine, a.images, true, &o.images)) return stop;
    o.engine = a.engine;
  } else if (!a.images.empty()) {
    return Fail(kInferWho, "--images is for --sandbox container"), kExitUsage;
  }
  o.trust_settings = a.trust_settings;
  if (a.network == "model") o.network = extract::infer::AgentNetwork::kModel;
  if (a.network == "full") o.network = extract::infer::AgentNetwork::kFull;
  if (a.network == "none") o.network = extract::infer::AgentNetwork::kNone;
  for (const auto& text : a.allow_endpoints) {
    auto e = sandbox::ParseEndpoint(text);
    if (!e.ok()) return Fail(kInferWho, "--allow-endpoint: " + e.error()), kExitUsage;
    o.endpoints.push_back(*e);
  }
  if (o.network == extract::infer::AgentNetwork::kModel && o.endpoints.empty()) {
    return Fail(kInferWho, "--network model: no model endpoint to forward to (name it with "
                           "--model-url for a preset, or --allow-endpoint HOST:PORT)"), kExitUsage;
  }
  o.exposed_copies = a.exposed_copies;
  o.hidden = Parents(*tasks);
  o.max_file_kb = a.max_file_kb;
  o.max_patch_mb = a.max_patch_mb;
  o.memory_mb = a.memory_mb;
  o.processes = a.processes;
  o.run_dir = *run;
  if (auto s = extract::infer::CheckAgentCommand(util::RealEnv(), o); !s.ok()) return Fail(kInferWho, s.error());
  r->tasks = std::move(*tasks);
  r->model = !a.model.empty() ? a.model : !a.agent.empty() ? a.agent : "agent";
  r->shard = *shard;
  r->jobs = a.jobs;
  r->rerun = a.rerun;
  return std::nullopt;
}

int Run(const InferArgs& a) {
  util::Env& env = util::RealEnv();
  extract::infer::InferRunOptions o;
  if (auto stop = Prepare(env, a, &o)) return *stop;
  BatchLines<extract::infer::InferResult> lines(
      kInferWho, a.quiet, [&](const auto& item) { return o.instances[item.index].first; }, DescribeResult);
  auto run = extract::infer::InferRun(env, sandbox::RealLauncher(), o, std::ref(lines));
  lines.Done();
  const auto& results = run.results;
  auto failed = std::find_if(results.begin(), results.end(),
                             [](const auto& r) { return r.could_not_start; });
  if (failed != results.end()) Fail(kInferWho, "stopped: " + failed->instance_id + ": " + failed->error);
  if (!run.error.empty()) return Fail(kInferWho, run.error);
  PrintTable(run.summary_json);
  bool any_error = std::any_of(results.begin(), results.end(), [](const auto& r) {
    return r.status == extract::infer::InferStatus::kError;
  });
  return any_error ? kExitFailure : kExitOk;
}

// What `infer --help` says after the options: the run, the sandbox, the patch, the exit status.
constexpr const char* kInferFooter =
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
    "--agent NAME runs a coding-agent CLI headless instead (codex, claude-code, gemini-cli, "
    "mini-swe-agent, trae-agent, auto-code-rover: installed by FBKIT_AGENTS=NAME ./setup.sh "
    "into .deps/agents (trae-agent and auto-code-rover need Python >= 3.12), else found on "
    "PATH, or "
    "--agent-path), its installation exposed read-only, the statement as its prompt, its "
    "home, configuration, sessions and JSON event stream (output/NAME.jsonl) kept in "
    "output/, --model and --model-url passed the way it reads them, and its usage, cost, "
    "model calls and trajectory read from its own logs. Give it its API key with --pass-env "
    "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY) and --network for a real endpoint.\n\n"
    "A command the sandbox cannot show (a script under /tmp, an install in a home) is an "
    "error before any instance runs; one that does not start inside it (exit 126/127 and "
    "the shell's message) stops the run at its first instance.\n\n"
    "Afterwards the patch is the workspace's whole change against its start, new files "
    "included; binary files, names or contents that are no UTF-8 (JSON cannot carry them), "
    "files over --max-file-kb and files past --max-patch-mb "
    "together are left out and listed. "
    "RUN_DIR/predictions.jsonl ({instance_id, model_name_or_path, model_patch}) holds every "
    "finished instance; `fb-extract eval TASKS --predictions RUN_DIR/predictions.jsonl` "
    "scores it (agent logs and token usage are found beside it). Re-runs skip finished "
    "instances.\n\n"
    "Exit status: 0 ok (whatever the agents did); 1 an instance could not be run; 2 bad usage.";

// The agent: a preset CLI or any command, its model and what runs before it.
void AddAgentOptions(CLI::App* cmd, const std::shared_ptr<InferArgs>& a) {
  std::string names;
  for (const auto& p : agents::AgentPresets()) names += (names.empty() ? "" : ", ") + p.name;
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
  cmd->add_option("--model", a->model, "The model: model_name_or_path of the predictions, and with --agent the model it "
                  "asks for (default: the agent's own; named by the agent)");
}

// The agent's sandbox: time, isolation, network, environment and limits.
void AddSandboxOptions(CLI::App* cmd, const std::shared_ptr<InferArgs>& a) {
  cmd->add_option("--timeout", a->timeout, "Seconds per agent run (default 3600; 0: none)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--sandbox", a->sandbox,
                  "bwrap (default); container: the agent in its task's image (--images; the image's "
                  "system in place of the host's, the same binds, hidden paths, limits and network; "
                  "podman, no bubblewrap needed); none: no isolation")
      ->check(CLI::IsMember({"bwrap", "container", "none"}));
  cmd->add_option("--images", a->images,
                  "--sandbox container: the images.json of `fb-extract images TASKS --engine podman` "
                  "(each task's image: L1 the pre-solved tree, L2 an empty project)");
  cmd->add_option("--engine", a->engine, "--sandbox container: the container engine (podman)");
  cmd->add_flag("--network{model}", a->network,
                "The agent's network: model (--network alone) reaches only its model's "
                "endpoints (--model-url or the preset's vendor, --allow-endpoint) through a "
                "proxy fbkit runs, no other host, no DNS; --network=full shares the host's "
                "network; --network=none none. Default: model when the task's spec allows the "
                "network, else none")
      ->check(CLI::IsMember({"model", "full", "none"}));
  cmd->add_option("--allow-endpoint", a->allow_endpoints,
                  "HOST:PORT the model proxy forwards to besides the preset's (repeatable)");
  cmd->add_option("--env", a->env, "NAME=VALUE for the agent (repeatable)");
  cmd->add_option("--pass-env", a->pass_env,
                  "Pass NAME from fbkit's environment to the agent, e.g. an API key (repeatable)");
  cmd->add_option("--read-only", a->read_only,
                  "A path the agent may read although hidden (its installation; repeatable)");
  AddExposedCopies(cmd, &a->exposed_copies, "the agent's sandbox (a --read-only path too)");
  cmd->add_option("--memory-mb", a->memory_mb,
                  "Address space per agent process (default: the task's limits.memory_mb; 0: "
                  "none; agents on node or the JVM reserve more than they use)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--processes", a->processes,
                  "Processes and threads of the agent's sandbox (default: the task's; 0: none)")
      ->check(CLI::NonNegativeNumber);
}

}  // namespace

void AddInferCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<InferArgs>();
  CLI::App* cmd = app.add_subcommand(
      "infer", "Run an agent on every task: workspace, problem statement, agent, patch");
  cmd->footer(kInferFooter);
  cmd->add_option("TASKS", a->tasks, "A task directory, or a directory of them")->required();
  AddAgentOptions(cmd, a);
  cmd->add_option("-o,--output", a->output, "Run directory")->required();
  cmd->add_option("-j,--jobs", a->jobs, "Instances at once (default 1)")->check(CLI::Range(1, 256));
  cmd->add_option("--shard", a->shard, "Only the K-th of N shares of the instances (K/N)");
  AddSandboxOptions(cmd, a);
  cmd->add_option("--max-file-kb", a->max_file_kb, "Larger files are left out of the patch (default 1024)");
  cmd->add_option("--max-patch-mb", a->max_patch_mb,
                  "Files past this many MiB of patch together (contents and headers) are left "
                  "out of it (default and most 64: eval refuses a larger patch)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--instance", a->only, "Only this instance id (repeatable)");
  cmd->add_flag("--trust-task-settings", a->trust_settings,
                "The task directories are yours: their network and limits may widen the "
                "agent's sandbox");
  cmd->add_flag("--rerun", a->rerun, "Run again instances an earlier run finished");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  cmd->callback([a, exit_code] { *exit_code = Run(*a); });
}

}  // namespace fbkit::cli

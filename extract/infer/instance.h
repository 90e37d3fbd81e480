// Running an agent on one fbkit task the way FeatureBench defines it: a fresh workspace (L1:
// a clone of presolved/, which lacks the F2P test file, in a clean git state; L2: an empty
// project), the problem statement beside it, the agent's command in the runner's sandbox
// (the task directories and the other instances hidden), and afterwards its changes as one
// patch against the starting state, with the token usage it reported.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agents/infer_result.h"
#include "sandbox/exposure.h"
#include "sandbox/model_proxy.h"
#include "sandbox/process.h"
#include "sandbox/sandbox.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::infer {

// An agent's run and usage as result.json records them: agents/infer_result.h owns the format.
using agents::InferResult;
using agents::InferResultJson;
using agents::InferStatus;
using agents::InferStatusFromName;
using agents::InferStatusName;
using agents::ParseInferResult;
using agents::Usage;

enum class AgentNetwork { kNone, kModel, kFull };
const char* AgentNetworkName(AgentNetwork network);  // "none", "model", "full"

struct InferOptions {
  std::string agent_cmd;  // sh -c; {instance_id}, {workspace}, {problem_statement} substituted
  double timeout = 3600;  // seconds for the agent (0: none)
  sandbox::SandboxKind sandbox = sandbox::SandboxKind::kBwrap;
  // kContainer: the image each instance's agent works in (fb-extract images' task image, by
  // instance id; its system in place of the host's) and the engine that runs it.
  std::map<std::string, std::string> images;
  std::string engine = "podman";
  // The agent's network: none, only the model endpoints through fbkit's proxy, or the
  // host's (full). Default: model when the task's spec allows the network, else none.
  std::optional<AgentNetwork> network;
  std::vector<sandbox::Endpoint> endpoints;  // what `model` forwards to
  // What a copy of the task's packages the agent's sandbox would show does (runner/
  // exposure.h); default: the task's spec.
  std::optional<sandbox::CopyPolicy> exposed_copies;
  int64_t memory_mb = -1;  // the agent's limits; -1: the task's spec (limits.*)
  int64_t processes = -1;
  // Environment variables for the agent (API keys, ...).
  std::vector<std::pair<std::string, std::string>> vars;
  std::vector<std::string> read_only;  // extra paths the agent may read (its installation)
  std::vector<std::string> hidden;     // directories it must not see (the task directories)
  // Files fbkit writes into the instance's output directory before the agent starts (its
  // configuration: path relative to output/, content).
  std::vector<std::pair<std::string, std::string>> output_files;
  int64_t max_file_kb = 1024;  // larger files are left out of the patch (and listed)
  // Files past this many MiB together (in git's order of paths) are left out too; at most
  // taskdir::kMaxAgentPatchBytes, which eval refuses past.
  int64_t max_patch_mb = 64;
  std::string run_dir;         // RUN_DIR: instances in RUN_DIR/<id>, private state in .fbkit/
  bool trust_settings = false;  // the task's network and limits may widen the agent's sandbox
};

// Before any instance runs: the programs and absolute paths `options.agent_cmd` names that
// exist on the host but that the agent's sandbox would not show (a script under /tmp, an
// install in a home directory). The error names the path and --read-only.
util::Status CheckAgentCommand(util::Env& env, const InferOptions& options);

// Never fails: problems are in the result. Writes RUN_DIR/<id>/{agent.log, result.json,
// patch.diff, input/problem_statement.md, workspace/, output/} (output/ is the agent's own
// directory, $FBKIT_OUTPUT_DIR, for trajectories).
InferResult RunAgent(util::Env& env, sandbox::Launcher& launcher, const std::string& task_dir,
                     const InferOptions& options);

// The usage an agent left in its output directory: $FBKIT_USAGE (output/usage.json), else a
// trajectory file under output/ in a format fbkit reads; nullopt when none.
std::optional<Usage> ReadUsage(util::Env& env, const std::string& instance_dir);

// "{instance_id}" etc. replaced in `cmd`.
std::string SubstituteCommand(const std::string& cmd, const std::string& instance_id,
                              const std::string& workspace, const std::string& statement);

}  // namespace fbkit::extract::infer

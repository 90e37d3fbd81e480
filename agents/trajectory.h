// Agents' trajectory files read without a model (for `fb-race summarize`): the files the
// agent opened and edited (repository-relative), its final patch, token usage, API calls,
// cost and exit status, and its turns (thought, action, observation) for a summarizer.
//
// Formats (read from the writers' code and real example files; fixtures/race_trajectories):
//   mini-swe-agent  one JSON object {info, messages, trajectory_format?, instance_id?}
//                   (*.traj.json); actions: messages[].extra.actions[].command (v2), else the
//                   ```bash block of assistant messages (v1, info.config.agent.action_regex);
//                   every command runs in a fresh shell in info.config.environment.cwd.
//   swe-agent       one JSON object {trajectory, history, info, replay_config?} (*.traj);
//                   actions: trajectory[].action (open/create/edit/insert of the windowed
//                   tools, str_replace_editor SUB PATH, else a command of a persistent shell);
//                   root: the first step's state.working_dir.
//   claude-code     claude -p --output-format stream-json --verbose (system/init with cwd,
//                   assistant records with one content block each, user records with the
//                   tool results, a final result record with usage and total_cost_usd);
//                   Bash commands run in a persistent shell; Read opens, Edit/Write/
//                   MultiEdit/NotebookEdit edit their file_path. Tokens: the result's input +
//                   cache creation + cache reads, and output; API calls: distinct messages.
//   codex           codex exec --json events (see agent_cli_logs.cc).
//   gemini-cli      gemini -p --output-format stream-json events (see agent_cli_logs.cc).
//   trae-agent      Trae Agent's --trajectory-file (bytedance/trae-agent e839e559,
//                   trajectory_recorder.py): {task, provider, model, llm_interactions:
//                   [{input_messages, response: {content, usage, tool_calls}}], agent_steps:
//                   [{llm_response, tool_calls: [{call_id, name, arguments}], tool_results:
//                   [{call_id, result, error}]}], success, final_result}; bash runs in one
//                   persistent shell, str_replace_based_edit_tool views (opens) or changes
//                   `path`; the root is the "[Project root path]" of its first message.
//                   Tokens: the responses' usage (Anthropic's cached input added); API
//                   calls: the interactions. output/trae-agent.json in an infer run, else
//                   Trae's own <id>.json.
//   auto-code-rover AutoCodeRover's task directory (app/main.py local-issue, nus-apr/
//                   auto-code-rover 3536ac29), found by its meta.json {task_info:
//                   {instance_id, problem_statement}, setup_info: {repo_path}}: the search
//                   calls of output_N/search/tool_call_layers.json (files named by *_in_file
//                   and get_code_around_line opened, with the bug locations' files), the
//                   files of output_N/extracted_patch_*.diff edited, selected_patch.json's
//                   patch, cost.json's tokens and cost (no call count).
//                   The streams carry no instance id: RUN_DIR/<id>/output/<stream> names it.
//   openhands       output.jsonl, one {instance_id, instruction, history, test_result,
//                   metrics, error} per line; read/edit/write actions with args.path, run with
//                   args.command (persistent shell; the observation's working_dir), root the
//                   <uploaded_files> path of the instruction.
// Shell commands: cat/head/tail/nl/less/more FILE and sed -n ... FILE open; sed -i, tee, and
// > / >> redirections edit (heredoc bodies skipped); paths outside the root are dropped.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/env.h"
#include "util/expected.h"

namespace fbkit::agents {

// The trajectory formats fbkit reads: the harnesses' trajectory files, then the agents' own
// logs (AgentCliReaders).
enum class TrajectoryFormat {
  kMiniSweAgent,   // "mini-swe-agent"
  kSweAgent,       // "swe-agent"
  kOpenHands,      // "openhands"
  kClaudeCode,     // "claude-code"
  kCodex,          // "codex"
  kGeminiCli,      // "gemini-cli"
  kTraeAgent,      // "trae-agent"
  kAutoCodeRover,  // "auto-code-rover"
};

// Every format, in the order above.
const std::vector<TrajectoryFormat>& TrajectoryFormats();
// A format's name, as files, `--format` and summaries spell it.
const char* TrajectoryFormatName(TrajectoryFormat format);
// The format of a name; none for a name no format has.
std::optional<TrajectoryFormat> TrajectoryFormatFromName(std::string_view name);

struct Turn {
  std::string thought, action, observation;  // observation trimmed
};

struct Trajectory {
  std::string instance_id;
  TrajectoryFormat format = TrajectoryFormat::kMiniSweAgent;
  std::string source;  // the file it came from
  std::string root;    // the repository's path in the agent's environment
  std::vector<std::string> opened, edited, patch_files;  // sorted, repository-relative
  std::string patch;
  std::string problem_statement;  // the task text the agent was given, when the file has it
  std::optional<int64_t> prompt_tokens, completion_tokens, api_calls;
  std::optional<double> cost;
  std::string exit_status;
  std::vector<Turn> turns;
};

// An `fb-extract infer --agent` stream `text`, read from `file` (RUN_DIR/<id>/output/
// <format>.jsonl; IsAgentCliFormat(format)), and for codex the model calls its session files
// beside it record (output/codex/sessions/…/rollout-*.jsonl, one token_usage_record per
// call; read as untrusted files). `display` names the file in the result and in errors. The
// instance's patch and statement are AddInferRunContext's.
util::Expected<Trajectory> ReadAgentStream(util::Env& env, const std::string& text,
                                           const std::string& file, const std::string& display,
                                           TrajectoryFormat format);

// RUN_DIR/<id> when `file` sits directly in an `fb-extract infer` instance's output/ (beside
// which a regular result.json lies); nullopt otherwise.
std::optional<std::string> InferInstanceOf(util::Env& env, const std::string& file);

// When `file` sits in an infer instance's output/ (InferInstanceOf): the instance's
// patch.diff as the patch (over whatever the agent's own files named) and its problem
// statement where `t` has none (read as untrusted files: no links, no FIFOs, bounded);
// outside an infer run, for a Trae Agent <id>.json, the <id>.patch its harness writes.
void AddInferRunContext(util::Env& env, const std::string& file, Trajectory* t);

// `patch` as the trajectory's final patch (patch_files from it).
void SetPatch(Trajectory* t, std::string patch);

// What one shell command opens and edits (absolute, normalised paths). `cwd` is where it
// starts; `cd` inside it moves *cwd.
struct ShellEffects {
  std::vector<std::string> opened, edited;
};
ShellEffects AnalyzeShell(const std::string& command, std::string* cwd);

// The formats of the agents' own logs (the agent CLIs' event streams of `fb-extract infer
// --agent`, Trae Agent's and AutoCodeRover's files), each with its reader.
using TrajectoryReader = Trajectory (*)(const std::string& text, const std::string& path);
const std::vector<std::pair<TrajectoryFormat, TrajectoryReader>>& AgentCliReaders();

// Whether `format` is one of AgentCliReaders'.
bool IsAgentCliFormat(TrajectoryFormat format);

// The format of a file from its text (its keys, or an agent CLI's first record); none when
// it is no trajectory fbkit reads.
std::optional<TrajectoryFormat> DetectFormat(const std::string& text, const std::string& path);

// The trajectories of one file in `format` (one, or one per line for openhands); errors
// name `path` (and the line for JSON Lines).
util::Expected<std::vector<Trajectory>> ReadTrajectories(const std::string& text,
                                                         const std::string& path,
                                                         TrajectoryFormat format);

}  // namespace fbkit::agents

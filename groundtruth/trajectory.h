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
//   openhands       output.jsonl, one {instance_id, instruction, history, test_result,
//                   metrics, error} per line; read/edit/write actions with args.path, run with
//                   args.command (persistent shell; the observation's working_dir), root the
//                   <uploaded_files> path of the instruction.
// Shell commands: cat/head/tail/nl/less/more FILE and sed -n ... FILE open; sed -i, tee, and
// > / >> redirections edit (heredoc bodies skipped); paths outside the root are dropped.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/expected.h"

namespace fbkit::groundtruth {

struct Turn {
  std::string thought, action, observation;  // observation trimmed
};

struct Trajectory {
  std::string instance_id;
  std::string format;  // mini-swe-agent, swe-agent, openhands
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

// What one shell command opens and edits (absolute, normalised paths). `cwd` is where it
// starts; `cd` inside it moves *cwd.
struct ShellEffects {
  std::vector<std::string> opened, edited;
};
ShellEffects AnalyzeShell(const std::string& command, std::string* cwd);

// "mini-swe-agent", "swe-agent" or "openhands" from a file's text and name; "" when none.
std::string DetectFormat(const std::string& text, const std::string& path);

// The trajectories of one file in `format` (one, or one per line for openhands); errors
// name `path` (and the line for JSON Lines).
util::Expected<std::vector<Trajectory>> ReadTrajectories(const std::string& text,
                                                         const std::string& path,
                                                         const std::string& format);

}  // namespace fbkit::groundtruth

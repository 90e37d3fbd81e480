// An agent's run directory into fbkit.race-agent/1 (`fb-race summarize`): every trajectory
// file found under RUNS is read without a model (trajectory.h); with --llm-cmd the
// summarizer is asked, per instance,
//   {"schema": "fbkit.llm-summarize/1", "task": "summarize_trajectory", "instance_id",
//    "agent", "format", "problem_statement", "turns": [{thought, action, observation}],
//    "opened", "edited", "patch", "step_types", "changes"}
// and answers {"goal", "concepts": [..], "files": [..], "tasks": [{entity, file?, change,
// purpose?}], "steps": [{type, related_tasks, description}]}; an answer that is not that
// (unknown step type or change, a step naming no task of the answer) is rejected with a
// warning and the instance keeps only what the trajectory itself says.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "groundtruth/records.h"
#include "agents/trajectory.h"
#include "model/model.h"
#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::groundtruth {

// The trajectory files under `runs` (itself when a file): *.traj.json, *.traj,
// output.jsonl, the agent CLIs' streams of `fb-extract infer --agent` (claude-code.jsonl,
// codex.jsonl, gemini-cli.jsonl, trae-agent.json), Trae Agent's own <id>/<id>.json and
// the meta.json of AutoCodeRover's task directories, sorted; symlinks are not followed.
util::Expected<std::vector<std::string>> TrajectoryFiles(util::Env& env, const std::string& runs);

struct Summary {
  agents::Trajectory trajectory;
  AgentInstance agent;  // patch, and (with a summarizer) goal, concepts, files, tasks, steps
};

// The request for `t` (one JSON line).
std::string SummarizeRequest(const agents::Trajectory& t, const std::string& agent);

// Fills `s->agent` from a summarizer's answer; an error says what is wrong with it.
util::Status ApplySummary(const std::string& answer, Summary* s);

// Asks the model for each summary (warnings "ID: why" for rejected answers; a model that
// falls back leaves the trajectory's own reading).
std::vector<std::string> SummarizeAll(model::Model& model, const std::string& agent,
                                      std::vector<Summary>* all);

// Sets `applied` and `resolved` from a SWE-bench evaluation: its run report
// (<model>.<run_id>.json: resolved_ids, completed_ids, empty_patch_ids, error_ids, ...;
// resolved = in resolved_ids; applied = true when completed (its tests ran), false for an
// empty patch, unknown otherwise) or an instance's report.json ({id: {resolved,
// patch_successfully_applied, ...}}). Returns the number of instances it set; an error names
// `path` when the text is neither.
util::Expected<int> ApplyEvaluation(const std::string& text, const std::string& path,
                                    std::vector<Summary>* all);

// fbkit.race-agent/1 with a "trajectory" object per instance (format, source, root, opened,
// edited, patch_files, tokens, api_calls, cost, exit_status); keys sorted, instances by id.
std::string AgentRunJson(const std::string& agent, const std::vector<Summary>& all,
                         const std::string& model = "");

}  // namespace fbkit::groundtruth

// The documents fb-race reads and writes: ground truth (fbkit.race-gt/1) and an agent's
// run (fbkit.race-agent/1), as plain structs with readers that report the offending file
// (and line for JSON Lines) and a deterministic writer for ground truth.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/expected.h"
#include "util/json_writer.h"

namespace fbkit::groundtruth {

// RACE's step taxonomy, in the paper's order.
const std::vector<std::string>& StepTypes();

struct GtTask {
  std::string entity;  // "path::qualname"
  std::string file;
  std::string change;                 // new, modified, deleted or renamed
  std::string necessary = "unknown";  // "true", "false" or "unknown" (ablation not run)
  std::string kind;                   // function, method or class ("" when not given)
  std::string old_entity;             // renamed: the id before
  std::string purpose;                // optional text for semantic matching
};

struct Step {
  std::string id;
  std::string type;                        // one of StepTypes()
  std::vector<std::string> related_tasks;  // entity ids
  std::string description;
};

struct GroundTruth {
  std::string instance_id;
  std::vector<std::string> necessary;  // files; each list sorted
  std::vector<std::string> other;
  std::vector<std::string> test;
  std::vector<std::string> unknown;  // changed source files whose ablation could not run
  std::vector<GtTask> tasks;
  std::vector<Step> steps;
  std::vector<std::string> fail_to_pass;
  std::vector<std::string> pass_to_pass;
  std::optional<std::string> goal;    // Goal Expectation text
  std::vector<std::string> concepts;  // Concept Explanations
  std::string model;  // {"name", "prompts"} of the built-in model that wrote texts, or ""
};

struct AgentTask {
  std::string entity;
  std::string file;
  std::string change;
  std::string purpose;
};

struct AgentInstance {
  std::string instance_id;
  std::string patch;
  std::optional<bool> applied;
  std::optional<bool> resolved;
  std::vector<std::string> files;          // declared
  std::vector<AgentTask> tasks;            // declared (plus back-inferred ones)
  std::vector<Step> steps;                 // declared
  std::optional<std::string> goal;         // the agent's own Goal Expectation (a summarizer's)
  std::vector<std::string> concepts;       // the agent's own Concept Explanations
  std::optional<double> goal_score;        // 0-10, from a judge
  std::optional<double> concept_recall;    // 0-1
  std::optional<double> concept_accuracy;  // 0-1
};

struct AgentRun {
  std::string agent;
  std::vector<AgentInstance> instances;
};

// A feature PR (SWE-bench style): the repository checkout it applies to, the base commit,
// the gold patch and the test patch; `pythonpath` (root-relative) is fbkit's addition.
struct Instance {
  std::string instance_id;
  std::string repo;
  std::string base_commit;
  std::string patch;
  std::string test_patch;
  std::string problem_statement;
  std::string hints;
  std::vector<std::string> pythonpath;
};

// Instances from `text` (JSON object, array or JSON Lines); `path` names the file in
// errors, and relative repo paths are taken relative to `path`'s directory.
util::Expected<std::vector<Instance>> ParseInstances(const std::string& text,
                                                     const std::string& path);

// Ground truths from `text` (one object, an array, {"instances": [...]} or JSON Lines);
// `path` names the file in errors. Duplicate instance ids are an error.
util::Expected<std::vector<GroundTruth>> ParseGroundTruths(const std::string& text,
                                                           const std::string& path);
// An agent run: {"agent", "instances": [...]}, an array or JSON Lines of instances; the
// agent's name defaults to `path`'s file name without extension.
util::Expected<AgentRun> ParseAgentRun(const std::string& text, const std::string& path);

// fbkit.race-gt/1 of one instance, keys and file lists sorted, ending in a newline.
std::string GroundTruthJson(const GroundTruth& gt);
// The tasks as a JSON array (each `necessary` as true, false or "unknown"; empty kind,
// old_entity and purpose left out), for the documents that list them.
void WriteTasks(util::JsonWriter& w, const std::vector<GtTask>& tasks);

}  // namespace fbkit::groundtruth

// Ground truth of one instance (fbkit.race-gt/1): validation (FAIL_TO_PASS/PASS_TO_PASS),
// ablation (files and tasks with necessity), then steps and issue understanding taken from
// outside -- a file or the --llm-cmd command -- and validated, never invented.
//
// --llm-cmd requests (schema fbkit.llm-gt/1):
//   {"task": "steps", "instance_id", "problem_statement", "step_types": [...],
//    "tasks": [{"entity", "file", "change"}]}  ->  {"steps": [{"type", "related_tasks",
//    "description"}]}
//   {"task": "issue", "instance_id", "problem_statement", "hints"}  ->  {"goal": TEXT,
//    "concepts": [TEXT]}  (no code-level details are sent)
//   {"task": "purpose", "instance_id", "problem_statement", "entity", "file", "kind", "change",
//    "code"}  ->  {"purpose": TEXT}  per task (the entity's own code in the gold version, the
//    base version when deleted); the purpose states observable behaviour, and the score's
//    matcher compares new entities by it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "groundtruth/ablation.h"
#include "groundtruth/execution.h"
#include "groundtruth/records.h"
#include "parser/python_parser.h"
#include "runner/services.h"
#include "model/model.h"
#include "sandbox/process.h"
#include "runner/test_run.h"

namespace fbkit::groundtruth {

struct IssueTexts {
  std::optional<std::string> goal;
  std::vector<std::string> concepts;
};

struct GtOptions {
  runner::RepoSpec spec;
  int repeat = 1;
  bool entities = true;
  bool whole_files = false;                        // ablation reruns whole F2P files
  model::Model* model = nullptr;  // steps, issue texts and purposes when set (not owned)
  std::map<std::string, std::vector<Step>> steps;  // --steps FILE, by instance
  std::map<std::string, IssueTexts> issues;        // --issue FILE, by instance
};

// Steps by instance from {instance_id, steps: [...]} records (JSON or JSON Lines).
util::Expected<std::map<std::string, std::vector<Step>>> ParseStepsFile(const std::string& text,
                                                                        const std::string& path);
// Issue texts by instance from {instance_id, goal?, concepts?} records.
util::Expected<std::map<std::string, IssueTexts>> ParseIssueFile(const std::string& text,
                                                                 const std::string& path);

// Every step has a type of the taxonomy and names only tasks of `tasks`; ids are filled in
// (S1, S2, ...) where missing.
util::Status CheckSteps(const std::vector<GtTask>& tasks, std::vector<Step>* steps);

struct GtResult {
  Validation validation;
  Localization localization;
  GroundTruth gt;
  bool ok = false;                    // validated and localised
  std::vector<std::string> problems;  // steps/issue texts rejected (the gt is still written)
};

GtResult BuildGroundTruth(const runner::Services& services,
                          parser::PythonParser& parser,
                          const Instance& instance, const GtOptions& options,
                          const std::string& work_dir);

}  // namespace fbkit::groundtruth

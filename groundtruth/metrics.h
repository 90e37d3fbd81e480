// RACE-bench's offline metrics of one agent against the ground truth, per instance and per
// group (All, Success, Failure, Failure excluding apply-fail).
//
// Rules (docs/fb-race.md):
// - Files: predicted P = declared files ∪ files the agent's patch touches. Recall@Files =
//   |P ∩ necessary| / |necessary|; OverPred@Files = |P \ (necessary ∪ other ∪ test ∪
//   unknown)| / |P| (a predicted file is irrelevant when the gold patch does not touch it).
// - Tasks: truth = the ground truth's tasks (cosmetic changes are no tasks); predicted =
//   declared ∪ back-inferred tasks, one per entity. Deterministic match on the entity id
//   (a renamed task also on its old id); then unmatched new tasks go to the matcher (texts:
//   purpose, else the entity's name). Recall = matched truth / truth; OverPred = unmatched
//   predicted / predicted.
// - Steps: candidates share the step type and overlap in related tasks (predicted task ids
//   mapped through the task matching); the matcher chooses among them.
// - Undefined ratios (empty truth or prediction) are left out of the means, not counted
//   as 0 or 1. Judgements (goal 0-10, concept recall / accuracy 0-1) come only from the
//   agent file. An instance missing from the agent file counts as no patch, not applied,
//   not resolved; unknown applied/resolved flags keep an instance out of those rates and
//   of the Success / Failure groups.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "groundtruth/matcher.h"
#include "groundtruth/records.h"
#include "util/patch.h"

namespace fbkit::groundtruth {

struct LevelScore {
  size_t truth = 0;
  size_t predicted = 0;
  size_t matched = 0;  // pairs
  std::optional<double> recall;
  std::optional<double> overpred;
};

struct InstanceScore {
  std::string instance_id;
  bool in_agent_file = false;
  std::optional<bool> applied;
  std::optional<bool> resolved;
  LevelScore files, tasks, steps;
  std::optional<double> goal, concept_recall, concept_accuracy;
  std::string error;  // the matcher failed (its levels are then left undefined)
};

struct Mean {
  double sum = 0;
  size_t n = 0;
  void Add(const std::optional<double>& v) {
    if (v) sum += *v, ++n;
  }
  std::optional<double> value() const {
    return n ? std::optional<double>(sum / static_cast<double>(n)) : std::nullopt;
  }
};

// Metric names, in table order.
const std::vector<std::string>& MetricNames();

struct GroupScore {
  std::string name;  // All, Success, Failure, Failure excluding apply-fail
  size_t instances = 0;
  std::map<std::string, Mean> metrics;  // by MetricNames()
};

struct AgentScore {
  std::string agent;
  std::vector<InstanceScore> instances;  // in ground-truth order
  std::vector<GroupScore> groups;
  std::vector<std::string> warnings;  // agent instances without ground truth, matcher errors
};

// Whether a patch section changes a file's content: a binary or deleted file, or hunks whose
// removed and added lines differ (a rename to itself, an empty new file, or lines removed
// and added back change nothing).
bool ChangesContent(const util::FilePatch& f);

// The files an agent predicts: its declared files and those its patch changes
// (ChangesContent), the latter only when the patch is not known to fail to apply.
std::vector<std::string> PredictedFiles(const AgentInstance& agent);

InstanceScore ScoreInstance(const GroundTruth& gt, const AgentInstance* agent,
                            const Matcher& matcher);
AgentScore ScoreAgent(const std::vector<GroundTruth>& gts, const AgentRun& run,
                      const Matcher& matcher);

// A value as fbkit.race-scores/1 writes it (6 decimals, trailing zeros dropped).
std::string MetricNumber(double v);
// A group's metric as the table shows it: percent with one decimal (score_goal: 0-10 with
// two), "-" when missing.
std::string MetricCell(const GroupScore& g, const std::string& metric);
// The table's column headers, in MetricNames() order.
const std::vector<std::string>& MetricHeaders();

// fbkit.race-scores/1 (keys sorted; ratios rounded to 6 decimals).
// `model`: the usage of the model that matched and judged (model::UsageJson), or "".
std::string ScoresJson(const std::vector<AgentScore>& agents, bool per_instance,
                       const std::string& model = "");
// One row per agent and group; percentages with one decimal, "-" when missing.
std::string ScoresTable(const std::vector<AgentScore>& agents);
std::string ScoresCsv(const std::vector<AgentScore>& agents);

}  // namespace fbkit::groundtruth

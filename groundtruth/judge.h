// RACE's issue-understanding judgements (Score@Goal 0-10, Recall@Concept and
// Accuracy@Concept 0-1) obtained through --llm-cmd when the agent file has none: the request
//   {"schema": "fbkit.llm-judge/1", "task": "judge_understanding", "instance_id",
//    "truth": {"goal", "concepts"}, "agent": {"goal", "concepts"}}
// and the answer {"goal_score"?, "concept_recall"?, "concept_accuracy"?} (a missing or null
// value stays missing). Nothing is asked when either side has no texts: never guessed.
#pragma once

#include <string>
#include <vector>

#include "groundtruth/records.h"
#include "model/model.h"
#include "util/env.h"

namespace fbkit::groundtruth {

// Fills the missing judgements of `run`'s instances; returns warnings ("ID: why") for
// requests that failed or answers out of range (those judgements stay missing).
std::vector<std::string> JudgeRun(model::Model& model, const std::vector<GroundTruth>& gts,
                                  AgentRun* run);

}  // namespace fbkit::groundtruth

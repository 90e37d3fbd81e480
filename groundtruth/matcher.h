// Semantic matching of ground-truth items (tasks, steps) with an agent's, as a pluggable
// function: the default is lexical (Dice similarity of word sets) with a threshold; the
// --llm-cmd matcher asks an external command (one JSON request on stdin, one JSON answer
// on stdout):
//   request: {"schema": "fbkit.llm-match/1", "task": "match_tasks"|"match_steps",
//             "instance_id", "truth": [{"id", "text"}], "predicted": [{"id", "text"}],
//             "candidates": [[truth_id, predicted_id], ...]}
//   answer:  {"matches": [[truth_id, predicted_id], ...]}  (a subset of the candidates,
//             each id at most once; anything else is an error)
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::groundtruth {

struct MatchItem {
  std::string id;
  std::string text;
};

struct MatchRequest {
  std::string task;  // "match_tasks" or "match_steps"
  std::string instance_id;
  std::vector<MatchItem> truth;
  std::vector<MatchItem> predicted;
  std::vector<std::pair<size_t, size_t>> candidates;  // (truth index, predicted index)
};

// The chosen pairs (truth index, predicted index), one-to-one, among the candidates.
using Matcher =
    std::function<util::Expected<std::vector<std::pair<size_t, size_t>>>(const MatchRequest&)>;

// Lower-case words of a text, identifiers split at '_', '.', ':' and camelCase, without
// stop words and one-letter words; sorted and unique.
std::vector<std::string> Words(const std::string& text);
// Dice coefficient 2|A∩B| / (|A|+|B|) of two sorted word sets (0 when both are empty).
double Similarity(const std::vector<std::string>& a, const std::vector<std::string>& b);

// Candidates whose similarity reaches `threshold`, taken greedily by decreasing similarity
// (ties: lower truth index, then lower predicted index).
Matcher LexicalMatcher(double threshold);

// The model's matcher (--llm-cmd or --llm); `fallback` matches when the model's answers
// stayed invalid and it falls back.
Matcher LlmMatcher(model::Model& model, Matcher fallback);

}  // namespace fbkit::groundtruth

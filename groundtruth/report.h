// RACE-bench's pictures of a score: per agent and group, the waterfall of Recall@Files,
// Recall@Tasks and Recall@Steps with the OverPrediction bars beside them (SVG), and a
// self-contained HTML page with that picture and the paper's Table 3 layout (localisation,
// implementation, reasoning, issue understanding, outcome). The page carries the numbers of
// `--format json` (fbkit.race-scores/1) and a small script that checks every table cell
// against them and marks the page `data-check="ok"` (or lists the mismatches).
#pragma once

#include <string>
#include <vector>

#include "groundtruth/metrics.h"

namespace fbkit::groundtruth {

// A standalone SVG document (deterministic: no dates, no random ids).
std::string ScoresSvg(const std::vector<AgentScore>& agents);

// A standalone HTML5 page (no external resources).
std::string ScoresHtml(const std::vector<AgentScore>& agents);

}  // namespace fbkit::groundtruth

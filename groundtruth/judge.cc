#include "groundtruth/judge.h"

#include <map>
#include <nlohmann/json.hpp>

#include "model/model.h"

namespace fbkit::groundtruth {
namespace {

using nlohmann::json;

json Texts(const std::optional<std::string>& goal, const std::vector<std::string>& concepts) {
  return json{{"goal", goal ? json(*goal) : json(nullptr)}, {"concepts", concepts}};
}

// Reads one value of the answer, checking its range; null or absent stays missing.
util::Status Read(const json& answer, const char* key, double max, std::optional<double>* out) {
  if (!answer.contains(key) || answer[key].is_null()) return util::Status::Ok();
  if (!answer[key].is_number()) return util::Error{std::string(key) + " is not a number"};
  double v = answer[key].get<double>();
  if (v < 0 || v > max) return util::Error{std::string(key) + " out of range"};
  *out = v;
  return util::Status::Ok();
}

util::Status Judge(model::Model& model, const GroundTruth& gt, AgentInstance* a) {
  json request = {{"schema", "fbkit.llm-judge/1"},
                  {"task", "judge_understanding"},
                  {"instance_id", gt.instance_id},
                  {"truth", Texts(gt.goal, gt.concepts)},
                  {"agent", Texts(a->goal, a->concepts)}};
  std::function<util::Expected<AgentInstance>(const std::string&)> read =
      [a](const std::string& answer) -> util::Expected<AgentInstance> {
    json j = json::parse(answer, nullptr, false);
    if (!j.is_object()) return util::Error{"the answer is not a JSON object"};
    AgentInstance judged = *a;
    for (auto [key, max, field] : {std::tuple{"goal_score", 10.0, &judged.goal_score},
                                   std::tuple{"concept_recall", 1.0, &judged.concept_recall},
                                   std::tuple{"concept_accuracy", 1.0, &judged.concept_accuracy}}) {
      if (auto s = Read(j, key, max, field); !s.ok()) return s.failure();
    }
    return judged;
  };
  auto judged = model::AskFor(model, request.dump(), read);
  if (!judged.ok()) return judged.failure();
  if (*judged) *a = std::move(**judged);  // else no judgement, as without a model
  return util::Status::Ok();
}

}  // namespace

std::vector<std::string> JudgeRun(model::Model& model, const std::vector<GroundTruth>& gts,
                                  AgentRun* run) {
  std::map<std::string, const GroundTruth*> by_id;
  for (const auto& gt : gts) by_id[gt.instance_id] = &gt;
  std::vector<std::string> warnings;
  for (auto& a : run->instances) {
    auto it = by_id.find(a.instance_id);
    if (it == by_id.end() || a.goal_score || a.concept_recall || a.concept_accuracy) continue;
    const GroundTruth& gt = *it->second;
    bool truth = gt.goal || !gt.concepts.empty();
    bool agent = a.goal || !a.concepts.empty();
    if (!truth || !agent) continue;
    if (auto s = Judge(model, gt, &a); !s.ok()) {
      warnings.push_back(a.instance_id + ": judgements: " + s.error());
    }
  }
  return warnings;
}

}  // namespace fbkit::groundtruth

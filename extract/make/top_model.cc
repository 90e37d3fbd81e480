#include "extract/make/top_model.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "extract/make/select.h"
#include "extract/make/top_model_files.h"
#include "util/embedded.h"

namespace fbkit::extract::make {

util::Expected<TopModel> ParseTopModel(const std::string& text, const std::string& source) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return util::Error{source + ": not a JSON object"};
  if (j.value("schema", "") != "fbkit.top-model/1") {
    return util::Error{source + ": schema is not fbkit.top-model/1"};
  }
  TopModel m;
  try {
    m.version = j.value("trained_on", "");
    m.bias = j.at("bias").get<double>();
    m.threshold = j.at("threshold").get<double>();
    m.max_items = j.value("max_items", 0);
    const auto& names = TopFactNames();
    for (const auto& f : j.at("facts")) {
      std::string name = f.at("name").get<std::string>();
      auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) return util::Error{source + ": unknown fact " + name};
      double scale = f.at("scale").get<double>();
      if (!(scale > 0)) return util::Error{source + ": fact " + name + " has scale <= 0"};
      m.facts.push_back(name);
      m.index.push_back(static_cast<size_t>(it - names.begin()));
      m.mean.push_back(f.at("mean").get<double>());
      m.scale.push_back(scale);
      m.weights.push_back(f.at("weight").get<double>());
    }
  } catch (const nlohmann::json::exception& e) {
    return util::Error{source + ": " + e.what()};
  }
  if (m.max_items < 0) return util::Error{source + ": max_items < 0"};
  return m;
}

const TopModel& DefaultTopModel() {
  static const TopModel model = [] {
    auto m = ParseTopModel(std::string(util::FindEmbedded(TopModelFiles(), "top_model.json")),
                           "extract/make/top_model.json");
    return m.ok() ? *m : TopModel{};  // the embedded file is checked by its unit test
  }();
  return model;
}

double TopScore(const TopModel& model, const std::vector<double>& facts,
                std::vector<double>* contributions) {
  double z = model.bias;
  if (contributions) contributions->assign(model.facts.size(), 0);
  for (size_t i = 0; i < model.facts.size(); ++i) {
    double x = model.index[i] < facts.size() ? facts[model.index[i]] : 0;
    double c = model.weights[i] * (x - model.mean[i]) / model.scale[i];
    z += c;
    if (contributions) (*contributions)[i] = c;
  }
  return 1 / (1 + std::exp(-z));
}

}  // namespace fbkit::extract::make

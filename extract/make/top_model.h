// The learned top-object choice's model (--top-chooser learned): a logistic model over the
// facts fbkit knows about each candidate (TopFactNames in select.h), fitted on FeatureBench's
// published choices by bench/top_objects_learn.py and shipped as extract/make/top_model.json
// (format fbkit.top-model/1, owned here in both directions).
#pragma once

#include <string>
#include <vector>

#include "util/expected.h"

namespace fbkit::extract::make {

struct TopModel {
  std::string version;              // what it was fitted on (the file's "trained_on")
  std::vector<std::string> facts;   // the facts it weighs, by name
  std::vector<size_t> index;        // each one's position in TopFactNames()
  std::vector<double> mean, scale;  // each fact is standardised: (x - mean) / scale
  std::vector<double> weights;      // one per fact
  double bias = 0;
  double threshold = 0.5;  // a probability at or above it chooses
  int max_items = 0;       // most items chosen per test file, best first (0: no cap)
};

// Parses fbkit.top-model/1 text; `source` names it in errors. Every fact must be one of
// TopFactNames() (a model for other facts is refused, not half applied).
util::Expected<TopModel> ParseTopModel(const std::string& text, const std::string& source);

// The model fitted on every repository of bench/data (embedded at build time).
const TopModel& DefaultTopModel();

// The probability the model gives `facts` (TopFactNames' order), and each of the model's
// facts' share of the log-odds (weight times standardised value), in `model.facts`' order.
double TopScore(const TopModel& model, const std::vector<double>& facts,
                std::vector<double>* contributions = nullptr);

}  // namespace fbkit::extract::make

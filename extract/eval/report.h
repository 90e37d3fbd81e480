// What an evaluation run writes: one report.json per instance (fbkit.eval-report/1, no
// timings, so two runs of the same inputs give identical files), a run summary
// (fbkit.eval-summary/1) per model and repository, a text table like FeatureBench's
// per-repository tables, and a one-page HTML report.
#pragma once

#include <string>
#include <vector>

#include "extract/eval/instance.h"
#include "util/expected.h"

namespace fbkit::extract::eval {

std::string ReportJson(const EvalReport& r);
util::Expected<EvalReport> ParseReport(const std::string& json);

// Counts over a set of reports (one model's, or one repository's).
struct EvalTotals {
  size_t instances = 0;
  size_t resolved = 0;
  size_t applied = 0;
  size_t empty = 0;
  size_t errored = 0;
  size_t timed_out = 0;
  size_t suspicious = 0;
  double pass_rate_sum = 0;
  size_t with_usage = 0;  // instances whose agent reported its token usage
  double input_tokens_sum = 0;
  double output_tokens_sum = 0;
  size_t with_cost = 0;  // instances whose agent reported its cost
  double cost_sum = 0;
  size_t with_api_calls = 0;  // instances whose number of model calls is known
  double api_calls_sum = 0;
  double resolved_rate() const;
  double passed_rate() const;  // mean F2P pass rate, empty and unapplied patches count 0
  double apply_rate() const;   // applied / instances (an empty patch does not apply)
};
EvalTotals Totals(const std::vector<const EvalReport*>& reports);

// `reports` sorted by instance id; `unpredicted` = tasks in TASKS with no prediction.
std::string SummaryJson(const std::vector<EvalReport>& reports, size_t unpredicted);
std::string SummaryTable(const std::vector<EvalReport>& reports);
std::string SummaryHtml(const std::vector<EvalReport>& reports, const std::string& title);

}  // namespace fbkit::extract::eval

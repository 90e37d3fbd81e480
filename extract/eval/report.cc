#include "extract/eval/report.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

namespace fbkit::extract::eval {

namespace {

using nlohmann::json;

double Rate(double part, size_t whole) { return whole ? part / static_cast<double>(whole) : 0; }

// Rounded to 4 decimals so that the JSON text does not depend on summation order.
double Round4(double x) { return std::round(x * 10000) / 10000; }

std::string Percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", 100 * x);
  return buf;
}

json TotalsJson(const EvalTotals& t) {
  return json{{"instances", t.instances},
              {"resolved", t.resolved},
              {"resolved_rate", Round4(t.resolved_rate())},
              {"passed_rate", Round4(t.passed_rate())},
              {"applied", t.applied},
              {"patch_apply_rate", Round4(t.apply_rate())},
              {"empty", t.empty},
              {"errored", t.errored},
              {"timed_out", t.timed_out},
              {"suspicious", t.suspicious},
              {"instances_with_usage", t.with_usage},
              {"mean_input_tokens", t.with_usage ? json(Round4(t.input_tokens_sum / t.with_usage)) : json(nullptr)},
              {"mean_output_tokens", t.with_usage ? json(Round4(t.output_tokens_sum / t.with_usage)) : json(nullptr)},
              {"instances_with_cost", t.with_cost},
              {"total_cost", t.with_cost ? json(Round4(t.cost_sum)) : json(nullptr)},
              {"mean_cost", t.with_cost ? json(Round4(t.cost_sum / t.with_cost)) : json(nullptr)},
              {"mean_api_calls", t.with_api_calls ? json(Round4(t.api_calls_sum / t.with_api_calls)) : json(nullptr)}};
}

template <typename T>
json OrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// model -> repository -> reports
using Grouped = std::map<std::string, std::map<std::string, std::vector<const EvalReport*>>>;

Grouped Group(const std::vector<EvalReport>& reports) {
  Grouped g;
  for (const auto& r : reports) g[r.model][r.repo.empty() ? "(unknown)" : r.repo].push_back(&r);
  return g;
}

std::vector<const EvalReport*> All(const std::map<std::string, std::vector<const EvalReport*>>& m) {
  std::vector<const EvalReport*> out;
  for (const auto& [repo, rs] : m) out.insert(out.end(), rs.begin(), rs.end());
  return out;
}

std::string Pad(const std::string& s, size_t width, bool right) {
  if (s.size() >= width) return s;
  std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

std::string Html(std::string_view s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(ch);
    }
  }
  return out;
}

std::string Status(const EvalReport& r) {
  if (r.empty_patch) return "empty";
  if (!r.applied && r.error.empty()) return "apply failed";
  if (!r.error.empty()) return "error";
  if (r.timed_out) return "timed out";
  if (r.suspicious) return "suspicious";
  return r.resolved ? "resolved" : "unresolved";
}

}  // namespace

double EvalTotals::resolved_rate() const { return Rate(static_cast<double>(resolved), instances); }
double EvalTotals::passed_rate() const { return Rate(pass_rate_sum, instances); }
double EvalTotals::apply_rate() const { return Rate(static_cast<double>(applied), instances); }

EvalTotals Totals(const std::vector<const EvalReport*>& reports) {
  EvalTotals t;
  for (const EvalReport* r : reports) {
    ++t.instances;
    t.resolved += r->resolved;
    t.applied += r->applied;
    t.empty += r->empty_patch;
    t.errored += !r->error.empty();
    t.timed_out += r->timed_out;
    t.suspicious += r->suspicious;
    t.pass_rate_sum += r->pass_rate;
    if (r->input_tokens && r->output_tokens) {
      ++t.with_usage;
      t.input_tokens_sum += static_cast<double>(*r->input_tokens);
      t.output_tokens_sum += static_cast<double>(*r->output_tokens);
    }
    if (r->cost) ++t.with_cost, t.cost_sum += *r->cost;
    if (r->api_calls) ++t.with_api_calls, t.api_calls_sum += static_cast<double>(*r->api_calls);
  }
  return t;
}

std::string ReportJson(const EvalReport& r) {
  json j = {{"schema", "fbkit.eval-report/1"},
            {"instance_id", r.instance_id},
            {"model_name_or_path", r.model},
            {"repo", r.repo},
            {"level", r.level},
            {"patch_sha256", r.patch_sha256},
            {"empty_patch", r.empty_patch},
            {"applied", r.applied},
            {"apply_method", r.apply_method},
            {"apply_error", r.apply_error},
            {"error", r.error},
            {"timed_out", r.timed_out},
            {"test_files_reverted", r.test_files_reverted},
            {"FAIL_TO_PASS", r.f2p},
            {"PASS_TO_PASS", r.p2p},
            {"f2p_passed", r.f2p_passed},
            {"p2p_passed", r.p2p_passed},
            {"pass_rate", Round4(r.pass_rate)},
            {"suspicious", r.suspicious},
            {"suspicious_reasons", r.suspicious_reasons},
            {"notes", r.notes},
            {"resolved", r.resolved},
            {"sandbox", r.sandbox},
            {"input_tokens", OrNull(r.input_tokens)},
            {"output_tokens", OrNull(r.output_tokens)},
            {"cost", OrNull(r.cost)},
            {"api_calls", OrNull(r.api_calls)},
            {"exitstatus", r.exitstatus ? json(*r.exitstatus) : json(nullptr)}};
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

util::Expected<EvalReport> ParseReport(const std::string& text) {
  try {
    json j = json::parse(text);
    if (j.value("schema", "") != "fbkit.eval-report/1") return util::Error{"not an fbkit eval report"};
    EvalReport r;
    r.instance_id = j.at("instance_id").get<std::string>();
    r.model = j.at("model_name_or_path").get<std::string>();
    r.repo = j.at("repo").get<std::string>();
    r.level = j.at("level").get<int>();
    r.patch_sha256 = j.at("patch_sha256").get<std::string>();
    r.empty_patch = j.at("empty_patch").get<bool>();
    r.applied = j.at("applied").get<bool>();
    r.apply_method = j.at("apply_method").get<std::string>();
    r.apply_error = j.at("apply_error").get<std::string>();
    r.error = j.at("error").get<std::string>();
    r.timed_out = j.at("timed_out").get<bool>();
    r.test_files_reverted = j.at("test_files_reverted").get<std::vector<std::string>>();
    r.f2p = j.at("FAIL_TO_PASS").get<std::map<std::string, std::string>>();
    r.p2p = j.at("PASS_TO_PASS").get<std::map<std::string, std::string>>();
    r.f2p_passed = j.at("f2p_passed").get<size_t>();
    r.p2p_passed = j.at("p2p_passed").get<size_t>();
    r.pass_rate = j.at("pass_rate").get<double>();
    r.suspicious = j.at("suspicious").get<bool>();
    r.suspicious_reasons = j.at("suspicious_reasons").get<std::vector<std::string>>();
    if (j.contains("notes")) r.notes = j.at("notes").get<std::vector<std::string>>();
    r.resolved = j.at("resolved").get<bool>();
    r.sandbox = j.value("sandbox", "");
    if (j.contains("input_tokens") && j["input_tokens"].is_number_integer()) {
      r.input_tokens = j["input_tokens"].get<int64_t>();
    }
    if (j.contains("output_tokens") && j["output_tokens"].is_number_integer()) {
      r.output_tokens = j["output_tokens"].get<int64_t>();
    }
    if (j.contains("cost") && j["cost"].is_number()) r.cost = j["cost"].get<double>();
    if (j.contains("api_calls") && j["api_calls"].is_number_integer()) {
      r.api_calls = j["api_calls"].get<int64_t>();
    }
    if (j.at("exitstatus").is_number()) r.exitstatus = j.at("exitstatus").get<int>();
    return r;
  } catch (const json::exception& e) {
    return util::Error{e.what()};
  }
}

std::string SummaryJson(const std::vector<EvalReport>& reports, size_t unpredicted) {
  json models = json::object();
  for (const auto& [model, repos] : Group(reports)) {
    json m = TotalsJson(Totals(All(repos)));
    json by_repo = json::object();
    for (const auto& [repo, rs] : repos) by_repo[repo] = TotalsJson(Totals(rs));
    m["repositories"] = by_repo;
    json lists = json::object();
    for (const EvalReport* r : All(repos)) {
      std::string key = r->resolved ? "resolved_ids" : "unresolved_ids";
      lists[key].push_back(r->instance_id);
      if (r->suspicious) lists["suspicious_ids"].push_back(r->instance_id);
      if (r->timed_out) lists["timed_out_ids"].push_back(r->instance_id);
      if (!r->error.empty()) lists["error_ids"].push_back(r->instance_id);
    }
    m.update(lists);
    models[model] = m;
  }
  std::vector<const EvalReport*> all;
  for (const auto& r : reports) all.push_back(&r);
  json j = TotalsJson(Totals(all));
  j["schema"] = "fbkit.eval-summary/1";
  j["models"] = models;
  j["tasks_without_prediction"] = unpredicted;
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string SummaryTable(const std::vector<EvalReport>& reports) {
  std::string out;
  auto row = [&](const std::string& name, const EvalTotals& t) {
    out += Pad(name, 34, false) + Pad(std::to_string(t.instances), 6, true) +
           Pad(std::to_string(t.resolved), 9, true) + Pad(Percent(t.resolved_rate()), 10, true) +
           Pad(Percent(t.passed_rate()), 9, true) + Pad(Percent(t.apply_rate()), 9, true) + "\n";
  };
  for (const auto& [model, repos] : Group(reports)) {
    out += "model: " + model + "\n";
    out += Pad("repository", 34, false) + Pad("tasks", 6, true) + Pad("resolved", 9, true) +
           Pad("%resolved", 10, true) + Pad("%passed", 9, true) + Pad("%applied", 9, true) + "\n";
    for (const auto& [repo, rs] : repos) row(repo, Totals(rs));
    EvalTotals t = Totals(All(repos));
    row("all", t);
    out += "empty " + std::to_string(t.empty) + ", errored " + std::to_string(t.errored) +
           ", timed out " + std::to_string(t.timed_out) + ", suspicious " +
           std::to_string(t.suspicious) + "\n";
    if (t.with_usage) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "token IO (%zu instances): %.0f input, %.0f output per instance\n",
                    t.with_usage, t.input_tokens_sum / static_cast<double>(t.with_usage),
                    t.output_tokens_sum / static_cast<double>(t.with_usage));
      out += buf;
    }
    if (t.with_cost) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "cost (%zu instances): %.4f in all, %.4f per instance\n",
                    t.with_cost, t.cost_sum, t.cost_sum / static_cast<double>(t.with_cost));
      out += buf;
    }
    out += "\n";
  }
  return out;
}

std::string SummaryHtml(const std::vector<EvalReport>& reports, const std::string& title) {
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + Html(title) +
      "</title>\n<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
      "margin-bottom:2em}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
      ".resolved{background:#dfd}.suspicious,.error,.timed{background:#fdd}"
      ".num{text-align:right}small{color:#555}</style></head><body>\n<h1>" +
      Html(title) + "</h1>\n";
  for (const auto& [model, repos] : Group(reports)) {
    out += "<h2>" + Html(model) + "</h2>\n<table><tr><th>repository</th><th>tasks</th>"
           "<th>resolved</th><th>% resolved</th><th>% passed</th><th>% applied</th></tr>\n";
    auto row = [&](const std::string& name, const EvalTotals& t) {
      out += "<tr><td>" + Html(name) + "</td><td class=num>" + std::to_string(t.instances) +
             "</td><td class=num>" + std::to_string(t.resolved) + "</td><td class=num>" +
             Percent(t.resolved_rate()) + "</td><td class=num>" + Percent(t.passed_rate()) +
             "</td><td class=num>" + Percent(t.apply_rate()) + "</td></tr>\n";
    };
    for (const auto& [repo, rs] : repos) row(repo, Totals(rs));
    row("all", Totals(All(repos)));
    out += "</table>\n<table><tr><th>instance</th><th>level</th><th>status</th><th>F2P</th>"
           "<th>P2P</th><th>pass rate</th><th>notes</th></tr>\n";
    for (const EvalReport* r : All(repos)) {
      std::string status = Status(*r);
      std::string cls = r->resolved ? "resolved"
                        : r->suspicious ? "suspicious"
                        : r->timed_out ? "timed"
                        : !r->error.empty() ? "error" : "";
      std::string notes = r->apply_method.empty() ? "" : "applied with " + r->apply_method;
      for (const auto& s : r->suspicious_reasons) notes += (notes.empty() ? "" : "; ") + s;
      for (const auto& s : r->notes) notes += (notes.empty() ? "" : "; ") + ("note: " + s);
      if (!r->error.empty()) notes += (notes.empty() ? "" : "; ") + r->error.substr(0, 300);
      for (const auto& t : r->test_files_reverted) notes += "; put back " + t;
      out += "<tr class=\"" + cls + "\"><td>" + Html(r->instance_id) + "</td><td class=num>" +
             std::to_string(r->level) + "</td><td>" + status + "</td><td class=num>" +
             std::to_string(r->f2p_passed) + "/" + std::to_string(r->f2p.size()) +
             "</td><td class=num>" + std::to_string(r->p2p_passed) + "/" +
             std::to_string(r->p2p.size()) + "</td><td class=num>" + Percent(r->pass_rate) +
             "%</td><td><small>" + Html(notes) + "</small></td></tr>\n";
    }
    out += "</table>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace fbkit::extract::eval

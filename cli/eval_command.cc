#include "cli/eval_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "cli/batch.h"
#include "cli/cli_common.h"
#include "cli/extract_common.h"
#include "cli/spec_options.h"
#include "extract/eval.h"
#include "extract/eval_report.h"
#include "extract/infer.h"
#include "extract/verify.h"
#include "util/file_lock.h"
#include "util/hash.h"
#include "util/parallel.h"

namespace fbkit::cli {
namespace {

struct EvalArgs {
  std::string tasks;
  std::string predictions;
  std::string output;
  std::string agent_logs;
  std::string format = "json";
  std::string html;
  std::vector<std::string> only;
  bool gold = false;
  bool rerun = false;
  bool quiet = false;
  double timeout = 0;
  int jobs = 1;
  std::string sandbox = "bwrap";
  std::string shard;
};

// The agent's log for an instance under --agent-logs: DIR/ID.{log,txt,json,jsonl,traj,md}
// or every file of the directory DIR/ID.
std::string AgentLog(util::Env& env, const std::string& dir, const std::string& id) {
  if (dir.empty()) return "";
  for (const char* ext : {".log", ".txt", ".json", ".jsonl", ".traj", ".md", ""}) {
    std::string path = util::JoinPath(dir, id + ext);
    auto st = env.Stat(path, true);
    if (!st.ok()) continue;
    if (st->type != util::FileType::kDirectory) {
      auto text = env.ReadFile(path);
      return text.ok() ? *text : "";
    }
    std::string all;
    auto entries = env.ListDir(path);
    if (!entries.ok()) continue;
    std::vector<std::string> names;
    for (const auto& e : *entries) {
      if (e.type == util::FileType::kRegular) names.push_back(e.name);
    }
    std::sort(names.begin(), names.end());
    for (const auto& n : names) {
      auto text = env.ReadFile(util::JoinPath(path, n));
      if (text.ok()) all += *text + "\n";
    }
    return all;
  }
  return "";
}

// What an infer run kept of the agent's work for the cheating check: its log and whatever it
// left in its output directory (trajectories record the commands it ran).
std::string InferAgentLog(util::Env& env, const std::string& inst) {
  if (inst.empty()) return "";
  auto log = env.ReadFile(util::JoinPath(inst, "agent.log"));
  std::string out = log.ok() ? *log : "";
  std::string trajectories = AgentLog(env, inst, "output");
  return out + (trajectories.empty() ? "" : "\n" + trajectories);
}

// The token usage an infer run recorded for the instance.
void AddUsage(util::Env& env, const std::string& inst, extract::EvalReport* r) {
  if (inst.empty()) return;
  auto text = env.ReadFile(util::JoinPath(inst, "result.json"));
  if (!text.ok()) return;
  auto result = extract::ParseInferResult(*text);
  if (!result.ok() || !result->usage) return;
  r->input_tokens = result->usage->input_tokens;
  r->output_tokens = result->usage->output_tokens;
  r->cost = result->usage->cost;
  if (result->usage->api_calls >= 0) r->api_calls = result->usage->api_calls;
}

std::string Describe(const extract::EvalReport& r) {
  char buf[160];
  std::snprintf(buf, sizeof buf, " (F2P %zu/%zu, P2P %zu/%zu)", r.f2p_passed, r.f2p.size(),
                r.p2p_passed, r.p2p.size());
  std::string what = r.empty_patch                      ? "empty patch"
                     : !r.error.empty()                 ? "error: " + r.error.substr(0, 200)
                     : !r.applied                       ? "patch does not apply"
                     : r.timed_out                      ? "timed out"
                     : r.suspicious                     ? "suspicious: " + r.suspicious_reasons.front()
                     : r.resolved                       ? "resolved"
                                                        : "unresolved";
  return what + (r.applied ? buf : "");
}

util::Expected<std::vector<extract::Prediction>> LoadPredictions(
    util::Env& env, const EvalArgs& a, const std::map<std::string, std::string>& tasks,
    std::vector<std::string>* errors) {
  std::vector<extract::Prediction> preds;
  if (a.gold) {
    for (const auto& [id, dir] : tasks) {
      auto patch = env.ReadFile(util::JoinPath(dir, "patch.diff"));
      if (!patch.ok()) return util::Error{patch.error()};
      preds.push_back({id, "gold", *patch, util::JoinPath(dir, "patch.diff")});
    }
  } else {
    auto text = env.ReadFile(a.predictions);
    if (!text.ok()) return util::Error{a.predictions + ": " + text.error()};
    for (auto& p : extract::ParsePredictions(*text, a.predictions, errors)) {
      if (!tasks.count(p.instance_id)) {
        errors->push_back(p.where + ": no task " + p.instance_id + " in " + a.tasks);
        continue;
      }
      preds.push_back(std::move(p));
    }
  }
  if (!a.only.empty()) {
    std::erase_if(preds, [&](const extract::Prediction& p) {
      return std::find(a.only.begin(), a.only.end(), p.instance_id) == a.only.end();
    });
  }
  std::sort(preds.begin(), preds.end(),
            [](const auto& x, const auto& y) { return x.instance_id < y.instance_id; });
  return preds;
}

// A finished report for the same patch and model, unless --rerun.
std::optional<extract::EvalReport> Finished(util::Env& env, const std::string& dir,
                                            const extract::Prediction& p,
                                            const std::string& sandbox) {
  auto text = env.ReadFile(util::JoinPath(dir, "report.json"));
  if (!text.ok()) return std::nullopt;
  auto r = extract::ParseReport(*text);
  if (!r.ok() || r->patch_sha256 != util::Sha256Hex(p.patch) || r->model != p.model ||
      r->sandbox != sandbox) {
    return std::nullopt;
  }
  return *r;
}

int RunEval(const EvalArgs& a) {
  const std::string who = "fb-extract eval";
  util::Env& env = util::RealEnv();
  if (a.gold == !a.predictions.empty()) {
    std::fprintf(stderr, "%s: give either --predictions FILE or --gold\n", who.c_str());
    return kExitUsage;
  }
  if (a.sandbox == "bwrap") {
    if (auto s = tracer::CheckBwrap(); !s.ok()) return Fail(who, s.error());
  }
  auto shard = ParseShard(a.shard);
  if (!shard.ok()) return Fail(who, shard.error()), kExitUsage;
  auto tasks = FindTasks(env, a.tasks);
  if (!tasks.ok()) return Fail(who, tasks.error());
  std::vector<std::string> errors;
  auto preds = LoadPredictions(env, a, *tasks, &errors);
  if (!preds.ok()) return Fail(who, preds.error());
  for (const auto& e : errors) std::fprintf(stderr, "%s: %s\n", who.c_str(), e.c_str());
  if (preds->empty()) return Fail(who, "no prediction to evaluate");
  std::string out = a.output.empty() ? "eval-" + preds->front().model : a.output;
  std::replace(out.begin(), out.end(), ' ', '_');
  if (auto s = env.MakeDirs(out); !s.ok()) return Fail(who, out + ": " + s.error());
  auto abs_out = env.RealPath(out);
  if (!abs_out.ok()) return Fail(who, abs_out.error());

  // Predictions written by `fb-extract infer`: its run directory holds the agents' logs,
  // trajectories and token usage beside predictions.jsonl.
  std::string infer_run;
  if (auto path = env.RealPath(a.predictions); !a.predictions.empty() && path.ok()) {
    std::string dir = util::DirName(*path);
    if (env.Stat(util::JoinPath(dir, preds->front().instance_id + "/result.json"), true).ok()) {
      infer_run = dir;
    }
  }
  std::vector<size_t> mine;  // this shard's predictions
  for (size_t i = 0; i < preds->size(); ++i) {
    if (InShard(i, *shard)) mine.push_back(i);
  }
  std::mutex mu;
  std::vector<std::string> write_errors;  // reports that could not be written
  Batch<extract::EvalReport> batch;
  batch.label = "evaluating";
  batch.jobs = a.jobs;
  batch.quiet = a.quiet;
  batch.id = [&](size_t k) { return (*preds)[mine[k]].instance_id; };
  batch.earlier = [&](size_t k) -> std::optional<extract::EvalReport> {
    const extract::Prediction& p = (*preds)[mine[k]];
    if (a.rerun) return std::nullopt;
    return Finished(env, util::JoinPath(*abs_out, p.instance_id), p, a.sandbox);
  };
  batch.run = [&](size_t k) {
    const extract::Prediction& p = (*preds)[mine[k]];
    std::string dir = util::JoinPath(*abs_out, p.instance_id);
    std::optional<extract::EvalReport> r;
    {
      extract::EvalOptions o;
      o.timeout = a.timeout;
      o.sandbox = a.sandbox == "none" ? tracer::SandboxKind::kNone : tracer::SandboxKind::kBwrap;
      o.env_cache = EnvCacheDir();
      o.work_dir = util::JoinPath(*abs_out, ".work/" + p.instance_id);
      std::string infer_inst = infer_run.empty() ? "" : util::JoinPath(infer_run, p.instance_id);
      o.agent_log = !a.agent_logs.empty() ? AgentLog(env, a.agent_logs, p.instance_id)
                                          : InferAgentLog(env, infer_inst);
      r = extract::EvaluateInstance(env, tracer::RealLauncher(), tasks->at(p.instance_id), p, o);
      AddUsage(env, infer_inst, &*r);
      auto written = WriteFiles(env, dir, {{"patch.diff", p.patch},
                                           {"test_output.txt", r->test_output},
                                           {"report.json", extract::ReportJson(*r)}});
      if (!written.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        write_errors.push_back(written.error());
      }
    }
    return std::move(*r);
  };
  batch.describe = Describe;
  RunBatch(mine.size(), batch);
  for (const auto& e : write_errors) Fail(who, "writing a report: " + e);
  ::rmdir(util::JoinPath(*abs_out, ".work").c_str());  // only when no other shard uses it
  // The summary covers every report in RUN_DIR for these predictions, whichever shard (or
  // earlier run) wrote it: shards that share RUN_DIR merge into the unsharded result.
  util::FileLock lock(util::JoinPath(*abs_out, ".fbkit-lock"));
  std::vector<extract::EvalReport> reports;
  for (const auto& p : *preds) {
    if (auto r = Finished(env, util::JoinPath(*abs_out, p.instance_id), p, a.sandbox)) {
      reports.push_back(std::move(*r));
    }
  }
  size_t unpredicted = tasks->size() - std::min(tasks->size(), preds->size());
  std::string summary = extract::SummaryJson(reports, unpredicted);
  if (auto s = env.WriteFileAtomic(util::JoinPath(*abs_out, "summary.json"), summary); !s.ok()) {
    return Fail(who, s.error());
  }
  if (!a.html.empty()) {
    std::string html = extract::SummaryHtml(reports, "fbkit evaluation: " + out);
    if (auto s = env.WriteFileAtomic(a.html, html); !s.ok()) return Fail(who, a.html + ": " + s.error());
  }
  std::fputs((a.format == "table" ? extract::SummaryTable(reports) : summary).c_str(), stdout);
  if (!write_errors.empty()) return kExitFailure;
  return errors.empty() ? kExitOk : kExitFileErrors;
}

}  // namespace

void AddEvalCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<EvalArgs>();
  CLI::App* eval = app.add_subcommand(
      "eval",
      "Score agents' patches on fbkit tasks: per-test outcomes from fbkit's pytest plugin, "
      "test-file edits put back, suspicious runs flagged. Writes RUN_DIR/<instance_id>/"
      "{report.json,test_output.txt,patch.diff} and RUN_DIR/summary.json; re-runs skip "
      "finished instances.");
  eval->add_option("TASKS", a->tasks, "A task directory, or a directory of them (fb-extract all's -o)")
      ->required();
  eval->add_option("--predictions", a->predictions,
                   "JSON or JSONL of {instance_id, model_patch, model_name_or_path}");
  eval->add_flag("--gold", a->gold, "Evaluate each task's own patch.diff (model name \"gold\")");
  eval->add_option("-o,--output", a->output, "Run directory (default: eval-<model>)");
  eval->add_option("-j,--jobs", a->jobs, "Instances at once (default 1)");
  eval->add_option("--timeout", a->timeout,
                   "Seconds per instance's pytest run (and at most per test file; default: the "
                   "task's own per-file limit)");
  eval->add_option("--agent-logs", a->agent_logs,
                   "Directory of agent logs (ID.log, ID.txt, ID.json, ... or ID/): flag reads "
                   "of the installed library's sources");
  eval->add_option("--instance", a->only, "Only this instance id (repeatable)");
  eval->add_option("--format", a->format, "Summary on stdout: json (default) or table")
      ->check(CLI::IsMember({"json", "table"}));
  eval->add_option("--html", a->html, "Also write a one-page HTML report to this file");
  eval->add_option("--sandbox", a->sandbox,
                   "bwrap (default): every process running the agent's code is isolated; none: "
                   "no isolation (only when you trust the patches; recorded in each report)")
      ->check(CLI::IsMember({"bwrap", "none"}));
  eval->add_option("--shard", a->shard,
                   "Only the K-th of N shares of the predictions (K/N); shards sharing -o merge "
                   "into one summary");
  eval->add_flag("--rerun", a->rerun, "Evaluate again instances an earlier run finished");
  eval->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  eval->callback([a, exit_code] { *exit_code = RunEval(*a); });
}

}  // namespace fbkit::cli

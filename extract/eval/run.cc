#include "extract/eval/run.h"


#include <algorithm>
#include <mutex>
#include <optional>

#include "agents/infer_result.h"
#include "agents/run_dir.h"
#include "extract/eval/report.h"
#include "util/hash.h"
#include "util/shard.h"

namespace fbkit::extract::eval {
namespace {

// The agent's log for an instance under `dir`: DIR/ID.{log,txt,json,jsonl,traj,md} or every
// file of the directory DIR/ID. An agent may have written these (infer's output/): read
// without following links, regular files only, at most kMaxAgentLogBytes in all.
constexpr uint64_t kMaxAgentLogBytes = 64ull << 20;

std::string AgentLog(util::Env& env, const std::string& dir, const std::string& id) {
  if (dir.empty()) return "";
  for (const char* ext : {".log", ".txt", ".json", ".jsonl", ".traj", ".md", ""}) {
    std::string path = util::JoinPath(dir, id + ext);
    auto st = env.Stat(path, false);
    if (!st.ok()) continue;
    if (st->type != util::FileType::kDirectory) {
      auto text = env.ReadUntrusted(dir, id + ext, kMaxAgentLogBytes);
      return text.ok() ? *text : "";
    }
    auto entries = env.ListDir(path);
    if (!entries.ok()) continue;
    std::vector<std::string> names;
    for (const auto& e : *entries) {
      if (e.type == util::FileType::kRegular) names.push_back(e.name);
    }
    std::sort(names.begin(), names.end());
    std::string all;
    for (const auto& n : names) {
      if (all.size() >= kMaxAgentLogBytes) break;
      auto text = env.ReadUntrusted(path, n, kMaxAgentLogBytes - all.size());
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
  auto log = env.ReadTail(agents::InferInstanceDir{inst}.agent_log(), kMaxAgentLogBytes);
  std::string out = log.ok() ? *log : "";
  std::string trajectories = AgentLog(env, inst, agents::kOutputDir);
  return out + (trajectories.empty() ? "" : "\n" + trajectories);
}

// The token usage an infer run recorded for the instance.
void AddUsage(util::Env& env, const std::string& inst, EvalReport* r) {
  if (inst.empty()) return;
  auto text = env.ReadFile(agents::InferInstanceDir{inst}.result());
  if (!text.ok()) return;
  auto result = agents::ParseInferResult(*text);
  if (!result.ok() || !result->usage) return;
  r->input_tokens = result->usage->input_tokens;
  r->output_tokens = result->usage->output_tokens;
  r->cost = result->usage->cost;
  if (result->usage->api_calls >= 0) r->api_calls = result->usage->api_calls;
}

// A finished report for the same patch, model and sandbox.
std::optional<EvalReport> Finished(util::Env& env, const std::string& dir, const Prediction& p,
                                   const std::string& sandbox) {
  auto text = env.ReadFile(util::JoinPath(dir, agents::kReportFile));
  if (!text.ok()) return std::nullopt;
  auto r = ParseReport(*text);
  if (!r.ok() || r->patch_sha256 != util::Sha256Hex(p.patch) || r->model != p.model ||
      r->sandbox != sandbox) {
    return std::nullopt;
  }
  return *r;
}

// Evaluates one prediction and writes its files; a failed write goes to `write_error`.
EvalReport EvaluateOne(const runner::Services& services, const EvalStep& step,
                       const EvalRunOptions& options, const Prediction& p,
                       std::optional<std::string>* write_error) {
  util::Env& env = services.env;
  EvalOptions o = options.eval;
  agents::EvalRunDir run{options.run_dir};
  o.work_dir = run.work(p.instance_id);
  std::string infer_inst =
      options.infer_run.empty() ? "" : agents::InferRunDir{options.infer_run}.instance(p.instance_id).dir;
  o.agent_log = !options.agent_logs.empty() ? AgentLog(env, options.agent_logs, p.instance_id)
                                            : InferAgentLog(env, infer_inst);
  const std::string& task = options.tasks.at(p.instance_id);
  EvalReport r = step ? step(task, p, o) : EvaluateInstance(services, task, p, o);
  AddUsage(env, infer_inst, &r);
  auto written = util::WriteFiles(env, run.instance(p.instance_id),
                                 {{agents::kPatchFile, p.patch},
                                  {agents::kTestOutputFile, r.test_output},
                                  {agents::kReportFile, ReportJson(r)}});
  if (!written.ok()) *write_error = written.error();
  return r;
}

}  // namespace

util::Expected<std::vector<Prediction>> LoadPredictions(
    util::Env& env, const std::map<std::string, std::string>& tasks, const std::string& tasks_dir,
    const std::string& predictions_path, const std::vector<std::string>& only,
    std::vector<std::string>* errors) {
  std::vector<Prediction> preds;
  if (predictions_path.empty()) {
    for (const auto& [id, dir] : tasks) {
      auto patch = env.ReadUntrusted(dir, taskdir::kGoldPatchFile, util::kMaxTreeFileBytes);
      if (!patch.ok()) return patch.failure();
      preds.push_back({id, "gold", *patch, taskdir::TaskDir{dir}.patch()});
    }
  } else {
    // Bounded before it is read: no more than one largest prediction per task, and a
    // megabyte of slack each (red team: a 3 GiB file ended eval in std::bad_alloc).
    const uint64_t bound = (tasks.size() + 1) * (taskdir::kMaxAgentPatchBytes + (1u << 20));
    if (auto st = env.Stat(predictions_path, true); st.ok() && st->size > bound) {
      return util::Error{predictions_path + ": " + std::to_string(st->size) + " bytes, more than " +
                         std::to_string(tasks.size()) + " tasks' predictions may take (" +
                         std::to_string(bound) + " bytes: one patch of at most " +
                         std::to_string(taskdir::kMaxAgentPatchBytes) + " bytes per task)"};
    }
    auto text = env.ReadFile(predictions_path);
    if (!text.ok()) return util::Error{predictions_path + ": " + text.error()};
    auto wanted = [&](const std::string& id) {
      return tasks.count(id) &&
             (only.empty() || std::find(only.begin(), only.end(), id) != only.end());
    };
    for (auto& p : ParsePredictions(*text, predictions_path, errors,
                                    taskdir::kMaxAgentPatchBytes, wanted)) {
      if (!tasks.count(p.instance_id)) {
        errors->push_back(p.where + ": no task " + p.instance_id + " in " + tasks_dir);
        continue;
      }
      preds.push_back(std::move(p));
    }
  }
  if (!only.empty()) {
    std::erase_if(preds, [&](const Prediction& p) {
      return std::find(only.begin(), only.end(), p.instance_id) == only.end();
    });
  }
  std::sort(preds.begin(), preds.end(),
            [](const auto& x, const auto& y) { return x.instance_id < y.instance_id; });
  return preds;
}

std::string InferRunOf(util::Env& env, const std::string& predictions_path,
                       const std::vector<Prediction>& predictions) {
  auto path = env.RealPath(predictions_path);
  if (predictions_path.empty() || predictions.empty() || !path.ok()) return "";
  std::string dir = util::DirName(*path);
  std::string result = util::JoinPath(dir, predictions.front().instance_id + "/result.json");
  return env.Stat(result, true).ok() ? dir : "";
}

EvalRunResult EvaluateRun(
    const runner::Services& services,
    const EvalRunOptions& options,
    const std::function<void(const util::BatchItem<EvalReport>&)>& report,
    const EvalStep& step) {
  util::Env& env = services.env;
  const auto& preds = options.predictions;
  std::string sandbox = sandbox::SandboxKindName(options.eval.sandbox);
  std::vector<size_t> mine;  // this shard's predictions
  for (size_t i = 0; i < preds.size(); ++i) {
    if (util::InShard(i, options.shard)) mine.push_back(i);
  }
  EvalRunResult out;
  std::mutex mu;
  util::Batch<EvalReport> batch;
  batch.jobs = options.jobs;
  batch.earlier = [&](size_t k) -> std::optional<EvalReport> {
    const Prediction& p = preds[mine[k]];
    if (options.rerun) return std::nullopt;
    return Finished(env, agents::EvalRunDir{options.run_dir}.instance(p.instance_id), p, sandbox);
  };
  batch.run = [&](size_t k, int) {
    std::optional<std::string> write_error;
    EvalReport r = EvaluateOne(services, step, options, preds[mine[k]], &write_error);
    if (write_error) {
      std::lock_guard<std::mutex> lock(mu);
      out.write_errors.push_back(*write_error);
    }
    return r;
  };
  batch.failed = [&](size_t k, const std::string& what) {
    const Prediction& p = preds[mine[k]];
    EvalReport r;
    r.instance_id = p.instance_id;
    r.model = p.model;
    r.error = "internal error: " + what;
    std::lock_guard<std::mutex> lock(mu);
    out.internal_errors.push_back(p.instance_id + ": " + what);
    return r;
  };
  batch.report = report;
  util::RunBatch(mine.size(), batch);
  std::sort(out.internal_errors.begin(), out.internal_errors.end());
  agents::EvalRunDir run{options.run_dir};
  (void)env.RemoveEmptyDir(run.work());  // only when no other shard uses it
  // Shards that share RUN_DIR merge into the unsharded result.
  auto lock = env.LockFile(run.lock());
  for (const auto& p : preds) {
    if (auto r = Finished(env, run.instance(p.instance_id), p, sandbox)) {
      out.reports.push_back(std::move(*r));
    }
  }
  size_t unpredicted = options.tasks.size() - std::min(options.tasks.size(), preds.size());
  out.summary_json = SummaryJson(out.reports, unpredicted);
  auto written = env.WriteFileAtomic(run.summary(), out.summary_json);
  if (!written.ok()) out.error = written.error();
  return out;
}

}  // namespace fbkit::extract::eval

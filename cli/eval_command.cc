#include "cli/eval_command.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

#include "cli/batch.h"
#include "cli/cli_common.h"
#include "cli/extract_common.h"
#include "cli/spec_options.h"
#include "extract/eval/instance.h"
#include "extract/eval/report.h"
#include "extract/eval/run.h"
#include "extract/image/images.h"
#include "util/shard.h"

namespace fbkit::cli {
namespace {

enum class SummaryFormat { kJson, kTable };

struct EvalArgs {
  std::string tasks;
  std::string predictions;
  std::string output;
  std::string agent_logs;
  SummaryFormat format = SummaryFormat::kJson;
  std::string html;
  std::vector<std::string> only;
  bool gold = false;
  bool rerun = false;
  bool trust_settings = false;
  bool quiet = false;
  double timeout = 0;
  int jobs = 1;
  std::string sandbox = "bwrap";
  std::string images;           // --sandbox container: fb-extract images' images.json
  std::string engine = "podman";
  std::string shard;
  std::optional<sandbox::CopyPolicy> exposed_copies;  // unset: the task's spec
};

std::string DescribeReport(const extract::eval::EvalReport& r) {
  char buf[160];
  std::snprintf(buf, sizeof buf, " (F2P %zu/%zu, P2P %zu/%zu)", r.f2p_passed, r.f2p.size(),
                r.p2p_passed, r.p2p.size());
  std::string what = r.empty_patch                      ? "empty patch"
                     : !r.error.empty()                 ? "error: " + r.error.substr(0, 200) +
                                                              (r.error.size() > 200 ? "... (whole below)" : "")
                     : !r.applied                       ? "patch does not apply"
                     : r.timed_out                      ? "timed out"
                     : r.suspicious                     ? "suspicious: " + r.suspicious_reasons.front()
                     : r.resolved                       ? "resolved"
                                                        : "unresolved";
  return what + (r.applied ? buf : "");
}

// The run directory's name: -o, else eval-<model> (spaces made underscores).
std::string RunDirName(const EvalArgs& a, const std::string& model) {
  if (!a.output.empty()) {
    std::string out = a.output;
    std::replace(out.begin(), out.end(), ' ', '_');
    return out;
  }
  // The predictions name the model: one plain part of a path, whatever they say.
  std::string out = "eval-" + model;
  for (char& c : out) {
    bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    if (!plain) c = '_';
  }
  return out;
}

// --html's page, when asked for.
util::Status WriteHtml(util::Env& env, const EvalArgs& a,
                       const std::vector<extract::eval::EvalReport>& reports,
                       const std::string& name) {
  if (a.html.empty()) return util::Status::Ok();
  std::string html = extract::eval::SummaryHtml(reports, "fbkit evaluation: " + name);
  if (auto s = env.WriteFileAtomic(a.html, html); !s.ok()) return util::Error{a.html + ": " + s.error()};
  return util::Status::Ok();
}

constexpr char kEvalWho[] = "fb-extract eval";

// The run's options from the command line: tasks, predictions (bad ones in `errors`), the
// run directory (made; its name as given in `name`); else the exit code to stop with.
std::optional<int> Prepare(util::Env& env, const EvalArgs& a, extract::eval::EvalRunOptions* o,
                           std::string* name, std::vector<std::string>* errors) {
  if (a.gold == !a.predictions.empty()) {
    return Fail(kEvalWho, "give either --predictions FILE or --gold"), kExitUsage;
  }
  auto sandbox = sandbox::ParseSandboxKind(a.sandbox);
  if (!sandbox.ok()) return Fail(kEvalWho, sandbox.error()), kExitUsage;
  if (*sandbox == sandbox::SandboxKind::kBwrap) {
    if (auto s = sandbox::CheckBwrap(); !s.ok()) return Fail(kEvalWho, s.error());
  }
  if (*sandbox == sandbox::SandboxKind::kContainer) {
    if (auto stop = ContainerImages(env, kEvalWho, a.engine, a.images, false, &o->eval.images)) return stop;
    o->eval.engine = a.engine;
  } else if (!a.images.empty()) {
    return Fail(kEvalWho, "--images is for --sandbox container"), kExitUsage;
  }
  auto shard = util::ParseShard(a.shard);
  if (!shard.ok()) return Fail(kEvalWho, shard.error()), kExitUsage;
  auto tasks = FindTasks(env, a.tasks);
  if (!tasks.ok()) return Fail(kEvalWho, tasks.error());
  o->tasks = std::move(*tasks);
  auto preds =
      extract::eval::LoadPredictions(env, o->tasks, a.tasks, a.predictions, a.only, errors);
  if (!preds.ok()) return Fail(kEvalWho, preds.error());
  for (const auto& e : *errors) Fail(kEvalWho, e);
  if (preds->empty()) return Fail(kEvalWho, "no prediction to evaluate");
  *name = RunDirName(a, preds->front().model);
  if (auto s = env.MakeDirs(*name); !s.ok()) return Fail(kEvalWho, *name + ": " + s.error());
  auto run_dir = env.RealPath(*name);
  if (!run_dir.ok()) return Fail(kEvalWho, run_dir.error());
  o->run_dir = *run_dir;
  o->agent_logs = a.agent_logs;
  o->infer_run = extract::eval::InferRunOf(env, a.predictions, *preds);
  o->predictions = std::move(*preds);
  o->shard = *shard;
  o->jobs = a.jobs;
  o->rerun = a.rerun;
  o->eval.timeout = a.timeout;
  o->eval.sandbox = *sandbox;
  o->eval.environment_cache = EnvCacheDir();
  o->eval.trust_settings = a.trust_settings;
  o->eval.exposed_copies = a.exposed_copies;
  return std::nullopt;
}

int RunEval(const EvalArgs& a) {
  util::Env& env = util::RealEnv();
  extract::eval::EvalRunOptions o;
  std::string name;
  std::vector<std::string> errors;
  if (auto stop = Prepare(env, a, &o, &name, &errors)) return *stop;
  BatchLines<extract::eval::EvalReport> lines(
      "evaluating", a.quiet, [](const auto& item) { return item.result->instance_id; }, DescribeReport);
  auto run = extract::eval::EvaluateRun(RealServices(), o, std::ref(lines));
  lines.Done();
  for (const auto& e : run.write_errors) Fail(kEvalWho, "writing a report: " + e);
  for (const auto& e : run.internal_errors) Fail(kEvalWho, "internal error: " + e);
  if (!run.error.empty()) return Fail(kEvalWho, run.error);
  if (auto s = WriteHtml(env, a, run.reports, name); !s.ok()) return Fail(kEvalWho, s.error());
  const auto& reports = run.reports;
  std::string out =
      a.format == SummaryFormat::kTable ? extract::eval::SummaryTable(reports) : run.summary_json;
  std::fputs(out.c_str(), stdout);
  // An instance that could not be scored is said whole, and the run is not a success.
  size_t errored = 0;
  for (const auto& r : reports) {
    if (r.error.empty()) continue;
    ++errored;
    Fail(kEvalWho, r.instance_id + ": error: " + r.error);
  }
  if (!run.write_errors.empty() || !run.internal_errors.empty()) return kExitFailure;
  return errors.empty() && errored == 0 ? kExitOk : kExitFileErrors;
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
  AddChoice(eval, "--format", &a->format,
            {{"json", SummaryFormat::kJson}, {"table", SummaryFormat::kTable}},
            "Summary on stdout: json (default) or table");
  eval->add_option("--html", a->html, "Also write a one-page HTML report to this file");
  eval->add_option("--sandbox", a->sandbox,
                   "bwrap (default): every process running the agent's code is isolated; "
                   "container: the same isolation in a container of each task's environment "
                   "image (--images; podman, no bubblewrap needed); none: no isolation (only "
                   "when you trust the patches; recorded in each report)")
      ->check(CLI::IsMember({"bwrap", "container", "none"}));
  eval->add_option("--images", a->images,
                   "--sandbox container: the images.json of `fb-extract images TASKS --engine "
                   "podman` (each task's environment image)");
  eval->add_option("--engine", a->engine, "--sandbox container: the container engine (podman)");
  eval->add_option("--shard", a->shard,
                   "Only the K-th of N shares of the predictions (K/N); shards sharing -o merge "
                   "into one summary");
  eval->add_flag("--trust-task-settings", a->trust_settings, kTrustTaskSettingsHelp);
  AddExposedCopies(eval, &a->exposed_copies, "the tests' sandbox");
  eval->add_flag("--rerun", a->rerun, "Evaluate again instances an earlier run finished");
  eval->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  eval->callback([a, exit_code] { *exit_code = RunEval(*a); });
}

}  // namespace fbkit::cli

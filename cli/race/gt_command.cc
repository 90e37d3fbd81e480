// fb-race gt: the ground truth (fbkit.race-gt/1) of each instance (validation, ablation,
// steps, goal and concepts), one ID.json each plus validation and files JSON Lines.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "cli/cli_common.h"
#include "cli/model_options.h"
#include "groundtruth/prompts.h"
#include "cli/race/commands.h"
#include "cli/race/race_common.h"
#include "groundtruth/ablation.h"
#include "groundtruth/assemble.h"
#include "groundtruth/execution.h"
#include "groundtruth/records.h"
#include "parser/python_parser.h"
#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"
#include "util/shard.h"

namespace fbkit::cli::race {
namespace {

// "a/b c" -> "a__b_c": an instance id as a file name.
std::string FileName(const std::string& id) {
  std::string out;
  for (char c : id) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    out += c == '/' ? std::string("__") : std::string(1, ok ? c : '_');
  }
  return out;
}

struct GtArgs : RunArgs {
  bool whole_files = false;
  std::string steps;
  std::string issue;
  ModelArgs model;
  bool no_entities = false;
};

util::Expected<groundtruth::GtOptions> GtOptionsOf(util::Env& env, const GtArgs& a) {
  groundtruth::GtOptions o;
  o.spec = a.spec;
  o.repeat = a.repeat;
  o.entities = !a.no_entities;
  o.whole_files = a.whole_files;
  if (!a.steps.empty()) {
    auto text = env.ReadFile(a.steps);
    if (!text.ok()) return text.failure();
    auto steps = groundtruth::ParseStepsFile(*text, a.steps);
    if (!steps.ok()) return steps.failure();
    o.steps = std::move(*steps);
  }
  if (!a.issue.empty()) {
    auto text = env.ReadFile(a.issue);
    if (!text.ok()) return text.failure();
    auto issues = groundtruth::ParseIssueFile(*text, a.issue);
    if (!issues.ok()) return issues.failure();
    o.issues = std::move(*issues);
  }
  return o;
}

// One instance's ground truth: writes ID.json, reports progress; returns the validation and
// files lines and the exit code.
Out GtOne(util::Env& env, parser::PythonParser& parser, const GtArgs& a,
          const groundtruth::GtOptions& options, const groundtruth::Instance& i,
          const std::string& dir) {
  auto r = groundtruth::BuildGroundTruth(RealServices(), parser, i,
                                         options, dir);
  Out out{groundtruth::ValidationJson(r.validation), "", kExitOk};
  using groundtruth::ValidationStatus;
  if (r.validation.status == ValidationStatus::kOk) {
    out.text2 = groundtruth::LocalizationJson(r.localization);
  }
  std::string path = util::JoinPath(a.output, FileName(i.instance_id) + ".json");
  (void)env.RemoveAll(path);
  if (r.ok) {
    if (auto s = env.WriteFileAtomic(path, groundtruth::GroundTruthJson(r.gt)); !s.ok()) {
      Note(false, "gt", i.instance_id, s.error());
      out.rc = kExitFailure;
      return out;
    }
  }
  std::string what = r.validation.status != ValidationStatus::kOk ? Summary(r.validation)
                     : !r.ok                     ? "error: " + r.localization.error
                             : "ok (necessary " + std::to_string(r.gt.necessary.size()) +
                                   ", tasks " + std::to_string(r.gt.tasks.size()) + ", steps " +
                                   std::to_string(r.gt.steps.size()) + ")";
  Note(a.quiet, "gt", i.instance_id, what);
  for (const auto& p : r.problems) {
    std::fprintf(stderr, "fb-race gt: %s: %s\n", i.instance_id.c_str(), p.c_str());
    out.rc = std::max(out.rc, static_cast<int>(kExitFileErrors));
  }
  if (r.validation.status == ValidationStatus::kError ||
      (r.validation.status == ValidationStatus::kOk && !r.ok)) {
    out.rc = kExitFailure;
  }
  return out;
}

int RunGt(const GtArgs& a) {
  util::Env& env = util::RealEnv();
  auto instances = LoadInstances(env, a.instances, a.repo);
  if (!instances.ok()) return Fail(kWho, instances.error()), kExitUsage;
  auto shard = util::ParseShard(a.shard);
  if (!shard.ok()) return Fail(kWho, shard.error()), kExitUsage;
  auto options = GtOptionsOf(env, a);
  if (!options.ok()) return Fail(kWho, options.error()), kExitUsage;
  auto parsers = Parsers(a.jobs);
  if (!parsers.ok()) return Fail(kWho, parsers.error());
  if (auto s = env.MakeDirs(a.output); !s.ok()) return Fail(kWho, s.error());
  if (auto m = MakeModel(a.model, ""); !m.ok()) return Fail(kWho, m.error()), kExitUsage;
  auto scratch = ScratchDir(a.work_dir, "gt");
  if (!scratch.ok()) return Fail(kWho, scratch.error());
  std::string work = *scratch;
  auto model = MakeModel(a.model, util::JoinPath(work, "llm"));
  if (!model.ok()) return Fail(kWho, model.error()), kExitUsage;
  options->model = model->get();
  auto p = RunInstances(*instances, a, *shard, work,
                        [&](const groundtruth::Instance& i, const std::string& dir, int worker) {
                          return GtOne(env, *(*parsers)[worker], a, *options, i, dir);
                        });
  (void)env.RemoveAll(work);
  ReportModel(kWho, model->get());
  std::string suffix = a.shard.empty() ? ".jsonl"
                                       : "." + std::to_string(shard->index) + "-of-" +
                                             std::to_string(shard->count) + ".jsonl";
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"validation", p.text}, {"files", p.text2}}) {
    if (auto s = env.WriteFileAtomic(util::JoinPath(a.output, name + suffix), text); !s.ok()) {
      return Fail(kWho, s.error());
    }
  }
  return p.rc;
}

}  // namespace

void AddGt(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<GtArgs>();
  CLI::App* cmd = app.add_subcommand(
      "gt", "Ground truth (fbkit.race-gt/1) per instance: validate, ablate, steps, issue texts");
  AddRunOptions(cmd, a.get());
  cmd->add_option("-o,--output", a->output,
                  "Output directory (ID.json, validation.jsonl, files.jsonl)")
      ->required();
  cmd->add_option("--repeat", a->repeat, "Gold runs; flaky tests are dropped (default 1)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--steps", a->steps, "Steps by instance: {instance_id, steps: [...]} records");
  cmd->add_option("--issue", a->issue,
                  "Goal and concepts by instance: {instance_id, goal, concepts}");
  AddModelOptions(cmd, &a->model, "steps, issue texts and purposes (fbkit.llm-gt/1)",
                  groundtruth::StepPrompts());
  cmd->add_flag("--no-entities", a->no_entities, "Skip the entity-level ablation");
  cmd->add_flag("--whole-files", a->whole_files,
                "Ablation reruns the F2P tests' whole files (default: only the F2P tests, when "
                "they pass alone on the gold checkout)");
  cmd->callback([a, exit_code] { *exit_code = WithSettings<GtArgs>(*a, RunGt); });
}

}  // namespace fbkit::cli::race

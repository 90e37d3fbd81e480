// fb-race score: scores agents' runs (fbkit.race-agent/1) against the ground truth offline,
// as a table, JSON or CSV, with an HTML report and an SVG waterfall on request.
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_common.h"
#include "cli/model_options.h"
#include "groundtruth/prompts.h"
#include "cli/race/commands.h"
#include "cli/race/race_common.h"
#include "groundtruth/back_infer.h"
#include "groundtruth/judge.h"
#include "groundtruth/matcher.h"
#include "groundtruth/metrics.h"
#include "groundtruth/records.h"
#include "groundtruth/report.h"
#include "parser/python_parser.h"
#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::cli::race {
namespace {

enum class ScoreFormat { kTable, kJson, kCsv };

struct ScoreArgs {
  std::vector<std::string> gt;
  std::vector<std::string> agents;
  std::string instances;
  std::string output = "-";
  ScoreFormat format = ScoreFormat::kTable;
  std::string html, svg;
  ModelArgs model;
  std::string work_dir;
  double threshold = 0.5;
  bool per_instance = false;
};

// The JSON files of `path`: itself, or the *.json files of a directory (sorted).
util::Expected<std::vector<std::string>> InputFiles(util::Env& env, const std::string& path) {
  auto st = env.Stat(path, true);
  if (!st.ok()) return st.failure();
  if (st->type != util::FileType::kDirectory) return std::vector<std::string>{path};
  auto entries = env.ListDir(path);
  if (!entries.ok()) return entries.failure();
  std::vector<std::string> out;
  for (const auto& e : *entries) {
    if (e.name.ends_with(".json")) {
      out.push_back(util::JoinPath(path, e.name));
    }
  }
  return out;
}

util::Expected<std::vector<groundtruth::GroundTruth>> LoadGroundTruths(
    util::Env& env, const std::vector<std::string>& paths) {
  std::vector<groundtruth::GroundTruth> out;
  for (const auto& p : paths) {
    auto files = InputFiles(env, p);
    if (!files.ok()) return files.failure();
    for (const auto& f : *files) {
      auto text = env.ReadFile(f);
      if (!text.ok()) return text.failure();
      auto gts = groundtruth::ParseGroundTruths(*text, f);
      if (!gts.ok()) return gts.failure();
      out.insert(out.end(), gts->begin(), gts->end());
    }
  }
  std::set<std::string> seen;
  for (const auto& g : out) {
    if (!seen.insert(g.instance_id).second) {
      return util::Error{"instance " + g.instance_id + " has two ground truths"};
    }
  }
  return out;
}

// Adds back-inferred tasks to every agent instance with a patch; problems are warnings.
int InferAll(util::Env& env, const std::string& instances_path, const std::string& work,
             std::vector<groundtruth::AgentRun>* runs) {
  auto text = env.ReadFile(instances_path);
  if (!text.ok()) return Fail(kWho, text.error()), kExitUsage;
  auto instances = groundtruth::ParseInstances(*text, instances_path);
  if (!instances.ok()) return Fail(kWho, instances.error()), kExitUsage;
  std::map<std::string, const groundtruth::Instance*> by_id;
  for (const auto& i : *instances) by_id[i.instance_id] = &i;
  auto parser = parser::PythonParser::Create();
  if (!parser.ok()) return Fail(kWho, parser.error());
  int rc = kExitOk;
  for (auto& run : *runs) {
    for (auto& a : run.instances) {
      auto it = by_id.find(a.instance_id);
      if (it == by_id.end() || a.patch.empty()) continue;
      auto s = groundtruth::BackInfer(env, sandbox::RealLauncher(), **parser, *it->second, work, &a);
      if (!s.ok()) {
        std::fprintf(stderr, "fb-race: %s: %s: %s\n", run.agent.c_str(), a.instance_id.c_str(),
                     s.error().c_str());
        rc = kExitFileErrors;
      }
    }
  }
  return rc;
}

// The agent runs named by --agent (fbkit.race-agent/1 files).
util::Expected<std::vector<groundtruth::AgentRun>> LoadRuns(util::Env& env,
                                                            const std::vector<std::string>& paths) {
  std::vector<groundtruth::AgentRun> runs;
  for (const auto& path : paths) {
    auto text = env.ReadFile(path);
    if (!text.ok()) return text.failure();
    auto run = groundtruth::ParseAgentRun(*text, path);
    if (!run.ok()) return run.failure();
    runs.push_back(std::move(*run));
  }
  return runs;
}

// Scores every run; a warning other than a missing ground truth makes `rc` kExitFileErrors.
std::vector<groundtruth::AgentScore> ScoreAll(const ScoreArgs& a, model::Model* model,
                                              const std::vector<groundtruth::GroundTruth>& gts,
                                              std::vector<groundtruth::AgentRun>* runs, int* rc) {
  groundtruth::Matcher matcher =
      model ? groundtruth::LlmMatcher(*model, groundtruth::LexicalMatcher(a.threshold))
            : groundtruth::LexicalMatcher(a.threshold);
  if (model) {
    for (auto& run : *runs) {
      for (const auto& w : groundtruth::JudgeRun(*model, gts, &run)) {
        std::fprintf(stderr, "fb-race: %s: %s\n", run.agent.c_str(), w.c_str());
        *rc = kExitFileErrors;
      }
    }
  }
  std::vector<groundtruth::AgentScore> scores;
  for (const auto& run : *runs) {
    scores.push_back(groundtruth::ScoreAgent(gts, run, matcher));
    for (const auto& w : scores.back().warnings) {
      std::fprintf(stderr, "fb-race: %s: %s\n", run.agent.c_str(), w.c_str());
      if (w.find("no ground truth") == std::string::npos) *rc = kExitFileErrors;
    }
  }
  return scores;
}

// The scores in the format asked for.
std::string FormatScores(const std::vector<groundtruth::AgentScore>& scores, const ScoreArgs& a,
                         const std::string& usage) {
  switch (a.format) {
    case ScoreFormat::kJson:
      return groundtruth::ScoresJson(scores, a.per_instance, usage);
    case ScoreFormat::kCsv:
      return groundtruth::ScoresCsv(scores);
    case ScoreFormat::kTable:
      break;
  }
  return groundtruth::ScoresTable(scores);
}

int RunScore(const ScoreArgs& a) {
  util::Env& env = util::RealEnv();
  auto gts = LoadGroundTruths(env, a.gt);
  if (!gts.ok()) return Fail(kWho, gts.error()), kExitUsage;
  auto runs = LoadRuns(env, a.agents);
  if (!runs.ok()) return Fail(kWho, runs.error()), kExitUsage;
  if (auto m = MakeModel(a.model, ""); !m.ok()) return Fail(kWho, m.error()), kExitUsage;
  auto scratch = ScratchDir(a.work_dir, "score");
  if (!scratch.ok()) return Fail(kWho, scratch.error());
  std::string work = *scratch;
  auto model = MakeModel(a.model, util::JoinPath(work, "llm"));
  if (!model.ok()) return Fail(kWho, model.error()), kExitUsage;
  int rc = kExitOk;
  if (!a.instances.empty()) rc = InferAll(env, a.instances, work, &*runs);
  if (rc == kExitUsage || rc == kExitFailure) return rc;
  std::vector<groundtruth::AgentScore> scores = ScoreAll(a, model->get(), *gts, &*runs, &rc);
  (void)env.RemoveAll(work);
  ReportModel(kWho, model->get());
  std::string usage = *model ? model::UsageJson(**model) : "";
  if (auto s = WriteOutput(env, a.output, FormatScores(scores, a, usage)); !s.ok()) {
    return Fail(kWho, s.error());
  }
  for (const auto& [path, text] :
       {std::pair{&a.html, &groundtruth::ScoresHtml}, std::pair{&a.svg, &groundtruth::ScoresSvg}}) {
    if (path->empty()) continue;
    if (auto s = env.WriteFileAtomic(*path, text(scores)); !s.ok()) return Fail(kWho, s.error());
  }
  return rc;
}

}  // namespace

void AddScore(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<ScoreArgs>();
  CLI::App* cmd = app.add_subcommand("score", "Score agents against the ground truth (offline)");
  cmd->add_option("--gt", a->gt, "Ground truth: fbkit.race-gt/1 files, JSON Lines or directories")
      ->required();
  cmd->add_option("--agent", a->agents, "An agent's run (fbkit.race-agent/1), repeatable")
      ->required();
  cmd->add_option("--instances", a->instances,
                  "Instances (repo, base_commit): back-infer tasks from the agents' patches");
  cmd->add_option("-o,--output", a->output, "Output file (default: stdout)");
  AddChoice(cmd, "--format", &a->format,
            {{"table", ScoreFormat::kTable},
             {"json", ScoreFormat::kJson},
             {"csv", ScoreFormat::kCsv}},
            "table, json or csv (default table)");
  cmd->add_option("--threshold", a->threshold,
                  "Lexical similarity needed for a semantic match (default 0.5)")
      ->check(CLI::Range(0.0, 1.0));
  AddModelOptions(cmd, &a->model,
                  "semantic matching (fbkit.llm-match/1) and judging the agent's goal and "
                  "concepts when its file has no judgements (fbkit.llm-judge/1)",
                  groundtruth::StepPrompts());
  cmd->add_flag("--per-instance", a->per_instance, "JSON: include per-instance scores");
  cmd->add_option(
      "--html", a->html,
      "Also write a self-contained HTML report: waterfall per agent and group, Table 3");
  cmd->add_option("--svg", a->svg, "Also write the waterfall picture as SVG");
  cmd->add_option("--work-dir", a->work_dir, "Scratch directory (default: under $TMPDIR)");
  cmd->callback([a, exit_code] { *exit_code = RunScore(*a); });
}

}  // namespace fbkit::cli::race

#include "cli/race_commands.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "cli/cli_common.h"
#include "cli/spec_options.h"
#include "groundtruth/assemble.h"
#include "groundtruth/entity_changes.h"
#include "groundtruth/infer.h"
#include "groundtruth/judge.h"
#include "groundtruth/lite.h"
#include "groundtruth/metrics.h"
#include "groundtruth/mine.h"
#include "groundtruth/records.h"
#include "groundtruth/report.h"
#include "groundtruth/trajectory.h"
#include "groundtruth/summarize.h"
#include "parser/python_parser.h"
#include "tracer/git.h"
#include "util/parallel.h"

namespace fbkit::cli {
namespace {

constexpr const char* kWho = "fb-race";

// --work-dir when given, else a fresh private directory under $TMPDIR (or /tmp) whose name
// no one can guess in advance.
util::Expected<std::string> ScratchDir(const std::string& given, const std::string& what) {
  if (!given.empty()) return given;
  return MakeScratchDir("race-" + what);
}

struct EntitiesArgs {
  std::string repo;
  std::string base;
  std::string patch;
  std::string output = "-";
  std::string work_dir;
};

int RunEntities(const EntitiesArgs& a) {
  util::Env& env = util::RealEnv();
  auto patch = env.ReadFile(a.patch);
  if (!patch.ok()) return Fail(kWho, patch.error()), kExitUsage;
  auto parser = parser::PythonParser::Create();
  if (!parser.ok()) return Fail(kWho, parser.error());
  auto scratch = ScratchDir(a.work_dir, "entities");
  if (!scratch.ok()) return Fail(kWho, scratch.error());
  std::string work = *scratch;
  auto versions =
      groundtruth::PatchVersions(env, tracer::RealLauncher(), a.repo, a.base, *patch, work);
  (void)env.RemoveAll(work);
  if (!versions.ok()) return Fail(kWho, a.patch + ": " + versions.error()), kExitUsage;
  auto set = groundtruth::DiffEntities(**parser, *versions);
  if (auto s = WriteOutput(env, a.output, groundtruth::ChangeSetJson(set)); !s.ok()) {
    return Fail(kWho, s.error());
  }
  return kExitOk;
}

void AddEntities(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<EntitiesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "entities", "Entity changes (new/modified/cosmetic/deleted/renamed) a patch makes");
  cmd->add_option("REPO", a->repo, "Git repository (only read)")->required();
  cmd->add_option("--base", a->base, "The commit the patch applies to")->required();
  cmd->add_option("--patch", a->patch, "The patch (unified diff)")->required();
  cmd->add_option("-o,--output", a->output, "Output JSON (default: stdout)");
  cmd->add_option("--work-dir", a->work_dir, "Scratch directory (default: under $TMPDIR)");
  cmd->callback([a, exit_code] { *exit_code = RunEntities(*a); });
}

struct ScoreArgs {
  std::vector<std::string> gt;
  std::vector<std::string> agents;
  std::string instances;
  std::string output = "-";
  std::string format = "table";
  std::string html, svg;
  std::string llm_cmd;
  std::string work_dir;
  double threshold = 0.5;
  bool per_instance = false;
};

// The JSON files of `path`: itself, or the *.json files of a directory (sorted).
util::Expected<std::vector<std::string>> InputFiles(util::Env& env, const std::string& path) {
  auto st = env.Stat(path, true);
  if (!st.ok()) return util::Error{st.error()};
  if (st->type != util::FileType::kDirectory) return std::vector<std::string>{path};
  auto entries = env.ListDir(path);
  if (!entries.ok()) return util::Error{entries.error()};
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
    if (!files.ok()) return util::Error{files.error()};
    for (const auto& f : *files) {
      auto text = env.ReadFile(f);
      if (!text.ok()) return util::Error{text.error()};
      auto gts = groundtruth::ParseGroundTruths(*text, f);
      if (!gts.ok()) return util::Error{gts.error()};
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
      auto s = groundtruth::BackInfer(env, tracer::RealLauncher(), **parser, *it->second, work, &a);
      if (!s.ok()) {
        std::fprintf(stderr, "fb-race: %s: %s: %s\n", run.agent.c_str(), a.instance_id.c_str(),
                     s.error().c_str());
        rc = kExitFileErrors;
      }
    }
  }
  return rc;
}

int RunScore(const ScoreArgs& a) {
  util::Env& env = util::RealEnv();
  auto gts = LoadGroundTruths(env, a.gt);
  if (!gts.ok()) return Fail(kWho, gts.error()), kExitUsage;
  std::vector<groundtruth::AgentRun> runs;
  for (const auto& path : a.agents) {
    auto text = env.ReadFile(path);
    if (!text.ok()) return Fail(kWho, text.error()), kExitUsage;
    auto run = groundtruth::ParseAgentRun(*text, path);
    if (!run.ok()) return Fail(kWho, run.error()), kExitUsage;
    runs.push_back(std::move(*run));
  }
  auto scratch = ScratchDir(a.work_dir, "score");
  if (!scratch.ok()) return Fail(kWho, scratch.error());
  std::string work = *scratch;
  int rc = kExitOk;
  if (!a.instances.empty()) rc = InferAll(env, a.instances, work, &runs);
  if (rc == kExitUsage || rc == kExitFailure) return rc;
  groundtruth::Matcher matcher =
      a.llm_cmd.empty() ? groundtruth::LexicalMatcher(a.threshold)
                        : groundtruth::LlmMatcher(env, tracer::RealLauncher(), a.llm_cmd, work);
  if (!a.llm_cmd.empty()) {
    for (auto& run : runs) {
      for (const auto& w :
           groundtruth::JudgeRun(env, tracer::RealLauncher(), a.llm_cmd, work, *gts, &run)) {
        std::fprintf(stderr, "fb-race: %s: %s\n", run.agent.c_str(), w.c_str());
        rc = kExitFileErrors;
      }
    }
  }
  std::vector<groundtruth::AgentScore> scores;
  for (const auto& run : runs) {
    scores.push_back(groundtruth::ScoreAgent(*gts, run, matcher));
    for (const auto& w : scores.back().warnings) {
      std::fprintf(stderr, "fb-race: %s: %s\n", run.agent.c_str(), w.c_str());
      if (w.find("no ground truth") == std::string::npos) rc = kExitFileErrors;
    }
  }
  (void)env.RemoveAll(work);
  std::string out = a.format == "json"  ? groundtruth::ScoresJson(scores, a.per_instance)
                    : a.format == "csv" ? groundtruth::ScoresCsv(scores)
                                        : groundtruth::ScoresTable(scores);
  if (auto s = WriteOutput(env, a.output, out); !s.ok()) return Fail(kWho, s.error());
  for (const auto& [path, text] :
       {std::pair{&a.html, &groundtruth::ScoresHtml}, std::pair{&a.svg, &groundtruth::ScoresSvg}}) {
    if (path->empty()) continue;
    if (auto s = env.WriteFileAtomic(*path, text(scores)); !s.ok()) return Fail(kWho, s.error());
  }
  return rc;
}

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
  cmd->add_option("--format", a->format, "table, json or csv (default table)")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("--threshold", a->threshold,
                  "Lexical similarity needed for a semantic match (default 0.5)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--llm-cmd", a->llm_cmd,
                  "Command for semantic matching (fbkit.llm-match/1) and for judging the agent's "
                  "goal and concepts when its file has no judgements (fbkit.llm-judge/1)");
  cmd->add_flag("--per-instance", a->per_instance, "JSON: include per-instance scores");
  cmd->add_option(
      "--html", a->html,
      "Also write a self-contained HTML report: waterfall per agent and group, Table 3");
  cmd->add_option("--svg", a->svg, "Also write the waterfall picture as SVG");
  cmd->add_option("--work-dir", a->work_dir, "Scratch directory (default: under $TMPDIR)");
  cmd->callback([a, exit_code] { *exit_code = RunScore(*a); });
}

// Options shared by the commands that run tests.
struct RunArgs {
  std::string instances;
  std::string output;
  std::string work_dir;
  SpecArgs spec;
  groundtruth::RunSettings settings;  // resolved from `spec` before the command runs
  int repeat = 1;
  int jobs = 1;
  std::string shard;
  bool quiet = false;
};

void AddRunOptions(CLI::App* cmd, RunArgs* a) {
  cmd->add_option("-j,--jobs", a->jobs,
                  "Instances run at once (default 1); output order is the input's")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--shard", a->shard,
                  "K/N: only instances i (0-based, input order) with i % N == K-1");
  cmd->add_option(
         "INSTANCES", a->instances,
         "Instances {instance_id, repo, base_commit, patch, test_patch} (JSON or JSON Lines)")
      ->required();
  AddSpecOptions(cmd, &a->spec, kSpecRun);
  cmd->add_option("--work-dir", a->work_dir, "Scratch directory (default: under $TMPDIR)");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
}

// The instances, with repository paths made absolute; a missing repository is left as
// given (its instance then fails on its own).
util::Expected<std::vector<groundtruth::Instance>> LoadInstances(util::Env& env,
                                                                 const std::string& path) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return util::Error{text.error()};
  auto instances = groundtruth::ParseInstances(*text, path);
  if (!instances.ok()) return util::Error{instances.error()};
  for (auto& i : *instances) {
    if (auto real = env.RealPath(i.repo); real.ok()) i.repo = *real;
  }
  return instances;
}

// "a/b c" -> "a__b_c": an instance id as a file name.
std::string FileName(const std::string& id) {
  std::string out;
  for (char c : id) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    out += c == '/' ? std::string("__") : std::string(1, ok ? c : '_');
  }
  return out;
}

void Note(bool quiet, const std::string& cmd, const std::string& id, const std::string& what) {
  if (!quiet) std::fprintf(stderr, "fb-race %s: %s: %s\n", cmd.c_str(), id.c_str(), what.c_str());
}

std::string Summary(const groundtruth::Validation& v) {
  if (v.status != "ok") return v.status + ": " + v.reason;
  return "ok (FAIL_TO_PASS " + std::to_string(v.fail_to_pass.size()) + ", PASS_TO_PASS " +
         std::to_string(v.pass_to_pass.size()) + ")";
}

// What one instance's run gives: output lines (two streams) and an exit code.
struct Out {
  std::string text, text2;
  int rc = kExitOk;
};

// The instances of the shard, run `jobs` at a time: fn(instance, its scratch dir, worker);
// texts are joined in input order, the exit code is the largest.
Out RunInstances(
    const std::vector<groundtruth::Instance>& all, const RunArgs& a,
    const std::pair<int, int>& shard, const std::string& work,
    const std::function<Out(const groundtruth::Instance&, const std::string&, int)>& fn) {
  std::vector<const groundtruth::Instance*> mine;
  for (size_t i = 0; i < all.size(); ++i) {
    if (InShard(i, shard)) mine.push_back(&all[i]);
  }
  std::vector<Out> out(mine.size());
  util::ParallelFor(mine.size(), a.jobs, [&](size_t k, int worker) {
    out[k] = fn(*mine[k], util::JoinPath(work, std::to_string(k)), worker);
  });
  Out all_out;
  for (const auto& o : out) {
    all_out.text += o.text;
    all_out.text2 += o.text2;
    all_out.rc = std::max(all_out.rc, o.rc);
  }
  return all_out;
}

// One parser per worker (tree-sitter parsers are not shared between threads).
util::Expected<std::vector<std::unique_ptr<parser::PythonParser>>> Parsers(int jobs) {
  std::vector<std::unique_ptr<parser::PythonParser>> out;
  for (int i = 0; i < jobs; ++i) {
    auto p = parser::PythonParser::Create();
    if (!p.ok()) return util::Error{p.error()};
    out.push_back(std::move(*p));
  }
  return out;
}

int RunValidate(const RunArgs& a) {
  util::Env& env = util::RealEnv();
  auto instances = LoadInstances(env, a.instances);
  if (!instances.ok()) return Fail(kWho, instances.error()), kExitUsage;
  auto shard = ParseShard(a.shard);
  if (!shard.ok()) return Fail(kWho, shard.error()), kExitUsage;
  auto scratch = ScratchDir(a.work_dir, "validate");
  if (!scratch.ok()) return Fail(kWho, scratch.error());
  std::string work = *scratch;
  auto p = RunInstances(*instances, a, *shard, work,
                        [&](const groundtruth::Instance& i, const std::string& dir, int) {
                          auto v = groundtruth::Validate(env, tracer::RealLauncher(), i, a.settings,
                                                         a.repeat, dir);
                          Note(a.quiet, "validate", i.instance_id, Summary(v));
                          return Out{groundtruth::ValidationJson(v), "",
                                     v.status == "error" ? kExitFailure : kExitOk};
                        });
  (void)env.RemoveAll(work);
  if (auto s = WriteOutput(env, a.output.empty() ? "-" : a.output, p.text); !s.ok()) {
    return Fail(kWho, s.error());
  }
  return p.rc;
}

struct FilesArgs : RunArgs {
  std::string validation;
  bool no_entities = false;
  bool whole_files = false;
};

// FAIL_TO_PASS per instance from an earlier `fb-race validate` output.
util::Expected<std::map<std::string, std::vector<std::string>>> LoadF2p(util::Env& env,
                                                                        const std::string& path) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return util::Error{text.error()};
  auto gts = groundtruth::ParseGroundTruths(*text, path);
  if (!gts.ok()) return util::Error{gts.error()};
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& g : *gts) out[g.instance_id] = g.fail_to_pass;
  return out;
}

int RunFiles(const FilesArgs& a) {
  util::Env& env = util::RealEnv();
  auto instances = LoadInstances(env, a.instances);
  if (!instances.ok()) return Fail(kWho, instances.error()), kExitUsage;
  auto shard = ParseShard(a.shard);
  if (!shard.ok()) return Fail(kWho, shard.error()), kExitUsage;
  std::map<std::string, std::vector<std::string>> f2p;
  if (!a.validation.empty()) {
    auto loaded = LoadF2p(env, a.validation);
    if (!loaded.ok()) return Fail(kWho, loaded.error()), kExitUsage;
    f2p = std::move(*loaded);
  }
  auto parsers = Parsers(a.jobs);
  if (!parsers.ok()) return Fail(kWho, parsers.error());
  auto scratch = ScratchDir(a.work_dir, "files");
  if (!scratch.ok()) return Fail(kWho, scratch.error());
  std::string work = *scratch;
  auto p = RunInstances(
      *instances, a, *shard, work,
      [&](const groundtruth::Instance& i, const std::string& dir, int worker) {
        auto it = f2p.find(i.instance_id);
        std::vector<std::string> tests;
        if (it != f2p.end()) {
          tests = it->second;
        } else {
          tests = groundtruth::Validate(env, tracer::RealLauncher(), i, a.settings, a.repeat, dir)
                      .fail_to_pass;
        }
        auto l = groundtruth::Localize(env, tracer::RealLauncher(), *(*parsers)[worker], i,
                                       a.settings, tests, !a.no_entities, dir, a.whole_files);
        Note(a.quiet, "files", i.instance_id,
             l.error.empty() ? "necessary " + std::to_string(l.necessary.size()) + ", other " +
                                   std::to_string(l.other.size()) + ", unknown " +
                                   std::to_string(l.unknown.size())
                             : "error: " + l.error);
        return Out{groundtruth::LocalizationJson(l), "", l.error.empty() ? kExitOk : kExitFailure};
      });
  (void)env.RemoveAll(work);
  if (auto s = WriteOutput(env, a.output.empty() ? "-" : a.output, p.text); !s.ok()) {
    return Fail(kWho, s.error());
  }
  return p.rc;
}

struct GtArgs : RunArgs {
  bool whole_files = false;
  std::string steps;
  std::string issue;
  std::string llm_cmd;
  bool no_entities = false;
};

util::Expected<groundtruth::GtOptions> GtOptionsOf(util::Env& env, const GtArgs& a) {
  groundtruth::GtOptions o;
  o.settings = a.settings;
  o.repeat = a.repeat;
  o.entities = !a.no_entities;
  o.whole_files = a.whole_files;
  o.llm_cmd = a.llm_cmd;
  if (!a.steps.empty()) {
    auto text = env.ReadFile(a.steps);
    if (!text.ok()) return util::Error{text.error()};
    auto steps = groundtruth::ParseStepsFile(*text, a.steps);
    if (!steps.ok()) return util::Error{steps.error()};
    o.steps = std::move(*steps);
  }
  if (!a.issue.empty()) {
    auto text = env.ReadFile(a.issue);
    if (!text.ok()) return util::Error{text.error()};
    auto issues = groundtruth::ParseIssueFile(*text, a.issue);
    if (!issues.ok()) return util::Error{issues.error()};
    o.issues = std::move(*issues);
  }
  return o;
}

// One instance's ground truth: writes ID.json, reports progress; returns the validation and
// files lines and the exit code.
Out GtOne(util::Env& env, parser::PythonParser& parser, const GtArgs& a,
          const groundtruth::GtOptions& options, const groundtruth::Instance& i,
          const std::string& dir) {
  auto r = groundtruth::BuildGroundTruth(env, tracer::RealLauncher(), parser, i, options, dir);
  Out out{groundtruth::ValidationJson(r.validation), "", kExitOk};
  if (r.validation.status == "ok") out.text2 = groundtruth::LocalizationJson(r.localization);
  std::string path = util::JoinPath(a.output, FileName(i.instance_id) + ".json");
  (void)env.RemoveAll(path);
  if (r.ok) {
    if (auto s = env.WriteFileAtomic(path, groundtruth::GroundTruthJson(r.gt)); !s.ok()) {
      Note(false, "gt", i.instance_id, s.error());
      out.rc = kExitFailure;
      return out;
    }
  }
  std::string what = r.validation.status != "ok" ? Summary(r.validation)
                     : !r.ok                     ? "error: " + r.localization.error
                             : "ok (necessary " + std::to_string(r.gt.necessary.size()) +
                                   ", tasks " + std::to_string(r.gt.tasks.size()) + ", steps " +
                                   std::to_string(r.gt.steps.size()) + ")";
  Note(a.quiet, "gt", i.instance_id, what);
  for (const auto& p : r.problems) {
    std::fprintf(stderr, "fb-race gt: %s: %s\n", i.instance_id.c_str(), p.c_str());
    out.rc = std::max(out.rc, static_cast<int>(kExitFileErrors));
  }
  if (r.validation.status == "error" || (r.validation.status == "ok" && !r.ok)) {
    out.rc = kExitFailure;
  }
  return out;
}

int RunGt(const GtArgs& a) {
  util::Env& env = util::RealEnv();
  auto instances = LoadInstances(env, a.instances);
  if (!instances.ok()) return Fail(kWho, instances.error()), kExitUsage;
  auto shard = ParseShard(a.shard);
  if (!shard.ok()) return Fail(kWho, shard.error()), kExitUsage;
  auto options = GtOptionsOf(env, a);
  if (!options.ok()) return Fail(kWho, options.error()), kExitUsage;
  auto parsers = Parsers(a.jobs);
  if (!parsers.ok()) return Fail(kWho, parsers.error());
  if (auto s = env.MakeDirs(a.output); !s.ok()) return Fail(kWho, s.error());
  auto scratch = ScratchDir(a.work_dir, "gt");
  if (!scratch.ok()) return Fail(kWho, scratch.error());
  std::string work = *scratch;
  auto p = RunInstances(*instances, a, *shard, work,
                        [&](const groundtruth::Instance& i, const std::string& dir, int worker) {
                          return GtOne(env, *(*parsers)[worker], a, *options, i, dir);
                        });
  (void)env.RemoveAll(work);
  std::string suffix = a.shard.empty() ? ".jsonl"
                                       : "." + std::to_string(shard->first) + "-of-" +
                                             std::to_string(shard->second) + ".jsonl";
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"validation", p.text}, {"files", p.text2}}) {
    if (auto s = env.WriteFileAtomic(util::JoinPath(a.output, name + suffix), text); !s.ok()) {
      return Fail(kWho, s.error());
    }
  }
  return p.rc;
}

struct LiteArgs {
  std::vector<std::string> results;
  size_t size = 100;
  uint64_t seed = 42;
  int iterations = 100000;
  std::string output = "-";
};

int RunLite(const LiteArgs& a) {
  util::Env& env = util::RealEnv();
  std::vector<groundtruth::AgentRun> runs;
  for (const auto& path : a.results) {
    auto text = env.ReadFile(path);
    if (!text.ok()) return Fail(kWho, text.error()), kExitUsage;
    auto run = groundtruth::ParseAgentRun(*text, path);
    if (!run.ok()) return Fail(kWho, run.error()), kExitUsage;
    runs.push_back(std::move(*run));
  }
  auto r = groundtruth::ChooseLite(runs, a.size, a.seed, a.iterations);
  if (!r.ok()) return Fail(kWho, r.error()), kExitUsage;
  std::fprintf(stderr,
               "fb-race lite: %zu instances, deviation reached %.6f (largest rate difference; "
               "random start %.6f)\n",
               r->instances.size(), r->max_deviation, r->start_max_deviation);
  if (auto s = WriteOutput(env, a.output, groundtruth::LiteJson(*r, a.seed)); !s.ok()) {
    return Fail(kWho, s.error());
  }
  return kExitOk;
}

// Resolves the run settings (--spec and the overriding options), then runs the command.
template <typename Args>
int WithSettings(Args& a, int (*run)(const Args&)) {
  auto spec = ResolveSpec(a.spec, "");
  if (!spec.ok()) return Fail(kWho, spec.error()), kExitUsage;
  a.settings = std::move(*spec);
  return run(a);
}

void AddValidate(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "Execution filtering: FAIL_TO_PASS / PASS_TO_PASS of each instance");
  AddRunOptions(cmd, a.get());
  cmd->add_option("-o,--output", a->output, "Output JSON Lines (default: stdout)");
  cmd->add_option("--repeat", a->repeat,
                  "Gold runs; tests whose outcome varies are flaky (default 1)")
      ->check(CLI::Range(1, 100));
  cmd->callback([a, exit_code] { *exit_code = WithSettings<RunArgs>(*a, RunValidate); });
}

void AddFiles(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<FilesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "files", "File localisation by ablation: necessary, other, test files; entity necessity");
  AddRunOptions(cmd, a.get());
  cmd->add_option("-o,--output", a->output, "Output JSON Lines (default: stdout)");
  cmd->add_option("--validation", a->validation,
                  "FAIL_TO_PASS from `fb-race validate` (default: validate first)");
  cmd->add_option("--repeat", a->repeat, "Gold runs when validating (default 1)")
      ->check(CLI::Range(1, 100));
  cmd->add_flag("--no-entities", a->no_entities, "Skip the entity-level ablation");
  cmd->add_flag("--whole-files", a->whole_files,
                "Ablation reruns the F2P tests' whole files (default: only the F2P tests, when "
                "they pass alone on the gold checkout)");
  cmd->callback([a, exit_code] { *exit_code = WithSettings<FilesArgs>(*a, RunFiles); });
}

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
  cmd->add_option("--llm-cmd", a->llm_cmd, "Command for steps and issue texts (fbkit.llm-gt/1)");
  cmd->add_flag("--no-entities", a->no_entities, "Skip the entity-level ablation");
  cmd->add_flag("--whole-files", a->whole_files,
                "Ablation reruns the F2P tests' whole files (default: only the F2P tests, when "
                "they pass alone on the gold checkout)");
  cmd->callback([a, exit_code] { *exit_code = WithSettings<GtArgs>(*a, RunGt); });
}

void AddLite(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<LiteArgs>();
  CLI::App* cmd = app.add_subcommand(
      "lite", "Choose a Lite subset matching every configuration's resolved and apply rates");
  cmd->add_option("--results", a->results, "Agent runs (fbkit.race-agent/1) with applied/resolved")
      ->required();
  cmd->add_option("--size", a->size, "Instances to choose (default 100)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", a->seed, "Seed (default 42)");
  cmd->add_option("--iterations", a->iterations, "Swaps to try (default 100000)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-o,--output", a->output, "Output JSON (default: stdout)");
  cmd->callback([a, exit_code] { *exit_code = RunLite(*a); });
}

struct MineArgs {
  std::string repo;
  std::string output = "-";
  std::string report;
  std::string work_dir;
  std::string name;
  std::vector<std::string> intents = {"new feature"};
  groundtruth::MineOptions options;
  bool quiet = false;
};

void MineProgress(const std::string& line) {
  std::fprintf(stderr, "fb-race mine: %s\n", line.c_str());
}

int RunMine(MineArgs& a) {
  util::Env& env = util::RealEnv();
  auto repo = env.RealPath(a.repo);
  if (!repo.ok()) return Fail(kWho, a.repo + ": " + repo.error()), kExitUsage;
  auto parser = parser::PythonParser::Create();
  if (!parser.ok()) return Fail(kWho, parser.error());
  auto scratch = ScratchDir(a.work_dir, "mine");
  if (!scratch.ok()) return Fail(kWho, scratch.error());
  std::string work = *scratch;
  tracer::Git git(env, tracer::RealLauncher(), work);
  if (auto top = git.Run(*repo, {"rev-parse", "--git-dir"}); !top.ok()) {
    (void)env.RemoveAll(work);
    return Fail(kWho, a.repo + ": not a git repository"), kExitUsage;
  }
  a.options.repo_name = a.name.empty() ? tracer::RepoName(git, *repo) : a.name;
  a.options.intents.clear();
  for (const auto& i : a.intents) {
    if (i != "any") a.options.intents.push_back(i);
  }
  auto r = groundtruth::Mine(env, tracer::RealLauncher(), **parser, *repo, a.options, work,
                             a.quiet ? nullptr : MineProgress);
  (void)env.RemoveAll(work);
  if (!r.ok()) return Fail(kWho, a.repo + ": " + r.error()), kExitUsage;
  if (!a.quiet) std::fputs(groundtruth::MineReportText(r->report).c_str(), stderr);
  int rc = kExitOk;
  for (const auto& w : r->report.warnings) {
    std::fprintf(stderr, "fb-race mine: %s\n", w.c_str());
    rc = kExitFileErrors;
  }
  if (auto s = WriteOutput(env, a.output, groundtruth::MinedJsonl(r->prs, *repo)); !s.ok()) {
    return Fail(kWho, s.error());
  }
  if (!a.report.empty()) {
    if (auto s = WriteOutput(env, a.report, groundtruth::MineReportJson(r->report)); !s.ok()) {
      return Fail(kWho, s.error());
    }
  }
  return rc;
}

void AddMine(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<MineArgs>();
  CLI::App* cmd = app.add_subcommand(
      "mine",
      "Candidate feature PRs from a repository's local history, as instances validate/gt read");
  cmd->footer(
      "A PR is a merge commit 'Merge pull request #N' or a commit (merge or squash) whose subject\n"
      "ends in '(#N)', on the first-parent history of --ref; its change is the diff against the\n"
      "first parent. It is kept when it changes a test file and a non-test Python source file,\n"
      "and its intent is one of --intent. Intent rule (without --llm-cmd): a conventional prefix\n"
      "(feat:, fix:, docs:, refactor:, chore:) decides; else title words: "
      "fix/bug/crash/regression\n"
      "-> bug fix; add/support/new/allow/implement/introduce/enable -> new feature; refactor/\n"
      "rename/move/simplify/cleanup -> refactor; doc/docs/typo -> docs; else a new public\n"
      "function or class in the source files -> new feature; else other. The funnel goes to\n"
      "stderr (and --report).");
  cmd->add_option("REPO", a->repo, "Git repository (only read)")->required();
  cmd->add_option("-o,--output", a->output, "Instances, JSON Lines (default: stdout)");
  cmd->add_option("--report", a->report, "The funnel as JSON (fbkit.race-mine/1)");
  cmd->add_option("--since", a->options.since, "Only commits after this date (git's --since)");
  cmd->add_option("--until", a->options.until, "Only commits before this date (git's --until)");
  cmd->add_option("--last", a->options.last, "Only the newest N first-parent commits")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max", a->options.max, "Write at most N PRs, newest first (default: all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--intent", a->intents,
                  "Intents kept, repeatable: 'new feature' (default), 'bug fix', refactor, docs, "
                  "other, or any")
      ->check(CLI::IsMember({"new feature", "bug fix", "refactor", "docs", "other", "any"}));
  cmd->add_option("--name", a->name,
                  "owner/name for instance ids (owner__name-PR; default: from the origin remote)");
  cmd->add_flag("--require-issue", a->options.require_issue,
                "Keep only PRs whose messages refer to an issue (#N, fixes #N, .../issues/N)");
  cmd->add_option("--ref", a->options.ref, "The history to walk (default HEAD)");
  cmd->add_option("--llm-cmd", a->options.llm_cmd,
                  "Command classifying intent (fbkit.llm-mine/1 classify_intent)");
  cmd->add_option("--work-dir", a->work_dir, "Scratch directory (default: under $TMPDIR)");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress or funnel on stderr");
  cmd->callback([a, exit_code] { *exit_code = RunMine(*a); });
}

struct SummarizeArgs {
  std::string runs;
  std::vector<std::string> reports;
  std::string format = "auto";
  std::string agent;
  std::string llm_cmd;
  std::string output = "-";
  std::string work_dir;
  bool quiet = false;
};

// The trajectories of one file, or a warning.
util::Expected<std::vector<groundtruth::Trajectory>> ReadOneRun(util::Env& env,
                                                                const std::string& file,
                                                                const std::string& display,
                                                                const std::string& format) {
  auto text = env.ReadFile(file);
  if (!text.ok()) return util::Error{text.error()};
  std::string f = format == "auto" ? groundtruth::DetectFormat(*text, file) : format;
  if (f.empty()) {
    return util::Error{display + ": not a trajectory of mini-swe-agent, swe-agent, openhands, "
                                 "claude-code, codex or gemini-cli"};
  }
  const auto& cli = groundtruth::AgentCliReaders();
  bool stream = std::any_of(cli.begin(), cli.end(), [&](const auto& r) { return r.first == f; });
  if (!stream) {
    auto read = groundtruth::ReadTrajectories(*text, display, f);
    if (read.ok()) {
      for (auto& t : *read) groundtruth::AddInferRunContext(env, file, &t);
    }
    return read;
  }
  auto t = groundtruth::ReadAgentStream(env, *text, file, display, f);
  if (!t.ok()) return util::Error{t.error()};
  return std::vector<groundtruth::Trajectory>{std::move(*t)};
}

// --swebench-report: a report file, or the report.json files under a directory.
int ApplyReports(util::Env& env, const std::string& path, std::vector<groundtruth::Summary>* all) {
  auto files = groundtruth::FilesUnder(
      env, path, [](const std::string& name) { return name == "report.json"; });
  if (!files.ok()) return Fail(kWho, "--swebench-report: " + files.error()), kExitUsage;
  for (const auto& f : *files) {
    auto text = env.ReadFile(f);
    if (!text.ok()) return Fail(kWho, text.error()), kExitUsage;
    auto n = groundtruth::ApplyEvaluation(*text, f, all);
    if (!n.ok()) return Fail(kWho, n.error()), kExitUsage;
  }
  return kExitOk;
}

int RunSummarize(const SummarizeArgs& a) {
  util::Env& env = util::RealEnv();
  auto files = groundtruth::TrajectoryFiles(env, a.runs);
  if (!files.ok()) return Fail(kWho, a.runs + ": " + files.error()), kExitUsage;
  if (files->empty())
    return Fail(kWho, a.runs + ": no trajectory files (*.traj.json, *.traj, output.jsonl)"),
           kExitUsage;
  std::string base = a.runs;
  while (base.size() > 1 && base.ends_with("/")) base.pop_back();
  std::string agent = a.agent.empty() ? base.substr(base.find_last_of('/') + 1) : a.agent;
  std::vector<groundtruth::Summary> all;
  std::set<std::string> seen;
  int rc = kExitOk;
  for (const auto& file : *files) {
    std::string display = file.starts_with(base + "/") ? file.substr(base.size() + 1) : file;
    auto read = ReadOneRun(env, file, display, a.format);
    if (!read.ok()) {
      std::fprintf(stderr, "fb-race summarize: %s\n", read.error().c_str());
      rc = kExitFileErrors;
      continue;
    }
    for (auto& t : *read) {
      if (!seen.insert(t.instance_id).second) {
        std::fprintf(stderr, "fb-race summarize: %s: instance %s seen before (ignored)\n",
                     display.c_str(), t.instance_id.c_str());
        rc = kExitFileErrors;
        continue;
      }
      groundtruth::Summary s;
      s.agent.instance_id = t.instance_id;
      s.agent.patch = t.patch;
      s.trajectory = std::move(t);
      all.push_back(std::move(s));
    }
  }
  for (const auto& report : a.reports) {
    if (int r = ApplyReports(env, report, &all); r != kExitOk) return r;
  }
  if (!a.llm_cmd.empty()) {
    auto scratch = ScratchDir(a.work_dir, "summarize");
    if (!scratch.ok()) return Fail(kWho, scratch.error());
    std::string work = *scratch;
    for (const auto& w :
         groundtruth::SummarizeAll(env, tracer::RealLauncher(), a.llm_cmd, agent, work, &all)) {
      std::fprintf(stderr, "fb-race summarize: %s\n", w.c_str());
      rc = kExitFileErrors;
    }
    (void)env.RemoveAll(work);
  }
  if (!a.quiet) {
    std::fprintf(stderr, "fb-race summarize: %zu instances from %zu files (agent %s)\n", all.size(),
                 files->size(), agent.c_str());
  }
  if (all.empty()) return Fail(kWho, a.runs + ": no instance could be read");
  if (auto s = WriteOutput(env, a.output, groundtruth::AgentRunJson(agent, all)); !s.ok()) {
    return Fail(kWho, s.error());
  }
  return rc;
}

void AddSummarize(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<SummarizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "summarize", "Agents' trajectory files into an agent run (fbkit.race-agent/1) for score");
  cmd->footer(
      "Reads mini-swe-agent (*.traj.json), SWE-agent (*.traj, 0.x and 1.x) and OpenHands\n"
      "(output.jsonl) runs, and `fb-extract infer --agent` run directories (claude-code,\n"
      "codex and gemini-cli streams, RUN_DIR/<id>/output/<agent>.jsonl, with the instance's\n"
      "patch.diff). Without a model: the final patch, the files the agent opened and\n"
      "edited (from its tool calls and shell commands, relative to its repository root),\n"
      "tokens, API calls, cost and exit status, under \"trajectory\". With --llm-cmd\n"
      "(fbkit.llm-summarize/1 summarize_trajectory): goal, concepts, files, tasks and steps.");
  cmd->add_option("RUNS", a->runs, "A run directory (searched recursively) or one trajectory file")
      ->required();
  cmd->add_option("--format", a->format, "auto (default), mini-swe-agent, swe-agent, openhands, claude-code, codex or gemini-cli")
      ->check(CLI::IsMember({"auto", "mini-swe-agent", "swe-agent", "openhands", "claude-code",
                             "codex", "gemini-cli"}));
  cmd->add_option("--agent", a->agent, "The agent's name (default: RUNS's name)");
  cmd->add_option("--llm-cmd", a->llm_cmd, "Summarizer command (fbkit.llm-summarize/1)");
  cmd->add_option("--swebench-report", a->reports,
                  "applied/resolved from a SWE-bench evaluation: its run report "
                  "(<model>.<run_id>.json) or report.json files (a directory is searched); "
                  "repeatable");
  cmd->add_option("-o,--output", a->output, "Output JSON (default: stdout)");
  cmd->add_option("--work-dir", a->work_dir, "Scratch directory (default: under $TMPDIR)");
  cmd->add_flag("-q,--quiet", a->quiet, "No summary line on stderr");
  cmd->callback([a, exit_code] { *exit_code = RunSummarize(*a); });
}

}  // namespace

void AddRaceCommands(CLI::App& app, int* exit_code) {
  AddEntities(app, exit_code);
  AddScore(app, exit_code);
  AddValidate(app, exit_code);
  AddFiles(app, exit_code);
  AddGt(app, exit_code);
  AddLite(app, exit_code);
  AddMine(app, exit_code);
  AddSummarize(app, exit_code);
}

}  // namespace fbkit::cli

#include "cli/extract_commands.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/cli_common.h"
#include "cli/extract_common.h"
#include "cli/spec_options.h"
#include "extract/make/all.h"
#include "cli/model_options.h"
#include "extract/make/llm.h"
#include "extract/make/prompts.h"
#include "extract/make/task.h"
#include "extract/make/top_model.h"
#include "extract/taskdir/task_dir.h"
#include "extract/make/workspace.h"
#include "parser/python_parser.h"
#include "util/json_writer.h"
#include "util/shard.h"

namespace fbkit::cli {
namespace {

struct ExtractArgs {
  std::string root;
  std::string graph;
  std::string trace;
  std::string output;
  std::vector<std::string> f2p;
  std::string repo_name;
  std::string after;
  ModelArgs model;
  std::string shard;
  std::string id_scheme = "featurebench";
  std::vector<std::string> excludes;
  SpecArgs spec;
  extract::make::SelectOptions select;
  std::string top_model;  // --top-model FILE
  int min_points = 10;
  int min_lines = 100;
  double f2p_max_pass = 0.3;
  bool no_verify = false;
  bool no_l2 = false;
  bool strict_references = false;
  bool rerun = false;
  bool quiet = false;
  bool facts = false;  // tops --facts
  int jobs = 1;
};

// The model of --top-model (null without one: the chooser takes the one fbkit ships).
util::Expected<std::shared_ptr<const extract::make::TopModel>> LoadTopModel(const ExtractArgs& a) {
  if (a.top_model.empty()) return std::shared_ptr<const extract::make::TopModel>();
  auto text = util::RealEnv().ReadFile(a.top_model);
  if (!text.ok()) return util::Error{"--top-model: " + text.error()};
  auto m = extract::make::ParseTopModel(*text, a.top_model);
  if (!m.ok()) return m.failure();
  return std::make_shared<const extract::make::TopModel>(std::move(*m));
}

// The workspace of ROOT with the command line's options set.
util::Expected<extract::make::Workspace> Load(const ExtractArgs& a) {
  util::Env& env = util::RealEnv();
  auto root = env.RealPath(a.root);
  if (!root.ok()) return root.failure();
  auto spec = ResolveSpec(a.spec, *root);
  if (!spec.ok()) return spec.failure();
  if (auto s = PrepareEnvironment(*spec, *root, "fb-extract", a.quiet); !s.ok()) {
    return s.failure();
  }
  auto w = extract::make::LoadWorkspace(env, sandbox::RealLauncher(),
                                  {*root, a.graph, a.trace, a.output, std::move(*spec), a.excludes,
                                   UserCacheDir(""), a.repo_name});
  if (!w.ok()) return w.failure();
  if (w->trace.mode == tracer::TraceMode::kSession && !a.quiet) {
    std::fprintf(stderr,
                 "note: %s was recorded in one pytest session: a test file that passes only "
                 "after other files ran (order-dependent) counts as passing and fails "
                 "verification; `fb-graph trace --isolate` runs each file alone, as "
                 "FeatureBench does\n",
                 a.trace.c_str());
  }
  extract::make::ExtractOptions& o = w->options;
  if (!o.untracked.empty() && !a.quiet) {
    std::string some;
    for (size_t i = 0; i < o.untracked.size() && i < 5; ++i) some += (i ? ", " : "") + o.untracked[i];
    std::fprintf(stderr,
                 "warning: %zu file%s of %s git does not track %s left out of every task's "
                 "presolved/ (%s%s); commit what the tasks need\n",
                 o.untracked.size(), o.untracked.size() == 1 ? "" : "s", a.root.c_str(),
                 o.untracked.size() == 1 ? "is" : "are", some.c_str(),
                 o.untracked.size() > 5 ? ", ..." : "");
  }
  o.select = a.select;
  if (auto m = LoadTopModel(a); !m.ok()) {
    return m.failure();
  } else {
    o.select.model = *m;
  }
  o.min_lines = a.min_lines;
  o.verify = !a.no_verify;
  o.f2p_max_pass = a.f2p_max_pass;
  o.level2 = !a.no_l2;
  o.strict_references = a.strict_references;
  using extract::make::IdScheme;
  o.id_scheme = a.id_scheme == "fbkit" ? IdScheme::kFbkit : IdScheme::kFeatureBench;
  auto model = MakeModel(a.model, util::JoinPath(o.out_dir, ".work/llm"));
  if (!model.ok()) return model.failure();
  if (*model) {
    o.model = *model;
    o.chooser = extract::make::LlmTopChooser(*o.model, *w->repo);
    o.statement_model = extract::make::LlmStatementModel(*o.model, *w->repo, o.repo_name);
  }
  return w;
}

void PrintOutcome(const extract::make::TaskOutcome& o) {
  if (o.emitted) {
    std::string ids;
    for (const auto& id : o.instance_ids) ids += " " + id;
    std::fprintf(stderr, "  emitted %s (%d lines):%s%s%s\n", o.f2p.c_str(), o.lines, ids.c_str(),
                 o.detail.empty() ? "" : "\n    note: ", o.detail.c_str());
    for (const auto& r : o.repairs) std::fprintf(stderr, "    repaired: %s\n", r.c_str());
    for (const auto& t : o.flaky) std::fprintf(stderr, "    flaky, left out: %s\n", t.c_str());
  } else {
    std::fprintf(stderr, "  rejected %s: %s: %s\n", o.f2p.c_str(),
                 std::string(extract::make::RejectionName(o.rejection)).c_str(), o.detail.c_str());
    for (const auto& r : o.repairs) {
      std::fprintf(stderr, "    repaired, to no avail: %s\n", r.c_str());
    }
  }
}

int RunTask(const ExtractArgs& a) {
  const std::string who = "fb-extract task";
  if (auto m = MakeModel(a.model, ""); !m.ok()) return Fail(who, m.error()), kExitUsage;
  auto l = Load(a);
  if (!l.ok()) return Fail(who, l.error());
  auto it = std::find_if(
      l->passing.begin(), l->passing.end(),
      [&](const extract::make::PassingFile& p) { return p.file == a.f2p.front(); });
  if (it == l->passing.end()) {
    auto np = l->not_passing.find(a.f2p.front());
    return Fail(who,
                a.f2p.front() + ": " +
                    (np != l->not_passing.end() ? np->second : "not a test file of the trace"));
  }
  auto parser = parser::PythonParser::Create();
  if (!parser.ok()) return Fail(who, parser.error());
  extract::make::ExtractContext ctx = l->Context();
  extract::make::TaskOutcome o =
      extract::make::BuildTask(RealServices(), **parser, ctx, *it,
                         l->options);
  PrintOutcome(o);
  ReportModel(who, l->options.model.get());
  if (!o.emitted) return kExitFailure;
  for (const auto& id : o.instance_ids) std::printf("%s\n", id.c_str());
  return kExitOk;
}

void PrintSummary(const extract::make::AllSummary& s) {
  std::printf("%-44s %8zu\n", "test files in the trace", s.test_files);
  std::printf("%-44s %8zu\n", "candidates (this shard)", s.candidates);
  std::printf("%-44s %8zu\n", "  finished by an earlier run", s.resumed);
  std::printf("%-44s %8zu\n", "emitted (F2P files with a task)", s.emitted);
  std::printf("%-44s %8zu\n", "  task directories written now", s.instances);
  std::printf("%-44s %8zu\n", "  with an L2 task", s.level2);
  std::printf("%-44s %8d\n", "  repaired after verification (rounds)", s.repaired);
  if (s.repair_rounds > 0) std::printf("%-44s %8d\n", "  repair rounds", s.repair_rounds);
  if (s.flaky_tests > 0) std::printf("%-44s %8d\n", "  flaky tests left out", s.flaky_tests);
  for (const auto& [f2p, why] : s.l2_rejected) {
    std::printf("  no L2 task for %s: %s\n", f2p.c_str(), why.c_str());
  }
  for (const auto& [reason, n] : s.rejected) {
    std::printf("rejected: %-34s %8zu\n", reason.c_str(), n);
  }
  // The candidates' own lines name their rejections; the files that were none, here.
  for (const auto& [file, why] : s.left_out) {
    if (why.reason.starts_with("fewer than") || why.reason.starts_with("not passing") ||
        why.reason.starts_with("first committed")) {
      std::printf("  left out %s: %s\n", file.c_str(), why.detail.c_str());
    }
  }
  if (s.tried > 0) {
    std::printf("%-44s %8.3f\n", "fbkit seconds per task (excl. pytest)", s.fbkit_seconds / s.tried);
    std::printf("%-44s %8.3f\n", "pytest seconds per task", s.pytest_seconds / s.tried);
    std::printf("%-44s %8.2f\n", "pytest invocations per task",
                static_cast<double>(s.pytest_runs) / s.tried);
  }
}

int RunAll(const ExtractArgs& a) {
  const std::string who = "fb-extract all";
  auto shard = util::ParseShard(a.shard);
  if (!shard.ok()) return Fail(who, shard.error());
  if (auto m = MakeModel(a.model, ""); !m.ok()) return Fail(who, m.error()), kExitUsage;
  auto l = Load(a);
  if (!l.ok()) return Fail(who, l.error());
  extract::make::AllOptions all{a.min_points, a.after, *shard, a.jobs, a.rerun};
  extract::make::ExtractContext ctx = l->Context();
  Progress progress(who, !a.quiet);
  auto summary = extract::make::ExtractAll(RealServices(),
      {ctx, l->not_passing, l->trace.files.size()}, l->options, all,
      [&](const util::BatchItem<extract::make::TaskOutcome>& item) {
        progress.Clear();
        if (!item.resumed && !a.quiet) PrintOutcome(*item.result);
        progress.Update(item.done, item.total);
      });
  progress.Clear();
  ReportModel(who, l->options.model.get());
  if (!summary.ok()) return Fail(who, summary.error());
  PrintSummary(*summary);
  for (const auto& e : summary->write_errors) Fail(who, "writing a resume state: " + e);
  // Undecided candidates: no state was written, so a rerun builds them again.
  using extract::make::Rejection;
  bool undecided = false;
  for (auto [r, why] : {std::pair{Rejection::kModelUnavailable, "the model could not answer"},
                        std::pair{Rejection::kInternalError,
                                  "fbkit failed on them (a bug; please report it)"}}) {
    auto it = summary->rejected.find(std::string(extract::make::RejectionName(r)));
    if (it == summary->rejected.end()) continue;
    Fail(who, std::to_string(it->second) + " candidates left undecided: " + why +
                  " (see above); a rerun builds them again");
    undecided = true;
  }
  return summary->write_errors.empty() && !undecided ? kExitOk : kExitFailure;
}

int RunVerify(const std::string& dir, double f2p_max_pass, const SpecArgs& spec, bool trust,
              bool quiet) {
  const std::string who = "fb-extract verify";
  util::Env& env = util::RealEnv();
  auto abs = env.RealPath(dir);
  if (!abs.ok()) return Fail(who, abs.error());
  if (!extract::taskdir::IsTaskDir(env, *abs)) {
    return Fail(who, dir + ": no instance.json (not a task directory)");
  }
  extract::taskdir::VerifyOptions vo;
  vo.f2p_max_pass = f2p_max_pass;
  vo.work_dir = *abs + ".verify-work";
  auto sandbox = SandboxOf(spec);
  if (!sandbox.ok()) return Fail(who, sandbox.error());
  vo.sandbox = *sandbox;
  vo.environment_cache = EnvCacheDir();
  vo.trust_settings = trust;
  extract::taskdir::VerifyReport r =
      extract::taskdir::VerifyTask(RealServices(), *abs, vo);
  if (!r.ok) return Fail(who, dir + ": " + r.reason);
  if (!quiet) {
    std::fprintf(stderr,
                 "%s: ok (F2P pass rate before the patch %.3f, %zu F2P and %zu P2P tests pass "
                 "after; %d pytest runs)\n",
                 who.c_str(), r.f2p_pass_before, r.f2p_points, r.p2p_points, r.pytest_runs);
  }
  return kExitOk;
}

// How deep top-object candidates are looked for (task, all, tops).
void AddDepthOption(CLI::App* cmd, const std::shared_ptr<ExtractArgs>& a) {
  cmd->add_option("--depth", a->select.depth,
                  "Candidates up to this many calls deep through library code (default 5; 1: "
                  "only what the test file links to). The default chooser weighs the deeper "
                  "ones when its direct choice leaves too little to cut")
      ->check(CLI::Range(1, 50));
  cmd->add_flag("!--no-init-tops", a->select.package_init,
                "Never take what a package's __init__.py defines as a top object, nor extract "
                "it (FeatureBench's classifier; always so under --top-chooser featurebench)");
}

// How the top objects and the P2P files are chosen (task and all).
void AddSelectionOptions(CLI::App* cmd, const std::shared_ptr<ExtractArgs>& a) {
  cmd->add_option("--p2p", a->select.p2p, "P2P test files per task, at most (default 5)");
  cmd->add_option("--min-p2p", a->select.min_p2p,
                  "Fewest P2P test files per task: top objects are demoted only while fewer "
                  "files use none of them (default 1, FeatureBench's min_p2p_files)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", a->select.seed, "Seed for P2P choice and line cap (default 42)");
  cmd->add_option("--min-cap", a->select.min_cap, "Smallest line cap (default 3000)");
  cmd->add_option("--max-cap", a->select.max_cap, "Largest line cap (default 5000)");
  cmd->add_option("--max-share", a->select.max_share,
                  "A top object is used by at most this share of test files (default 0.25)");
  cmd->add_option("--keep-share", a->select.keep_share,
                  "A helper used by more than this share of test files stays, whatever P2P "
                  "files were drawn (default 0: the P2P runs alone decide, as in FeatureBench)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option_function<std::string>(
         "--top-chooser",
         [a](const std::string& v) { a->select.chooser = extract::make::TopRulesByName().at(v); },
                  "specific (default): a shared class counts through the methods this file's "
                  "tests call and few other files' tests call; share: only objects used by at "
                  "most --max-share of the test files; featurebench: every function and "
                  "method the test code calls but builders of inputs, as FeatureBench's model "
                  "is told to choose (see docs/models.md); learned: a model fitted on "
                  "FeatureBench's published choices weighs the facts of each candidate and "
                  "method (docs/top-objects.md)")
      ->check(CLI::IsMember({"specific", "share", "featurebench", "learned"}));
  cmd->add_option("--top-model", a->top_model,
                  "The learned chooser's model (fbkit.top-model/1, bench/top_objects_learn.py "
                  "writes it; default: the one fbkit ships)")
      ->check(CLI::ExistingFile);
  AddDepthOption(cmd, a);
  cmd->add_flag("--p2p-anywhere", a->select.p2p_anywhere,
                "Choose the P2P files at random among all eligible ones, as FeatureBench does "
                "(default: those in the F2P file's directory first, then at random)");
  cmd->add_flag("--p2p-least-overlap", a->select.least_overlap,
                "Choose the P2P files that share the fewest entities with the F2P file "
                "(default: seeded random choice among the eligible ones)");
}

// The options task and all share: inputs, selection, checks and outputs.
void AddCommonOptions(CLI::App* cmd, const std::shared_ptr<ExtractArgs>& a) {
  cmd->add_option("ROOT", a->root, "Repository root (never modified)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--graph", a->graph, "Graph from `fb-graph build` (JSON or binary)")->required();
  cmd->add_option("--trace", a->trace, "Trace from `fb-graph trace` (test outcomes)")->required();
  cmd->add_option("-o,--output", a->output, "Output directory for the task directories")
      ->required();
  AddSpecOptions(cmd, &a->spec, kSpecRun);
  AddSelectionOptions(cmd, a);
  cmd->add_option("--min-lines", a->min_lines, "Fewest lines to implement (default 100)");
  cmd->add_option("--f2p-max-pass", a->f2p_max_pass,
                  "Highest F2P pass rate allowed on the pre-solved code (default 0.3)");
  cmd->add_option("--repo-name", a->repo_name,
                  "owner/repo for ids (default: the spec's repo, else from origin)");
  cmd->add_option("--exclude", a->excludes,
                  "Paths to leave out of the entity table (glob; added to the spec's exclude)");
  AddModelOptions(cmd, &a->model,
                  "the top-level objects, missing docstrings and the Task section",
                  extract::make::StepPrompts());
  cmd->add_flag("--strict-references", a->strict_references,
                "No code that stays may name what is removed (default: FeatureBench's rule, "
                "code that the P2P tests never execute may; the post-verification judges)");
  cmd->add_flag("--no-verify", a->no_verify, "Do not run the post-verification");
  cmd->add_flag("--no-l2", a->no_l2, "Emit only level-1 tasks");
  cmd->add_option("--id-scheme", a->id_scheme,
                  "featurebench (default): OWNER__REPO.COMMIT8.STEM.MD5(test path)[:8].lvN, as "
                  "FeatureBench names tasks; fbkit: the same with a hash of the task's content")
      ->check(CLI::IsMember({"featurebench", "fbkit"}));
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
}

// tops --facts: "items", each candidate and reached method with its facts by name.
void WriteItems(const extract::make::Repo& repo, const graph::DepGraph& g, const std::string& file,
                const std::vector<extract::make::TopCandidate>& candidates,
                const extract::make::SelectOptions& select, util::JsonWriter& w) {
  w.Key("items"), w.BeginArray();
  for (const auto& item : extract::make::TopItems(repo, g, file, candidates, select)) {
    w.BeginObject();
    w.Key("candidate"), w.String(repo.id(candidates[item.candidate].entity));
    w.Key("facts"), extract::make::WriteTopFacts(item, w);
    w.Key("id"), w.String(repo.id(item.entity));
    w.Key("member"), w.Bool(item.member);
    w.EndObject();
  }
  w.EndArray();
}

// One JSON line per F2P candidate: the candidates of the top-object choice and what the
// default chooser made of them (for inspecting and evaluating the choice).
int RunTops(ExtractArgs a) {
  const std::string who = "fb-extract tops";
  auto scratch = MakeScratchDir("tops");
  if (!scratch.ok()) return Fail(who, scratch.error());
  a.output = *scratch;
  auto l = Load(a);
  if (!l.ok()) {
    (void)util::RealEnv().RemoveAll(*scratch);
    return Fail(who, l.error());
  }
  const extract::make::SelectOptions& select = l->options.select;  // --top-model read
  for (const auto& file : l->graph.test_files()) {  // passing or not: the choice is static
    if (!a.f2p.empty() && std::find(a.f2p.begin(), a.f2p.end(), file) == a.f2p.end()) continue;
    auto candidates = extract::make::TopCandidates(*l->repo, l->graph, file, select.depth,
                                                   extract::make::PackageInitTops(select));
    auto choices = extract::make::ChooseTopObjects(*l->repo, l->graph, file, candidates, select);
    std::string out;
    util::JsonWriter w(&out);
    w.BeginObject();
    w.Key("candidates"), w.BeginArray();
    for (size_t i = 0; i < choices.size(); ++i) {
      w.BeginObject();
      w.Key("calls"), w.Int(candidates[i].calls);
      w.Key("chosen"), w.Bool(choices[i].chosen);
      w.Key("depth"), w.Int(candidates[i].depth);
      w.Key("id"), w.String(l->repo->id(choices[i].entity));
      std::vector<std::string> members;
      for (auto m : choices[i].members) members.push_back(l->repo->id(m));
      w.Key("members"), w.StringArray(members);
      w.Key("spread"), w.Int(static_cast<int64_t>(candidates[i].spread));
      w.Key("why"), w.String(choices[i].why);
      w.EndObject();
    }
    w.EndArray();
    w.Key("f2p"), w.String(file);
    if (a.facts) WriteItems(*l->repo, l->graph, file, candidates, select, w);
    w.EndObject();
    std::printf("%s\n", out.c_str());
  }
  (void)util::RealEnv().RemoveAll(*scratch);
  return kExitOk;
}

// `tops`: the top-object choice per test file, as JSON lines.
void AddTopsCommand(CLI::App& app, int* exit_code) {
  auto tp = std::make_shared<ExtractArgs>();
  CLI::App* tops = app.add_subcommand(
      "tops",
      "Show the top-object choice for test files: one JSON line per test file of the graph "
      "with its candidates (spread, direct calls, depth) and whether and why each is chosen");
  tops->add_option("ROOT", tp->root, "Repository root (never modified)")
      ->required()
      ->check(CLI::ExistingDirectory);
  tops->add_option("--graph", tp->graph, "Graph from `fb-graph build`")->required();
  tops->add_option("--trace", tp->trace, "Trace from `fb-graph trace`")->required();
  tops->add_option("--f2p", tp->f2p,
                   "Only these test files (repeatable; default: every passing one)");
  tops->add_option_function<std::string>(
          "--top-chooser",
          [tp](const std::string& v) {
            tp->select.chooser = extract::make::TopRulesByName().at(v);
          },
          "specific (default), share or learned (as for task and all)")
      ->check(CLI::IsMember({"specific", "share", "learned"}));
  tops->add_option("--top-model", tp->top_model, "As for task and all")->check(CLI::ExistingFile);
  tops->add_flag("--facts", tp->facts,
                 "Also list each candidate's and reached method's facts, as the learned "
                 "chooser weighs them (\"items\": id, candidate, member, facts by name)");
  tops->add_option("--max-share", tp->select.max_share, "As for task and all (default 0.25)");
  AddDepthOption(tops, tp);
  tops->add_flag("--deep", tp->select.deep,
                 "Choose as the retry does when the direct choice leaves too little to cut: "
                 "the deeper candidates weighed too");
  tops->add_option("--exclude", tp->excludes, "Paths to leave out of the entity table (glob)");
  AddSpecOptions(tops, &tp->spec, 0);
  tops->add_flag("-q,--quiet", tp->quiet, "No notes on stderr");
  tops->callback([tp, exit_code] { *exit_code = RunTops(*tp); });
}

// `task`: the task of one F2P test file.
void AddTaskCommand(CLI::App& app, int* exit_code) {
  auto t = std::make_shared<ExtractArgs>();
  CLI::App* task = app.add_subcommand("task", "Extract the task of one F2P test file");
  AddCommonOptions(task, t);
  task->add_option("--f2p", t->f2p, "The test file (root-relative)")->required()->expected(1);
  task->callback([t, exit_code] { *exit_code = RunTask(*t); });
}

// `all`: a task for every candidate test file (resumable).
void AddAllCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<ExtractArgs>();
  CLI::App* all =
      app.add_subcommand("all", "Extract a task for every candidate test file (resumable)");
  AddCommonOptions(all, a);
  all->add_option("--min-points", a->min_points,
                  "Fewest passing test points in a F2P file (default 10)");
  all->add_option("--after", a->after,
                  "Only test files first committed on or after this date (YYYY-MM-DD)");
  all->add_option("-j,--jobs", a->jobs, "Tasks at once (default 1)");
  all->add_option("--shard", a->shard, "Only the K-th of N shares of the candidates (K/N)");
  all->add_flag("--rerun", a->rerun, "Redo candidates an earlier run finished");
  all->callback([a, exit_code] { *exit_code = RunAll(*a); });
}

// `verify`: a task directory checked again by running its tests.
void AddVerifyCommand(CLI::App& app, int* exit_code) {
  auto v = std::make_shared<std::pair<std::string, double>>("", 0.3);
  auto quiet = std::make_shared<bool>(false);
  auto trust = std::make_shared<bool>(false);
  auto vspec = std::make_shared<SpecArgs>();
  CLI::App* verify =
      app.add_subcommand("verify", "Check a task directory again by running its tests");
  verify->add_option("TASKDIR", v->first, "A task directory written by fb-extract")->required();
  verify->add_option("--f2p-max-pass", v->second, "Highest F2P pass rate allowed before the patch");
  verify
      ->add_option("--sandbox", vspec->sandbox,
                   "bwrap (default: bubblewrap isolation) or none (no isolation)")
      ->check(CLI::IsMember({"bwrap", "none"}));
  verify->add_flag("--trust-task-settings", *trust, kTrustTaskSettingsHelp);
  verify->add_flag("-q,--quiet", *quiet, "Print nothing on success");
  verify->callback([v, quiet, trust, vspec, exit_code] {
    *exit_code = RunVerify(v->first, v->second, *vspec, *trust, *quiet);
  });
}

}  // namespace

void AddExtractCommands(CLI::App& app, int* exit_code) {
  AddTopsCommand(app, exit_code);
  AddTaskCommand(app, exit_code);
  AddAllCommand(app, exit_code);
  AddVerifyCommand(app, exit_code);
}

}  // namespace fbkit::cli

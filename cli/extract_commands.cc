#include "cli/extract_commands.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/extract_common.h"
#include "cli/spec_options.h"
#include "extract/llm.h"
#include "extract/task.h"
#include "graph/graph_io.h"
#include "parser/entity_table.h"
#include "parser/python_parser.h"
#include "tracer/git.h"
#include "tracer/repo_files.h"
#include "tracer/trace_json.h"
#include "util/hash.h"
#include "util/json_read.h"
#include "util/json_writer.h"
#include "util/parallel.h"

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
  std::string llm_cmd;
  std::string shard;
  std::string id_scheme = "featurebench";
  std::vector<std::string> excludes;
  SpecArgs spec;
  extract::SelectOptions select;
  int min_points = 10;
  int min_lines = 100;
  double f2p_max_pass = 0.3;
  bool no_verify = false;
  bool no_l2 = false;
  bool strict_references = false;
  bool rerun = false;
  bool quiet = false;
  int jobs = 1;
};

// Everything the tasks of one repository share, loaded once.
struct Loaded {
  std::string root;
  graph::DepGraph graph;
  tracer::TraceSet trace;
  std::unique_ptr<extract::Repo> repo;
  std::unique_ptr<extract::CutIndex> index;
  std::vector<extract::PassingFile> passing;
  std::map<std::string, std::string> not_passing;
  extract::ExtractOptions options;
};

util::Expected<Loaded> Load(const ExtractArgs& a) {
  util::Env& env = util::RealEnv();
  Loaded l;
  auto root = env.RealPath(a.root);
  if (!root.ok()) return util::Error{root.error()};
  l.root = *root;
  auto spec = ResolveSpec(a.spec, l.root);
  if (!spec.ok()) return util::Error{spec.error()};
  if (auto s = PrepareEnvironment(*spec, l.root, "fb-extract", a.quiet); !s.ok()) {
    return util::Error{s.error()};
  }
  auto gtext = env.ReadFile(a.graph);
  if (!gtext.ok()) return util::Error{"--graph: " + gtext.error()};
  auto g = graph::ReadGraph(*gtext);
  if (!g.ok()) return util::Error{a.graph + ": " + g.error()};
  l.graph = std::move(*g);
  auto ttext = env.ReadFile(a.trace);
  if (!ttext.ok()) return util::Error{"--trace: " + ttext.error()};
  auto t = tracer::ParseTraceDocument(*ttext);
  if (!t.ok()) return util::Error{a.trace + ": " + t.error()};
  l.trace = std::move(*t);
  if (l.trace.mode == "session" && !a.quiet) {
    std::fprintf(stderr,
                 "note: %s was recorded in one pytest session: a test file that passes only "
                 "after other files ran (order-dependent) counts as passing and fails "
                 "verification; `fb-graph trace --isolate` runs each file alone, as "
                 "FeatureBench does\n",
                 a.trace.c_str());
  }
  parser::EntitiesOptions eo;
  eo.root = l.root;
  eo.excludes = a.excludes;
  eo.excludes.insert(eo.excludes.end(), spec->exclude.begin(), spec->exclude.end());
  eo.jobs = util::DefaultJobs();
  eo.references = true;
  eo.cache_dir = UserCacheDir("");
  auto entities = parser::BuildEntities(env, eo, nullptr);
  if (!entities.ok()) return util::Error{entities.error()};
  auto tables = parser::FileTables(*entities);
  if (!tables.ok()) return util::Error{tables.error()};
  auto repo = extract::Repo::Load(env, l.root, std::move(*tables));
  if (!repo.ok()) return util::Error{repo.error()};
  l.repo = std::make_unique<extract::Repo>(std::move(*repo));
  l.index = std::make_unique<extract::CutIndex>(*l.repo);
  l.passing = extract::PassingFiles(l.trace, &l.not_passing);
  auto out = env.RealPath(a.output);
  if (!out.ok()) {
    if (auto s = env.MakeDirs(a.output); !s.ok()) return util::Error{"-o: " + s.error()};
    out = env.RealPath(a.output);
    if (!out.ok()) return util::Error{"-o: " + out.error()};
  }
  extract::ExtractOptions& o = l.options;
  o.out_dir = *out;
  tracer::Git git(env, tracer::RealLauncher(), o.out_dir);
  o.repo_name = !a.repo_name.empty()  ? a.repo_name
                : !spec->repo.empty() ? spec->repo
                                      : tracer::RepoName(git, l.root);
  auto head = git.Run(l.root, {"rev-parse", "HEAD"});
  o.base_commit = head.ok() ? head->substr(0, 40) : "";
  auto files = tracer::ListRepoFiles(env, git, l.root, o.out_dir);
  if (!files.ok()) return util::Error{files.error()};
  o.files = std::move(*files);
  o.settings = std::move(*spec);
  o.select = a.select;
  o.min_lines = a.min_lines;
  o.verify = !a.no_verify;
  o.f2p_max_pass = a.f2p_max_pass;
  o.level2 = !a.no_l2;
  o.strict_references = a.strict_references;
  o.id_scheme =
      a.id_scheme == "fbkit" ? extract::IdScheme::kFbkit : extract::IdScheme::kFeatureBench;
  if (!a.llm_cmd.empty()) {
    o.chooser = extract::LlmTopChooser(env, tracer::RealLauncher(), a.llm_cmd, *l.repo,
                                       util::JoinPath(o.out_dir, ".work/llm"));
    o.statement_model =
        extract::LlmStatementModel(env, tracer::RealLauncher(), a.llm_cmd, *l.repo, o.repo_name,
                                   util::JoinPath(o.out_dir, ".work/llm"));
  }
  return l;
}

// When the test file was first committed (ISO 8601), from `git log --follow`.
std::string FirstCommitted(tracer::Git& git, const std::string& root, const std::string& file) {
  auto log = git.Run(root, {"log", "--diff-filter=A", "--follow", "--format=%cI", "--", file});
  if (!log.ok() || log->empty()) return "";
  std::string text = log->substr(0, log->find_last_not_of('\n') + 1);
  return text.substr(text.find_last_of('\n') == std::string::npos ? 0
                                                                  : text.find_last_of('\n') + 1);
}

std::string StatePath(const std::string& out, const std::string& f2p) {
  return util::JoinPath(util::JoinPath(out, ".fbkit/state"),
                        util::Sha256Hex(f2p).substr(0, 16) + ".json");
}

std::string StateJson(const extract::TaskOutcome& o) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("detail"), w.String(o.detail);
  w.Key("emitted"), w.Bool(o.emitted);
  w.Key("f2p"), w.String(o.f2p);
  w.Key("instance_ids"), w.StringArray(o.instance_ids);
  w.Key("lines"), w.Int(o.lines);
  w.Key("reason"), w.String(o.reason);
  w.Key("repairs"), w.StringArray(o.repairs);
  w.EndObject();
  return out + "\n";
}

void PrintOutcome(const extract::TaskOutcome& o) {
  if (o.emitted) {
    std::string ids;
    for (const auto& id : o.instance_ids) ids += " " + id;
    std::fprintf(stderr, "  emitted %s (%d lines):%s%s%s\n", o.f2p.c_str(), o.lines, ids.c_str(),
                 o.detail.empty() ? "" : "\n    note: ", o.detail.c_str());
    for (const auto& r : o.repairs) std::fprintf(stderr, "    repaired: %s\n", r.c_str());
  } else {
    std::fprintf(stderr, "  rejected %s: %s: %s\n", o.f2p.c_str(), o.reason.c_str(),
                 o.detail.c_str());
  }
}

int RunTask(const ExtractArgs& a) {
  const std::string who = "fb-extract task";
  auto l = Load(a);
  if (!l.ok()) return Fail(who, l.error());
  auto it = std::find_if(l->passing.begin(), l->passing.end(),
                         [&](const extract::PassingFile& p) { return p.file == a.f2p.front(); });
  if (it == l->passing.end()) {
    auto np = l->not_passing.find(a.f2p.front());
    return Fail(who,
                a.f2p.front() + ": " +
                    (np != l->not_passing.end() ? np->second : "not a test file of the trace"));
  }
  auto parser = parser::PythonParser::Create();
  if (!parser.ok()) return Fail(who, parser.error());
  extract::ExtractContext ctx{*l->repo, *l->index, l->graph, l->passing};
  extract::TaskOutcome o =
      extract::BuildTask(util::RealEnv(), tracer::RealLauncher(), **parser, ctx, *it, l->options);
  PrintOutcome(o);
  if (!o.emitted) return kExitFailure;
  for (const auto& id : o.instance_ids) std::printf("%s\n", id.c_str());
  return kExitOk;
}

int RunAll(const ExtractArgs& a) {
  const std::string who = "fb-extract all";
  auto shard = ParseShard(a.shard);
  if (!shard.ok()) return Fail(who, shard.error());
  auto l = Load(a);
  if (!l.ok()) return Fail(who, l.error());
  util::Env& env = util::RealEnv();
  tracer::Git git(env, tracer::RealLauncher(), l->options.out_dir);
  std::map<std::string, size_t> rejected_before;  // by reason, before any task was tried
  for (const auto& [file, why] : l->not_passing)
    rejected_before["not passing: " + why.substr(0, why.find(" ("))]++;
  std::vector<const extract::PassingFile*> candidates;
  for (const auto& p : l->passing) {
    if (static_cast<int>(p.tests.size()) < a.min_points) {
      rejected_before["fewer than --min-points test points"]++;
      continue;
    }
    if (!a.after.empty()) {
      std::string first = FirstCommitted(git, l->root, p.file);
      if (first.empty() || first < a.after) {
        rejected_before["first committed before --after"]++;
        continue;
      }
    }
    candidates.push_back(&p);
  }
  std::vector<const extract::PassingFile*> mine;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (InShard(i, *shard)) {
      mine.push_back(candidates[i]);
    }
  }
  std::vector<std::optional<extract::TaskOutcome>> outcomes(mine.size());
  std::vector<bool> skipped(mine.size(), false);
  std::vector<std::string> write_errors;  // resume states that could not be written
  std::mutex mu;
  size_t done = 0;
  Progress progress(who, !a.quiet);
  int jobs = std::max(1, a.jobs);
  std::vector<std::unique_ptr<parser::PythonParser>> parsers;
  for (int j = 0; j < jobs; ++j) {
    auto p = parser::PythonParser::Create();
    if (!p.ok()) return Fail(who, p.error());
    parsers.push_back(std::move(*p));
  }
  extract::ExtractContext ctx{*l->repo, *l->index, l->graph, l->passing};
  util::ParallelFor(mine.size(), jobs, [&](size_t i, int worker) {
    std::string state = StatePath(l->options.out_dir, mine[i]->file);
    if (!a.rerun && env.Stat(state, true).ok()) {
      std::lock_guard<std::mutex> lock(mu);
      skipped[i] = true;
      progress.Update(++done, mine.size());
      return;
    }
    extract::TaskOutcome o = extract::BuildTask(env, tracer::RealLauncher(), *parsers[worker], ctx,
                                                *mine[i], l->options);
    std::string name = state.substr(state.find_last_of('/') + 1);
    auto written = WriteFiles(env, util::DirName(state), {{name, StateJson(o)}});
    std::lock_guard<std::mutex> lock(mu);
    if (!written.ok()) write_errors.push_back(written.error());
    progress.Clear();
    if (!a.quiet) PrintOutcome(o);
    outcomes[i] = std::move(o);
    progress.Update(++done, mine.size());
  });
  progress.Clear();
  // Summary over this shard's candidates, including tasks finished by earlier runs.
  std::map<std::string, size_t> rejected = rejected_before;
  size_t emitted = 0, instances = 0, resumed = 0, level2 = 0;
  std::vector<std::pair<std::string, std::string>> l2_rejected;  // F2P file, why
  auto count_l2 = [&](const std::string& f2p, const std::vector<std::string>& ids,
                      const std::string& detail) {
    bool has =
        std::any_of(ids.begin(), ids.end(), [](const auto& id) { return id.ends_with(".lv2"); });
    if (has) ++level2;
    size_t at = detail.find("L2 not emitted: ");
    if (!has && at != std::string::npos) l2_rejected.emplace_back(f2p, detail.substr(at + 16));
  };
  double fbkit = 0, pytest = 0;
  int runs = 0, tried = 0, repaired = 0, repair_rounds = 0;
  for (size_t i = 0; i < mine.size(); ++i) {
    if (skipped[i]) {
      ++resumed;
      auto text = env.ReadFile(StatePath(l->options.out_dir, mine[i]->file));
      auto state = nlohmann::json::parse(text.ok() ? *text : "", nullptr, false);
      if (!state.is_object()) {
        rejected["(earlier run) rejected"]++;
      } else if (state.value("emitted", false)) {
        ++emitted;
        size_t rounds = util::JsonStringList(state, "repairs").size();
        repaired += rounds > 0;
        repair_rounds += static_cast<int>(rounds);
        count_l2(mine[i]->file, util::JsonStringList(state, "instance_ids"),
                 state.value("detail", ""));
      } else {
        rejected[state.value("reason", "(earlier run) rejected")]++;
      }
      continue;
    }
    const auto& o = *outcomes[i];
    ++tried;
    fbkit += o.fbkit_seconds;
    pytest += o.pytest_seconds;
    runs += o.pytest_runs;
    if (o.emitted) {
      ++emitted;
      repaired += !o.repairs.empty();
      repair_rounds += static_cast<int>(o.repairs.size());
      instances += o.instance_ids.size();
      count_l2(o.f2p, o.instance_ids, o.detail);
    } else {
      rejected[o.reason]++;
    }
  }
  std::string summary;
  util::JsonWriter w(&summary);
  w.BeginObject();
  w.Key("candidates"), w.Int(static_cast<int64_t>(mine.size()));
  w.Key("emitted"), w.Int(static_cast<int64_t>(emitted));
  w.Key("fbkit_ms"), w.Int(static_cast<int64_t>(fbkit * 1000));
  w.Key("instances_this_run"), w.Int(static_cast<int64_t>(instances));
  // Of the emitted F2P files: how many got an L2 task, and why the others did not (the first
  // failing test and its error line, when verification failed).
  w.Key("level2"), w.BeginObject();
  w.Key("emitted"), w.Int(static_cast<int64_t>(level2));
  w.Key("rejected"), w.BeginArray();
  for (const auto& [f2p, why] : l2_rejected) {
    w.BeginObject(), w.Key("f2p"), w.String(f2p), w.Key("reason"), w.String(why), w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.Key("pytest_ms"), w.Int(static_cast<int64_t>(pytest * 1000));
  w.Key("pytest_runs"), w.Int(runs);
  w.Key("rejected"), w.BeginObject();
  for (const auto& [reason, n] : rejected) w.Key(reason), w.Int(static_cast<int64_t>(n));
  w.EndObject();
  // Emitted tasks whose plan was repaired after a failed verification, and the rounds.
  w.Key("repaired"), w.BeginObject();
  w.Key("rounds"), w.Int(repair_rounds);
  w.Key("tasks"), w.Int(repaired);
  w.EndObject();
  w.Key("resumed"), w.Int(static_cast<int64_t>(resumed));
  w.Key("shard"), w.String(std::to_string(shard->first) + "/" + std::to_string(shard->second));
  w.Key("test_files"), w.Int(static_cast<int64_t>(l->trace.files.size()));
  w.Key("tried"), w.Int(tried);
  w.EndObject();
  // Shards sharing OUT keep a summary each; a run without --shard over OUT afterwards finds
  // every candidate finished and writes the whole summary.
  std::string name = shard->second == 1 ? "summary.json"
                                        : "summary." + std::to_string(shard->first) + "-of-" +
                                              std::to_string(shard->second) + ".json";
  if (auto s = env.WriteFileAtomic(util::JoinPath(l->options.out_dir, name), summary + "\n"); !s.ok()) {
    return Fail(who, s.error());
  }
  std::printf("%-44s %8s\n", "test files in the trace",
              std::to_string(l->trace.files.size()).c_str());
  std::printf("%-44s %8zu\n", "candidates (this shard)", mine.size());
  std::printf("%-44s %8zu\n", "  finished by an earlier run", resumed);
  std::printf("%-44s %8zu\n", "emitted (F2P files with a task)", emitted);
  std::printf("%-44s %8zu\n", "  task directories written now", instances);
  std::printf("%-44s %8zu\n", "  with an L2 task", level2);
  std::printf("%-44s %8d\n", "  repaired after verification (rounds)", repaired);
  if (repair_rounds > 0) std::printf("%-44s %8d\n", "  repair rounds", repair_rounds);
  for (const auto& [f2p, why] : l2_rejected) {
    std::printf("  no L2 task for %s: %s\n", f2p.c_str(), why.c_str());
  }
  for (const auto& [reason, n] : rejected) std::printf("rejected: %-34s %8zu\n", reason.c_str(), n);
  if (tried > 0) {
    std::printf("%-44s %8.3f\n", "fbkit seconds per task (excl. pytest)", fbkit / tried);
    std::printf("%-44s %8.3f\n", "pytest seconds per task", pytest / tried);
    std::printf("%-44s %8.2f\n", "pytest invocations per task", static_cast<double>(runs) / tried);
  }
  for (const auto& e : write_errors) Fail(who, "writing a resume state: " + e);
  return write_errors.empty() ? kExitOk : kExitFailure;
}

int RunVerify(const std::string& dir, double f2p_max_pass, const SpecArgs& spec, bool quiet) {
  const std::string who = "fb-extract verify";
  util::Env& env = util::RealEnv();
  auto abs = env.RealPath(dir);
  if (!abs.ok()) return Fail(who, abs.error());
  if (!env.Stat(util::JoinPath(*abs, "instance.json"), true).ok()) {
    return Fail(who, dir + ": no instance.json (not a task directory)");
  }
  extract::VerifyOptions vo;
  vo.f2p_max_pass = f2p_max_pass;
  vo.work_dir = *abs + ".verify-work";
  auto sandbox = SandboxOf(spec);
  if (!sandbox.ok()) return Fail(who, sandbox.error());
  vo.sandbox = *sandbox;
  vo.env_cache = EnvCacheDir();
  extract::VerifyReport r = extract::VerifyTask(env, tracer::RealLauncher(), *abs, vo);
  if (!r.ok) return Fail(who, dir + ": " + r.reason);
  if (!quiet) {
    std::fprintf(stderr,
                 "%s: ok (F2P pass rate before the patch %.3f, %zu F2P and %zu P2P tests pass "
                 "after; %d pytest runs)\n",
                 who.c_str(), r.f2p_pass_before, r.f2p_points, r.p2p_points, r.pytest_runs);
  }
  return kExitOk;
}

void AddCommonOptions(CLI::App* cmd, const std::shared_ptr<ExtractArgs>& a) {
  cmd->add_option("ROOT", a->root, "Repository root (never modified)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--graph", a->graph, "Graph from `fb-graph build` (JSON or binary)")->required();
  cmd->add_option("--trace", a->trace, "Trace from `fb-graph trace` (test outcomes)")->required();
  cmd->add_option("-o,--output", a->output, "Output directory for the task directories")
      ->required();
  AddSpecOptions(cmd, &a->spec, kSpecRun);
  cmd->add_option("--p2p", a->select.p2p, "P2P test files per task (default 5)");
  cmd->add_option("--seed", a->select.seed, "Seed for P2P choice and line cap (default 42)");
  cmd->add_option("--min-cap", a->select.min_cap, "Smallest line cap (default 3000)");
  cmd->add_option("--max-cap", a->select.max_cap, "Largest line cap (default 5000)");
  cmd->add_option("--max-share", a->select.max_share,
                  "A top object is used by at most this share of test files, and a helper used "
                  "by more stays (default 0.25)");
  cmd->add_option("--top-chooser", a->select.chooser,
                  "specific (default): a shared class counts through the methods this file's "
                  "tests call and few other files' tests call; share: only objects used by at "
                  "most --max-share of the test files; featurebench: every function and "
                  "method the test code calls but builders of inputs, as FeatureBench's model "
                  "is told to choose (see docs/llm-cmd.md)")
      ->check(CLI::IsMember({"specific", "share", "featurebench"}));
  cmd->add_flag("--p2p-anywhere", a->select.p2p_anywhere,
                "Choose the P2P files at random among all eligible ones, as FeatureBench does "
                "(default: those in the F2P file's directory first, then at random)");
  cmd->add_flag("--p2p-least-overlap", a->select.least_overlap,
                "Choose the P2P files that share the fewest entities with the F2P file "
                "(default: seeded random choice among the eligible ones)");
  cmd->add_option("--min-lines", a->min_lines, "Fewest lines to implement (default 100)");
  cmd->add_option("--f2p-max-pass", a->f2p_max_pass,
                  "Highest F2P pass rate allowed on the pre-solved code (default 0.3)");
  cmd->add_option("--repo-name", a->repo_name,
                  "owner/repo for ids (default: the spec's repo, else from origin)");
  cmd->add_option("--exclude", a->excludes,
                  "Paths to leave out of the entity table (glob; added to the spec's exclude)");
  cmd->add_option(
      "--llm-cmd", a->llm_cmd,
      "Model command (JSON request on stdin, JSON answer on stdout; see docs/llm-cmd.md): chooses the "
      "top-level objects, writes missing docstrings and the Task section");
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
  for (const auto& file : l->graph.test_files()) {  // passing or not: the choice is static
    if (!a.f2p.empty() && std::find(a.f2p.begin(), a.f2p.end(), file) == a.f2p.end()) continue;
    auto candidates = extract::TopCandidates(*l->repo, l->graph, file);
    auto choices = extract::ChooseTopObjects(*l->repo, l->graph, file, candidates, a.select);
    std::string out;
    util::JsonWriter w(&out);
    w.BeginObject();
    w.Key("candidates"), w.BeginArray();
    for (size_t i = 0; i < choices.size(); ++i) {
      w.BeginObject();
      w.Key("calls"), w.Int(candidates[i].calls);
      w.Key("chosen"), w.Bool(choices[i].chosen);
      w.Key("id"), w.String(choices[i].id);
      w.Key("members"), w.StringArray(choices[i].members);
      w.Key("spread"), w.Int(static_cast<int64_t>(candidates[i].spread));
      w.Key("why"), w.String(choices[i].why);
      w.EndObject();
    }
    w.EndArray();
    w.Key("f2p"), w.String(file);
    w.EndObject();
    std::printf("%s\n", out.c_str());
  }
  (void)util::RealEnv().RemoveAll(*scratch);
  return kExitOk;
}

}  // namespace

void AddExtractCommands(CLI::App& app, int* exit_code) {
  auto tp = std::make_shared<ExtractArgs>();
  CLI::App* tops = app.add_subcommand(
      "tops",
      "Show the top-object choice for test files: one JSON line per test file of the graph "
      "with its candidates (spread, direct calls) and whether and why each is chosen");
  tops->add_option("ROOT", tp->root, "Repository root (never modified)")
      ->required()
      ->check(CLI::ExistingDirectory);
  tops->add_option("--graph", tp->graph, "Graph from `fb-graph build`")->required();
  tops->add_option("--trace", tp->trace, "Trace from `fb-graph trace`")->required();
  tops->add_option("--f2p", tp->f2p,
                   "Only these test files (repeatable; default: every passing one)");
  tops->add_option("--top-chooser", tp->select.chooser, "specific (default) or share")
      ->check(CLI::IsMember({"specific", "share"}));
  tops->add_option("--max-share", tp->select.max_share, "As for task and all (default 0.25)");
  tops->add_option("--exclude", tp->excludes, "Paths to leave out of the entity table (glob)");
  AddSpecOptions(tops, &tp->spec, 0);
  tops->add_flag("-q,--quiet", tp->quiet, "No notes on stderr");
  tops->callback([tp, exit_code] { *exit_code = RunTops(*tp); });

  auto t = std::make_shared<ExtractArgs>();
  CLI::App* task = app.add_subcommand("task", "Extract the task of one F2P test file");
  AddCommonOptions(task, t);
  task->add_option("--f2p", t->f2p, "The test file (root-relative)")->required()->expected(1);
  task->callback([t, exit_code] { *exit_code = RunTask(*t); });

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

  auto v = std::make_shared<std::pair<std::string, double>>("", 0.3);
  auto quiet = std::make_shared<bool>(false);
  auto vspec = std::make_shared<SpecArgs>();
  CLI::App* verify =
      app.add_subcommand("verify", "Check a task directory again by running its tests");
  verify->add_option("TASKDIR", v->first, "A task directory written by fb-extract")->required();
  verify->add_option("--f2p-max-pass", v->second, "Highest F2P pass rate allowed before the patch");
  verify
      ->add_option("--sandbox", vspec->sandbox,
                   "bwrap (default: bubblewrap isolation) or none (no isolation)")
      ->check(CLI::IsMember({"bwrap", "none"}));
  verify->add_flag("-q,--quiet", *quiet, "Print nothing on success");
  verify->callback([v, quiet, vspec, exit_code] {
    *exit_code = RunVerify(v->first, v->second, *vspec, *quiet);
  });
}

}  // namespace fbkit::cli

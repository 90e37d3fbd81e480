#include "extract/make/task.h"

#include <algorithm>
#include <set>
#include <chrono>
#include <regex>
#include <tuple>

#include "extract/make/l2.h"
#include "extract/make/statement.h"
#include "extract/taskdir/task_dir.h"
#include "runner/environment.h"
#include "runner/git.h"
#include "runner/repo_files.h"
#include "util/hash.h"
#include "util/strings.h"

namespace fbkit::extract::make {

namespace {

using Clock = std::chrono::steady_clock;

// Python's pathlib stem: the last component without its last suffix.
std::string Stem(const std::string& path) {
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  size_t dot = base.rfind('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

std::vector<FilePolicy> Policies(const Repo& repo, const graph::DepGraph& g, const Plan& plan) {
  std::set<std::string> tests(g.test_files().begin(), g.test_files().end());
  std::set<std::string> p2p(plan.p2p.begin(), plan.p2p.end());
  std::vector<FilePolicy> policy;
  for (const auto& t : repo.files()) {
    if (t.path == plan.f2p) {
      policy.push_back(FilePolicy::kIgnored);
    } else if (!taskdir::IsTestCode(t.path, tests)) {
      policy.push_back(FilePolicy::kEditable);
    } else {
      bool frozen = p2p.count(t.path) || !tests.count(t.path);  // P2P files, conftests, helpers
      policy.push_back(frozen ? FilePolicy::kFrozen : FilePolicy::kIgnored);
    }
  }
  return policy;
}

struct Patches {
  std::string patch;
  std::string test_patch;
};

// Writes `presolved/` (the cut repository without the F2P file, committed) and derives the
// gold patch and the test patch from it with git.
util::Expected<Patches> WritePresolved(util::Env& env, runner::Git& git, const Repo& repo,
                                         const ExtractOptions& options, const std::string& dir,
                                         const std::string& f2p,
                                         const std::map<std::string, std::string>& texts) {
  std::string pre = taskdir::TaskDir{dir}.presolved();
  // Every file as it is (executable bits and symlinks kept), the cut ones with their new text
  // (and their original mode).
  std::vector<std::string> unchanged;
  for (const auto& path : options.files) {
    if (path != f2p && !texts.count(path)) unchanged.push_back(path);
  }
  if (auto s = runner::CopyRepoFiles(env, repo.root(), unchanged, pre); !s.ok()) {
    return s.failure();
  }
  auto write = [&](const std::string& path, const std::string& text) -> util::Status {
    std::string dst = util::JoinPath(pre, path);
    if (auto s = env.MakeDirs(util::DirName(dst)); !s.ok()) return s;
    if (auto s = env.WriteFileAtomic(dst, text); !s.ok()) return s;
    return env.CopyMode(util::JoinPath(repo.root(), path), dst);
  };
  std::set<std::string> untracked(options.untracked.begin(), options.untracked.end());
  for (const auto& [path, text] : texts) {
    if (untracked.count(path)) continue;
    if (auto s = write(path, text); !s.ok()) return s.failure();
  }
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"init", "-q"},
           // Every file listed, those the repository's .gitignore matches too (sphinx tracks
           // a `*.so` its apidoc tests read): a clone of presolved/ is what tests run on.
           {"add", "-A", "--force"},
           {"commit", "-q", "--no-verify", "-m", "fbkit: pre-solved codebase"}}) {
    if (auto r = git.Run(pre, args); !r.ok()) return r.failure();
  }
  // A tag git would take (no "-" start, no "..", spaces or control characters: check-ref-format).
  const std::string& tag = options.version_tag;
  if (!tag.empty() && !tag.starts_with("-") && tag != "HEAD" && tag != "@" &&
      tag.find("@{") == std::string::npos) {
    if (auto r = git.Run(pre, {"check-ref-format", "refs/tags/" + tag}); r.ok()) {
      if (auto t = git.Run(pre, {"tag", tag}); !t.ok()) return t.failure();
    }
  }
  Patches out;
  for (const auto& [path, text] : texts) {
    if (untracked.count(path)) continue;
    auto data = env.ReadFile(util::JoinPath(repo.root(), path));
    if (!data.ok()) return data.failure();
    if (auto s = write(path, *data); !s.ok()) return s.failure();
  }
  const std::vector<std::string> diff = {"diff", "--no-color", "--no-ext-diff", "--binary"};
  auto patch = git.Run(pre, diff);
  if (!patch.ok()) return patch.failure();
  out.patch = *patch;
  if (auto r = git.Run(pre, {"checkout", "-q", "--", "."}); !r.ok()) return r.failure();
  std::string test_dst = util::JoinPath(pre, f2p);
  if (auto s = runner::CopyRepoFiles(env, repo.root(), {f2p}, pre); !s.ok()) {
    return s.failure();
  }
  if (auto r = git.Run(pre, {"add", "-N", "--", f2p}); !r.ok()) return r.failure();
  auto tp = git.Run(pre, diff);
  if (!tp.ok()) return tp.failure();
  out.test_patch = *tp;
  // Back to HEAD with an index that holds no file times or inodes (read-tree, unlike reset,
  // records none), so that the same task is written byte for byte every time.
  if (auto r = git.Run(pre, {"read-tree", "HEAD"}); !r.ok()) return r.failure();
  (void)env.RemoveAll(test_dst);
  return out;
}

struct InstanceFields {
  std::string id;
  int level = 1;
  const Plan* plan = nullptr;
  std::vector<Ent> tops;
  std::vector<std::string> files;
  int lines = 0;
  int functions = 0;
  std::vector<std::string> f2p_tests;  // L2: as the redirected test file's ids read
  std::vector<std::string> p2p_tests;
  std::string statement;
  Patches patches;
  std::vector<std::string> orphans;
  std::set<std::pair<std::string, std::string>> gold_test_file_reads;
  std::vector<std::string> dangling;
  std::set<Ent> interfaces;  // what the statement shows
  bool strict_references = false;
  std::string digest;       // of the plan (the fbkit id scheme)
  std::string create_time;  // the F2P file's first and last commit ("%Y-%m-%d %H:%M:%S")
  std::string upd_time;
};

// When `file` was first and last committed, in the committer's own time zone (as
// FeatureBench's instance.json gives them), or "" outside git.
std::pair<std::string, std::string> FileTimes(runner::Git& git, const std::string& root,
                                              const std::string& file) {
  auto log = git.Run(
      root, {"log", "--follow", "--format=%cd", "--date=format:%Y-%m-%d %H:%M:%S", "--", file});
  if (!log.ok() || log->empty()) return {"", ""};
  std::string text = log->substr(0, log->find_last_not_of('\n') + 1);
  size_t last_nl = text.find_last_of('\n');
  std::string first = text.substr(last_nl == std::string::npos ? 0 : last_nl + 1);
  return {first, text.substr(0, text.find('\n'))};
}

// What an L2 gold's agent_code copies besides the package's Python modules: the repository's
// files, and what the environment's install steps built (the environment is cached: made
// by the trace already).
util::Expected<PackageSources> PackageSourcesOf(util::Env& env, sandbox::Launcher& launcher,
                                                const std::string& root,
                                                const ExtractOptions& options) {
  PackageSources sources{options.files, "", {}};
  if (options.spec.install.empty()) return sources;
  std::string cache = options.spec.environment_cache.empty()
                          ? util::JoinPath(options.out_dir, ".work/env")
                          : options.spec.environment_cache;
  auto built = runner::EnsureEnvironment(env, launcher, {options.spec, root, cache, nullptr});
  if (!built.ok()) return util::Error{"the environment: " + built.error()};
  sources.built_dir = util::JoinPath(built->dir, "src");
  sources.built_files = built->built_files;
  return sources;
}

// The task's instance.json (fields FeatureBench's and fbkit's own): where entities leave the
// pipeline as ids.
taskdir::Instance ToInstance(const Repo& repo, const ExtractOptions& options,
                             const InstanceFields& f) {
  taskdir::Instance i;
  i.instance_id = f.id;
  i.repo = options.repo_name;
  i.base_commit = options.base_commit;
  i.image_name = options.spec.image_name;
  i.level = f.level;
  i.f2p_files = {f.plan->f2p};
  if (f.level == 1) i.p2p_files = f.plan->p2p, i.p2p_tests = f.p2p_tests;
  i.f2p_tests = f.f2p_tests;
  for (Ent v : f.tops) i.top_objects.push_back(repo.id(v));
  i.patch = f.patches.patch;
  i.test_patch = f.patches.test_patch;
  i.problem_statement = f.statement;
  i.spec = options.spec;
  i.cap = f.plan->cap;
  i.create_time = f.create_time;
  i.upd_time = f.upd_time;
  i.dangling_references = f.dangling;
  for (Ent v : f.plan->demoted) i.demoted_top_objects.push_back(repo.id(v));
  i.extracted = repo.Ids(f.plan->extracted);
  i.extracted_files = f.files;
  i.interfaces = repo.Ids(f.interfaces);
  i.orphans_removed = f.orphans;
  i.gold_test_file_reads = f.gold_test_file_reads;
  i.functions = f.functions;
  i.lines = f.lines;
  if (options.model) i.model_json = model::ModelJson(*options.model);
  i.strict_references = f.strict_references;
  i.seed = options.select.seed;
  return i;
}

// What the fbkit id scheme hashes: the F2P file, line cap, P2P files and extracted entities.
std::string Digest(const Repo& repo, const Plan& plan) {
  const std::string& f2p = plan.f2p;
  const std::vector<std::string> extracted = repo.Ids(plan.extracted);
  std::string key = f2p + "\n" + std::to_string(plan.cap) + "\n";
  for (const auto& p : plan.p2p) key += p + "\n";
  for (const auto& id : extracted) key += id + "\n";
  return util::Sha256Hex(key);
}

}  // namespace

std::string_view RejectionName(Rejection r) {
  switch (r) {
    case Rejection::kNone: return "";
    case Rejection::kNoPlan: return "no plan";
    case Rejection::kStillUsed: return "still used";
    case Rejection::kTooFewLines: return "too few lines";
    case Rejection::kUnparsableCut: return "unparsable cut";
    case Rejection::kVerificationFailed: return "verification failed";
    case Rejection::kStatement: return "statement";
    case Rejection::kLevel2: return "L2";
    case Rejection::kIo: return "io";
    case Rejection::kModelUnavailable: return "model unavailable";
    case Rejection::kInternalError: return "internal error";
    case Rejection::kEarlierRun: return "(earlier run) rejected";
  }
  return "";
}

Rejection RejectionFromName(std::string_view name) {
  for (Rejection r : {Rejection::kNone, Rejection::kNoPlan, Rejection::kStillUsed,
                      Rejection::kTooFewLines, Rejection::kUnparsableCut,
                      Rejection::kVerificationFailed,
                      Rejection::kStatement, Rejection::kLevel2, Rejection::kIo,
                      Rejection::kModelUnavailable, Rejection::kInternalError}) {
    if (RejectionName(r) == name) return r;
  }
  return Rejection::kEarlierRun;
}

std::string InstanceId(IdScheme scheme, const std::string& repo_name, const std::string& commit,
                       const std::string& f2p, const std::string& content_digest, int level) {
  std::string repo = repo_name;
  if (size_t slash = repo.find('/'); slash != std::string::npos) repo.replace(slash, 1, "__");
  std::string c = commit.empty() ? "unknown" : commit.substr(0, 8);
  std::string hash = scheme == IdScheme::kFeatureBench ? util::Md5Hex(f2p) : content_digest;
  return repo + "." + c + "." + Stem(f2p) + "." + hash.substr(0, 8) + ".lv" + std::to_string(level);
}

namespace {

// A planned task and its cut, or why there is none (kNone when there is).
struct CutPlan {
  std::optional<Plan> plan;
  CutResult cut;
  std::vector<Ent> tops;  // the top objects the cut removes
  int lines = 0;
  Rejection rejection = Rejection::kNone;
  std::string detail;
};

// Cuts the planned extraction until no code that runs uses what goes (re-planning with what
// must stay), then finds the top objects removed and the lines to implement.
void CutUntilStable(parser::PythonParser& parser, const ExtractContext& ctx,
                    const ExtractOptions& options, CutPlan& cp) {
  auto fail = [&](Rejection rejection, std::string detail) {
    cp.rejection = rejection;
    cp.detail = std::move(detail);
  };
  cp.tops.clear();
  std::vector<FilePolicy> policy = Policies(ctx.repo, ctx.graph, *cp.plan);
  std::set<Ent> executed = ExecutedBy(ctx.graph, cp.plan->p2p);
  CutRules rules{&executed, options.strict_references};
  for (int round = 0;; ++round) {
    cp.cut = PlanCut(ctx.repo, ctx.index, cp.plan->extracted, policy, parser, rules);
    if (cp.cut.conflicts.empty()) break;
    cp.plan->kept.insert(cp.cut.conflicts.begin(), cp.cut.conflicts.end());
    if (round > 200) return fail(Rejection::kStillUsed, cp.cut.reasons.front());
    if (auto s = Reextract(ctx.repo, ctx.graph, &*cp.plan); !s.ok()) {
      return fail(Rejection::kStillUsed, s.error() + " (" + cp.cut.reasons.front() + ")");
    }
  }
  if (!cp.cut.problems.empty()) return fail(Rejection::kUnparsableCut, cp.cut.problems.front());
  for (Ent v : cp.plan->top_objects) {
    if (cp.plan->extracted.count(v) ||
        std::any_of(cp.plan->extracted.begin(), cp.plan->extracted.end(),
                    [&](Ent x) { return ctx.repo.Within(x, v); })) {
      cp.tops.push_back(v);
    }
  }
  for (Ent v : ctx.repo.ByIdOrder(cp.plan->stand_ins)) {
    if (std::find(cp.tops.begin(), cp.tops.end(), v) == cp.tops.end()) cp.tops.push_back(v);
  }
  if (cp.tops.empty()) return fail(Rejection::kStillUsed, "no top-level object could be removed");
  cp.lines = ExtractedLines(ctx.repo, cp.plan->extracted);
}

// Steps 3-7 for a plan: cut until no code that stays uses what goes.
CutPlan CutFromPlan(parser::PythonParser& parser, const ExtractContext& ctx, Plan plan,
                    const ExtractOptions& options) {
  CutPlan cp;
  cp.plan = std::move(plan);
  CutUntilStable(parser, ctx, options, cp);
  if (cp.rejection == Rejection::kNone && cp.lines < options.min_lines) {
    cp.rejection = Rejection::kTooFewLines;
    cp.detail = std::to_string(cp.lines) + " lines to implement (--min-lines " +
                std::to_string(options.min_lines) + ")";
  }
  return cp;
}

// Steps 2-7 for one F2P file: plan, then cut until no code that stays uses what goes.
CutPlan PlanAndCut(parser::PythonParser& parser, const ExtractContext& ctx, const PassingFile& f2p,
                   const ExtractOptions& options, const SelectOptions& select) {
  auto plan = PlanTask(ctx.repo, ctx.graph, ctx.passing, f2p, select, options.chooser);
  if (!plan.ok()) {
    CutPlan cp;
    cp.rejection = Rejection::kNoPlan;
    cp.detail = plan.error();
    return cp;
  }
  return CutFromPlan(parser, ctx, std::move(*plan), options);
}

// The top objects a plan chose, those demoted for P2P files included, sorted.
std::vector<Ent> ChosenTops(const Plan& plan) {
  std::vector<Ent> out = plan.top_objects;
  out.insert(out.end(), plan.demoted.begin(), plan.demoted.end());
  std::sort(out.begin(), out.end());
  return out;
}

// The deep retry: the most specific of the objects found deeper than the test file's own
// links, then, while that choice still leaves too little to cut, those up to twice as widely
// used, and so on up to --max-share (a choice already cut is not cut again). The first
// task made, else nothing.
std::optional<CutPlan> DeepRetry(parser::PythonParser& parser, const ExtractContext& ctx,
                                 const PassingFile& f2p, const ExtractOptions& options) {
  SelectOptions deep = options.select;
  deep.deep = true;
  std::set<std::vector<Ent>> tried;
  // Every deep candidate is used by at least one file: from a width of `limit` on, the
  // choice is the same (all up to --max-share), so that width is the last tried.
  const size_t limit = ShareLimit(ctx.graph, deep.max_share);
  for (bool last = false; !last; deep.deep_width *= 2) {
    last = static_cast<size_t>(std::max(1, deep.deep_width)) >= limit;
    auto plan = PlanTask(ctx.repo, ctx.graph, ctx.passing, f2p, deep, options.chooser);
    if (!plan.ok() || !tried.insert(ChosenTops(*plan)).second) continue;
    CutPlan deeper = CutFromPlan(parser, ctx, std::move(*plan), options);
    if (deeper.rejection == Rejection::kNone) return deeper;
  }
  return std::nullopt;
}

// What makes two plans the same cut: their top objects, P2P files and what they extract.
using PlanKey = std::tuple<std::vector<Ent>, std::vector<std::string>, std::set<Ent>>;
PlanKey KeyOf(const Plan& plan) { return {ChosenTops(plan), plan.p2p, plan.extracted}; }

// The learned retry: the model's choice plus up to 1, 2, 4, ... 64 of its next best items,
// until a choice leaves enough to cut (the model's own choice, already cut, and a choice
// already cut are not cut again). The first task made and the most items it could add, else
// nothing.
std::optional<std::pair<int, CutPlan>> LearnedRetry(parser::PythonParser& parser,
                                                    const ExtractContext& ctx,
                                                    const PassingFile& f2p,
                                                    const ExtractOptions& options) {
  SelectOptions more = options.select;
  std::set<PlanKey> tried;
  if (auto own = PlanTask(ctx.repo, ctx.graph, ctx.passing, f2p, more, options.chooser); own.ok()) {
    tried.insert(KeyOf(*own));
  }
  for (more.learned_more = 1; more.learned_more <= 64; more.learned_more *= 2) {
    auto plan = PlanTask(ctx.repo, ctx.graph, ctx.passing, f2p, more, options.chooser);
    if (!plan.ok() || !tried.insert(KeyOf(*plan)).second) continue;
    CutPlan cp = CutFromPlan(parser, ctx, std::move(*plan), options);
    if (cp.rejection == Rejection::kNone) return std::make_pair(more.learned_more, std::move(cp));
  }
  return std::nullopt;
}

// PlanAndCut with the default choice, then the retries when it leaves too little: the
// members chosen of a shared class leave too few lines (the class itself is tested), then
// the objects found deeper than the test file's own links (the feature is reached through
// the application); with the learned chooser, its next best items instead of the deeper
// objects (LearnedRetry). `detail` says which retry made the plan.
CutPlan PlanWithRetries(parser::PythonParser& parser, const ExtractContext& ctx,
                        const PassingFile& f2p, const ExtractOptions& options,
                        std::string* detail) {
  CutPlan cp = PlanAndCut(parser, ctx, f2p, options, options.select);
  if (cp.rejection == Rejection::kTooFewLines && cp.plan && cp.plan->member_tops) {
    SelectOptions whole = options.select;
    whole.whole_classes = true;
    CutPlan wide = PlanAndCut(parser, ctx, f2p, options, whole);
    if (wide.rejection == Rejection::kNone) {
      *detail = "classes taken whole (their specific methods alone: " + cp.detail + ")";
      return wide;
    }
  }
  bool too_little = cp.rejection == Rejection::kTooFewLines || cp.rejection == Rejection::kNoPlan ||
                    cp.rejection == Rejection::kStillUsed;
  if (too_little && !options.chooser && options.select.chooser == TopRule::kLearned) {
    if (auto more = LearnedRetry(parser, ctx, f2p, options)) {
      *detail = "the learned choice widened by up to " + std::to_string(more->first) +
                " of its next best items (its own: " + std::string(RejectionName(cp.rejection)) + ", " +
                cp.detail + ")";
      return std::move(more->second);
    }
    return cp;
  }
  if (too_little && !options.chooser && options.select.chooser != TopRule::kFeatureBench &&
      options.select.depth > 1 && !options.select.deep) {
    if (auto deeper = DeepRetry(parser, ctx, f2p, options)) {
      *detail = "objects up to " + std::to_string(options.select.depth) +
                " calls deep chosen (the direct choice: " + std::string(RejectionName(cp.rejection)) + ", " +
                cp.detail + ")";
      return std::move(*deeper);
    }
  }
  return cp;
}

// Why verification failed, read as names: the P2P failures' tracebacks name what is missing
// (NameError, AttributeError, ImportError); the extracted entities of those names must stay.
std::set<std::string> MissingNames(const std::vector<std::string>& messages) {
  static const std::regex kPatterns[] = {
      std::regex(R"(NameError: name '(\w+)' is not defined)"),
      std::regex(R"(has no attribute '(\w+)')"),
      std::regex(R"(AttributeError: (\w+)(?=[ \t]*(\n|$)))"),  // a module's __getattr__
      std::regex(R"(cannot import name '(\w+)')"),
      std::regex(R"(UnboundLocalError: .*'(\w+)')"),
  };
  std::set<std::string> out;
  for (const auto& message : messages) {
    // Line by line, each cut: libstdc++'s regex engine recurses once per character a match
    // spans, and the repository's tests print what they like (red team round 12).
    for (const auto& whole : util::Split(message, '\n')) {
      std::string m = whole.substr(0, 2000);
      for (const auto& re : kPatterns) {
        for (auto it = std::sregex_iterator(m.begin(), m.end(), re); it != std::sregex_iterator();
             ++it) {
          out.insert((*it)[1].str());
        }
      }
    }
  }
  return out;
}

// Changes the plan after a failed verification (FeatureBench's symbol protection, as a new
// plan): P2P tests that fail keep the extracted entities their errors name; an F2P file that
// still passes gets every object its tests call directly as a top object (what P2P files use
// stays anyway), and when they all are, the deep choice's. Returns what changed ("" when
// nothing can).
std::string RepairPlan(parser::PythonParser& parser, const ExtractContext& ctx,
                       const ExtractOptions& options, const taskdir::VerifyReport& r, CutPlan& cp) {
  Plan& plan = *cp.plan;
  std::string why;
  if (r.failure == taskdir::VerifyFailure::kP2P) {
    std::set<std::string> names = MissingNames(r.messages);
    std::set<Ent> keep;
    for (Ent v : plan.extracted) {
      if (names.count(ctx.repo.entity(v).name) && !plan.kept.count(v)) keep.insert(v);
    }
    if (keep.empty()) return "";
    plan.kept.insert(keep.begin(), keep.end());
    why = "P2P tests failed; kept";
    for (const auto& id : ctx.repo.Ids(keep)) why += " " + id;
  } else if (r.failure == taskdir::VerifyFailure::kF2PPasses) {
    std::vector<Ent> added;
    auto add = [&](Ent v) {
      if (std::find(plan.top_objects.begin(), plan.top_objects.end(), v) !=
              plan.top_objects.end() ||
          plan.kept.count(v)) {
        return;
      }
      plan.top_objects.push_back(v);
      added.push_back(v);
    };
    for (const auto& c : TopCandidates(ctx.repo, ctx.graph, plan.f2p, 1, plan.package_init)) {
      if (!IsTestHelper(ctx.repo, ctx.graph, c.entity, plan.f2p)) add(c.entity);
    }
    if (added.empty()) {  // every direct candidate is in: the feature lies deeper
      for (Ent v : DeepTopObjects(ctx.repo, ctx.graph, plan.f2p, options.select)) add(v);
    }
    if (added.empty()) return "";
    why = "the F2P file still passed; top objects added:";
    for (Ent v : added) why += " " + ctx.repo.id(v);
  } else {
    return "";
  }
  if (auto s = Reextract(ctx.repo, ctx.graph, &plan); !s.ok()) return "";
  CutUntilStable(parser, ctx, options, cp);
  if (cp.rejection != Rejection::kNone) return "";
  return why;
}

// Where a candidate whose verification failed keeps its evidence: OUT/rejected/<the F2P
// file's path, '/' as '.', without .py>.lv<level>.
std::string RejectedDir(const std::string& out_dir, const std::string& f2p, int level) {
  std::string name = f2p.ends_with(".py") ? f2p.substr(0, f2p.size() - 3) : f2p;
  std::replace(name.begin(), name.end(), '/', '.');
  return util::JoinPath(util::JoinPath(out_dir, "rejected"), name + ".lv" + std::to_string(level));
}

// Moves the task directory that failed verification to `evidence` (its instance.json, plan,
// patches and statement) with verification.txt: why, the tests that did not behave, the
// flaky ones, the repairs made before this round and the failing run's messages.
util::Status KeepEvidence(util::Env& env, const std::string& dir, const std::string& evidence,
                          const taskdir::VerifyReport& report,
                          const std::vector<std::string>& repairs) {
  (void)env.RemoveAll(evidence);
  if (auto s = env.MakeDirs(util::DirName(evidence)); !s.ok()) return s;
  if (auto s = env.Rename(dir, evidence); !s.ok()) return s;
  std::string text = "reason: " + report.reason + "\n";
  for (const auto& f : report.failures) text += "failed: " + f + "\n";
  for (const auto& id : report.flaky) text += "flaky: " + id + "\n";
  for (const auto& r : repairs) text += "repaired before: " + r + "\n";
  for (const auto& m : report.messages) text += "\n" + m + (m.ends_with('\n') ? "" : "\n");
  return env.WriteFileAtomic(util::JoinPath(evidence, "verification.txt"), text);
}

// The fields of instance.json that follow from the plan and its cut.
InstanceFields Fields(const ExtractContext& ctx, const ExtractOptions& options,
                      const PassingFile& f2p, const CutPlan& cp) {
  InstanceFields f;
  const Plan& plan = *cp.plan;
  f.plan = &plan;
  f.tops = cp.tops;
  f.lines = cp.lines;
  for (Ent v : plan.extracted) {
    if (ctx.repo.entity(v).kind != parser::EntityKind::kClass) ++f.functions;
  }
  for (const auto& [path, text] : cp.cut.texts) f.files.push_back(path);
  f.interfaces = Interfaces(ctx.repo, ctx.graph, f2p.file, cp.tops, plan.extracted);
  f.orphans = cp.cut.orphans;
  f.dangling = cp.cut.dangling;
  f.strict_references = options.strict_references;
  for (const auto& p : ctx.passing) {
    if (std::binary_search(plan.p2p.begin(), plan.p2p.end(), p.file)) {
      f.p2p_tests.insert(f.p2p_tests.end(), p.tests.begin(), p.tests.end());
    }
  }
  return f;
}

// One F2P file's task run: the plan and its cut, then each level's task directory written
// into the staging area, verified (level 1 repaired up to kMaxRepairs times) and published.
class TaskRun {
 public:
  TaskRun(const runner::Services& services, parser::PythonParser& parser,
          const ExtractContext& ctx, const PassingFile& f2p, const ExtractOptions& options)
      : services_(services), env_(services.env), launcher_(services.launcher),
        tests_(services.tests), parser_(parser), ctx_(ctx), f2p_(f2p),
        options_(options), staging_(util::JoinPath(options.out_dir, ".staging")),
        work_(util::JoinPath(options.out_dir, ".work")), start_(Clock::now()) {
    o_.f2p = f2p.file;
  }

  TaskOutcome Run() {
    cp_ = PlanWithRetries(parser_, ctx_, f2p_, options_, &o_.detail);
    if (cp_.rejection != Rejection::kNone) return Finish(cp_.rejection, cp_.detail);
    if (!options_.base_commit.empty()) {
      auto log = runner::MakeGit(services_, util::JoinPath(work_, "log"));
      std::tie(create_time_, upd_time_) = FileTimes(*log, ctx_.repo.root(), f2p_.file);
    }
    if (auto failed = Level1(); failed) return *failed;
    o_.lines = f_.lines;
    if (auto s = Publish(); !s.ok()) return Finish(Rejection::kIo, s.error());
    if (options_.level2) {
      if (auto held = WriteAndVerify(2); held.ok()) {
        if (auto s = Publish(); !s.ok()) return Finish(Rejection::kIo, s.error());
      } else if (const Rejected& why = held.failure();
                 why.rejection == Rejection::kIo || why.rejection == Rejection::kStatement) {
        return Finish(why.rejection, why.detail);
      } else {
        o_.detail += (o_.detail.empty() ? "" : "; ") + std::string("L2 not emitted: ") + why.detail;
      }
    }
    o_.emitted = true;
    return Finish(Rejection::kNone, o_.detail);
  }

 private:
  static constexpr int kMaxRepairs = 3;

  // Why one level's task directory does not hold: the rule that refused it and what it said,
  // with verification's report when verification refused it (a repair reads it).
  struct Rejected {
    Rejection rejection = Rejection::kIo;
    std::string detail;
    taskdir::VerifyReport report;
  };

  TaskOutcome Finish(Rejection rejection, std::string detail) {
    o_.rejection = rejection;
    o_.detail = std::move(detail);
    o_.fbkit_seconds =
        std::chrono::duration<double>(Clock::now() - start_).count() - o_.pytest_seconds;
    return o_;
  }

  // Level 1, repaired and verified again up to kMaxRepairs times; the outcome when it fails.
  std::optional<TaskOutcome> Level1() {
    for (int round = 0;; ++round) {
      f_ = Fields(ctx_, options_, f2p_, cp_);
      f_.create_time = create_time_;
      f_.upd_time = upd_time_;
      f_.digest = Digest(ctx_.repo, *cp_.plan);
      auto held = WriteAndVerify(1);
      if (held.ok()) return std::nullopt;
      const Rejected& why = held.failure();
      std::string repaired = why.rejection == Rejection::kVerificationFailed && round < kMaxRepairs
                                 ? RepairPlan(parser_, ctx_, options_, why.report, cp_)
                                 : "";
      if (repaired.empty()) {
        std::string failure = why.detail;
        if (!o_.repairs.empty()) {
          failure += " (after " + std::to_string(o_.repairs.size()) + " repairs)";
        }
        return Finish(why.rejection, failure);
      }
      o_.repairs.push_back(repaired);
    }
  }

  // Writes one level's task directory into the staging area and verifies it: verification's
  // report (an empty one under --no-verify), or why the level does not hold.
  util::Expected<taskdir::VerifyReport, Rejected> WriteAndVerify(int level) {
    f_.id = InstanceId(options_.id_scheme, options_.repo_name, options_.base_commit, f2p_.file,
                       f_.digest, level);
    f_.level = level;
    std::string dir = util::JoinPath(staging_, f_.id);
    if (auto written = Write(level, dir); !written.ok()) return written.failure();
    if (!options_.verify) return taskdir::VerifyReport{};
    return Verify(level, dir);
  }

  // The task directory of one level: its patches, problem statement and instance.json; the
  // same directory, or why it could not be written (kIo, kLevel2, kStatement).
  util::Expected<std::string, Rejected> Write(int level, const std::string& dir) {
    (void)env_.RemoveAll(dir);
    auto io = [](const std::string& detail) { return Rejected{Rejection::kIo, detail, {}}; };
    if (auto s = env_.MakeDirs(dir); !s.ok()) return io(s.error());
    auto git_ptr = runner::MakeGit(services_, dir);
    runner::Git& git = *git_ptr;
    const Plan& plan = *cp_.plan;
    StatementInput si{options_.repo_name, f2p_.file, cp_.tops, plan.extracted, f_.interfaces,
                      level, "", {}};
    if (level == 1) {
      auto patches = WritePresolved(env_, git, ctx_.repo, options_, dir, f2p_.file, cp_.cut.texts);
      if (!patches.ok()) return io(patches.error());
      f_.patches = *patches;
      f_.f2p_tests = plan.f2p_tests;
    } else {
      auto sources = PackageSourcesOf(env_, launcher_, ctx_.repo.root(), options_);
      auto l2 = sources.ok() ? WriteLevel2(env_, git, ctx_.repo, parser_, f2p_.file,
                                           plan.f2p_tests, cp_.tops, *sources, dir)
                             : util::Expected<Level2>(sources.failure());
      if (!l2.ok()) {
        (void)env_.RemoveAll(dir);
        return Rejected{Rejection::kLevel2, l2.error(), {}};
      }
      f_.patches = {l2->patch, l2->test_patch};
      f_.f2p_tests = l2->f2p_tests;
      si.package = l2->package;
      si.test_uses = l2->test_uses;
    }
    si.model = &options_.statement_model;
    si.trace = ctx_.trace;
    auto statement = ProblemStatement(ctx_.repo, si);
    if (!statement.ok()) {
      (void)env_.RemoveAll(dir);
      return Rejected{Rejection::kStatement, statement.error(), {}};
    }
    f_.statement = *statement;
    if (auto s = taskdir::WriteTaskFiles(env_, dir, ToInstance(ctx_.repo, options_, f_)); !s.ok()) {
      return io(s.error());
    }
    return dir;
  }

  // Verifies the staged task directory; keeps the evidence of a failure, leaves flaky tests
  // out of a task that holds. Every failure here is kVerificationFailed's.
  util::Expected<taskdir::VerifyReport, Rejected> Verify(int level, const std::string& dir) {
    auto refused = [](const std::string& detail, taskdir::VerifyReport report) {
      return Rejected{Rejection::kVerificationFailed, detail, std::move(report)};
    };
    taskdir::VerifyOptions vo;
    vo.f2p_max_pass = options_.f2p_max_pass;
    vo.work_dir = util::JoinPath(work_, f_.id);
    vo.sandbox = options_.spec.sandbox;
    vo.environment_cache = options_.spec.environment_cache;
    vo.env_root = ctx_.repo.root();
    vo.trust_settings = true;  // written a moment ago from the user's spec
    if (level == 2 && !o_.instance_ids.empty()) {
      vo.level1_dir = util::JoinPath(options_.out_dir, o_.instance_ids.front());
    }
    taskdir::VerifyReport report = taskdir::VerifyTask(services_, dir, vo);
    o_.pytest_runs += report.pytest_runs;
    o_.pytest_seconds += report.pytest_seconds;
    std::string evidence = RejectedDir(options_.out_dir, f2p_.file, level);
    if (!report.ok) {
      if (auto s = KeepEvidence(env_, dir, evidence, report, o_.repairs); !s.ok()) {
        return refused(s.error(), std::move(report));
      }
      std::string reason = report.reason;
      return refused(reason, std::move(report));
    }
    (void)env_.RemoveAll(evidence);  // an earlier round's or run's
    if (report.flaky.empty() && report.gold_test_file_reads.empty()) return report;
    f_.gold_test_file_reads = report.gold_test_file_reads;
    // Tests that changed their outcome between two runs of the same code leave the task.
    auto flaky = [&](const std::string& id) { return report.flaky.count(id) > 0; };
    std::erase_if(f_.f2p_tests, flaky);
    std::erase_if(f_.p2p_tests, flaky);
    o_.flaky.insert(o_.flaky.end(), report.flaky.begin(), report.flaky.end());
    if (auto s = taskdir::WriteTaskFiles(env_, dir, ToInstance(ctx_.repo, options_, f_)); !s.ok()) {
      return refused(s.error(), std::move(report));
    }
    return report;
  }

  util::Status Publish() {
    std::string final_dir = util::JoinPath(options_.out_dir, f_.id);
    (void)env_.RemoveAll(final_dir);
    if (auto s = env_.Rename(util::JoinPath(staging_, f_.id), final_dir); !s.ok()) return s;
    o_.instance_ids.push_back(f_.id);
    return util::Status::Ok();
  }

  const runner::Services& services_;
  util::Env& env_;
  sandbox::Launcher& launcher_;
  runner::TestRunner& tests_;
  parser::PythonParser& parser_;
  const ExtractContext& ctx_;
  const PassingFile& f2p_;
  const ExtractOptions& options_;
  const std::string staging_, work_;
  const Clock::time_point start_;
  TaskOutcome o_;
  CutPlan cp_;
  InstanceFields f_;
  std::string create_time_, upd_time_;
};

}  // namespace

TaskOutcome BuildTask(const runner::Services& services,
                      parser::PythonParser& parser,
                      const ExtractContext& ctx, const PassingFile& f2p,
                      const ExtractOptions& options) {
  return TaskRun(services, parser, ctx, f2p, options).Run();
}

}  // namespace fbkit::extract::make

#include "extract/make/all.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "parser/python_parser.h"
#include "runner/git.h"
#include "util/hash.h"
#include "util/json_read.h"
#include "util/json_writer.h"
#include "util/batch.h"
#include "util/shard.h"

namespace fbkit::extract::make {
namespace {

// When the test file was first committed (ISO 8601), from `git log --follow`; "" for a file
// git does not know; an error when git fails (no repository, a configuration refused).
util::Expected<std::string> FirstCommitted(runner::Git& git, const std::string& root,
                                           const std::string& file) {
  auto log = git.Run(root, {"log", "--diff-filter=A", "--follow", "--format=%cI", "--", file});
  if (!log.ok()) {
    return util::Error{"--after: when " + file + " was first committed: " + log.error()};
  }
  if (log->empty()) return std::string();
  std::string text = log->substr(0, log->find_last_not_of('\n') + 1);
  return text.substr(text.find_last_of('\n') == std::string::npos ? 0
                                                                  : text.find_last_of('\n') + 1);
}

std::string StatePath(const std::string& out, const std::string& f2p) {
  return util::JoinPath(util::JoinPath(out, ".fbkit/state"),
                        util::Sha256Hex(f2p).substr(0, 16) + ".json");
}

std::string StateJson(const TaskOutcome& o) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("detail"), w.String(o.detail);
  w.Key("emitted"), w.Bool(o.emitted);
  w.Key("f2p"), w.String(o.f2p);
  w.Key("flaky"), w.StringArray(o.flaky);
  w.Key("instance_ids"), w.StringArray(o.instance_ids);
  w.Key("lines"), w.Int(o.lines);
  w.Key("reason"), w.String(RejectionName(o.rejection));
  w.Key("repairs"), w.StringArray(o.repairs);
  w.EndObject();
  return out + "\n";
}

// This shard's candidates; files that cannot be one are counted in s->rejected. Fails when
// git cannot say when a file was first committed (--after).
util::Expected<std::vector<const PassingFile*>> Candidates(runner::Git& git, const AllInputs& in,
                                                           const AllOptions& all, AllSummary* s) {
  for (const auto& [file, why] : in.not_passing) {
    std::string reason = "not passing: " + why.substr(0, why.find(" ("));
    s->rejected[reason]++;
    s->left_out[file] = {reason, why};
  }
  std::vector<const PassingFile*> candidates;
  for (const auto& p : in.ctx.passing) {
    if (static_cast<int>(p.tests.size()) < all.min_points) {
      s->rejected["fewer than --min-points test points"]++;
      s->left_out[p.file] = {"fewer than --min-points test points",
                             std::to_string(p.tests.size()) + " test points (--min-points " +
                                 std::to_string(all.min_points) + ")"};
      continue;
    }
    if (!all.after.empty()) {
      auto first = FirstCommitted(git, in.ctx.repo.root(), p.file);
      if (!first.ok()) return first.failure();
      if (first->empty() || *first < all.after) {
        s->rejected["first committed before --after"]++;
        s->left_out[p.file] = {"first committed before --after",
                               first->empty() ? "never committed" : "first committed " + *first};
        continue;
      }
    }
    candidates.push_back(&p);
  }
  std::vector<const PassingFile*> mine;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (util::InShard(i, all.shard)) mine.push_back(candidates[i]);
  }
  return mine;
}

// Counts an emitted F2P file's L2 task, or why it has none.
void CountLevel2(const std::string& f2p, const std::vector<std::string>& ids,
                 const std::string& detail, AllSummary* s) {
  bool has =
      std::any_of(ids.begin(), ids.end(), [](const auto& id) { return id.ends_with(".lv2"); });
  if (has) ++s->level2;
  size_t at = detail.find("L2 not emitted: ");
  if (!has && at != std::string::npos) s->l2_rejected.emplace_back(f2p, detail.substr(at + 16));
}

// A candidate an earlier run finished, from its state file (nullopt without one); an
// unreadable state counts as rejected.
std::optional<TaskOutcome> Earlier(util::Env& env, const std::string& state_path,
                                   const std::string& f2p) {
  if (!env.Stat(state_path, true).ok()) return std::nullopt;
  TaskOutcome rejected;
  rejected.f2p = f2p;
  rejected.rejection = Rejection::kEarlierRun;
  auto text = env.ReadFile(state_path);
  auto state = nlohmann::json::parse(text.ok() ? *text : "", nullptr, false);
  if (!state.is_object()) return rejected;
  try {
    TaskOutcome o = rejected;
    o.emitted = state.value("emitted", false);
    o.rejection = o.emitted ? Rejection::kNone : RejectionFromName(state.value("reason", ""));
    o.detail = state.value("detail", "");
    o.instance_ids = util::JsonStringList(state, "instance_ids");
    o.repairs = util::JsonStringList(state, "repairs");
    o.flaky = util::JsonStringList(state, "flaky");
    return o;
  } catch (const nlohmann::json::exception&) {  // a field of the wrong type
    return rejected;
  }
}

// Adds a candidate: built by this run (its times and task directories count), or finished
// by an earlier run (`resumed`).
void Count(const TaskOutcome& o, bool resumed, AllSummary* s) {
  if (resumed) {
    ++s->resumed;
  } else {
    ++s->tried;
    s->fbkit_seconds += o.fbkit_seconds;
    s->pytest_seconds += o.pytest_seconds;
    s->pytest_runs += o.pytest_runs;
  }
  if (!o.emitted) {
    s->rejected[std::string(RejectionName(o.rejection))]++;
    s->left_out[o.f2p] = {std::string(RejectionName(o.rejection)), o.detail};
    return;
  }
  ++s->emitted;
  s->repaired += !o.repairs.empty();
  s->repair_rounds += static_cast<int>(o.repairs.size());
  s->flaky_tests += static_cast<int>(o.flaky.size());
  if (!resumed) s->instances += o.instance_ids.size();
  CountLevel2(o.f2p, o.instance_ids, o.detail, s);
}

}  // namespace

util::Expected<AllSummary> ExtractAll(
    const runner::Services& services,
    const AllInputs& inputs, const ExtractOptions& options, const AllOptions& all,
    const std::function<void(const util::BatchItem<TaskOutcome>&)>& report,
    const BuildStep& step) {
  [[maybe_unused]] auto& [env, launcher, tests, git_maker] = services;
  AllSummary s;
  s.shard = all.shard;
  s.test_files = inputs.test_files;
  auto git = runner::MakeGit(services, options.out_dir);
  auto candidates = Candidates(*git, inputs, all, &s);
  if (!candidates.ok()) return candidates.failure();
  std::vector<const PassingFile*> mine = std::move(*candidates);
  s.candidates = mine.size();
  int jobs = std::max(1, all.jobs);
  std::vector<std::unique_ptr<parser::PythonParser>> parsers;
  for (int j = 0; j < jobs; ++j) {
    auto p = parser::PythonParser::Create();
    if (!p.ok()) return p.failure();
    parsers.push_back(std::move(*p));
  }
  std::vector<char> resumed(mine.size(), 0);
  std::mutex mu;
  util::Batch<TaskOutcome> batch;
  batch.jobs = jobs;
  batch.earlier = [&](size_t i) -> std::optional<TaskOutcome> {
    if (all.rerun) return std::nullopt;
    auto o = Earlier(env, StatePath(options.out_dir, mine[i]->file), mine[i]->file);
    resumed[i] = o.has_value();
    return o;
  };
  batch.run = [&](size_t i, int worker) {
    int64_t down = options.model ? options.model->unavailable() : 0;
    TaskOutcome o = step ? step(*mine[i], options)
                         : BuildTask(services, *parsers[static_cast<size_t>(worker)], inputs.ctx,
                                     *mine[i], options);
    if (!o.emitted && options.model && options.model->unavailable() > down) {
      // The model could not answer (its endpoint, its command): no verdict on this
      // candidate, so nothing a rerun would take as final.
      o.rejection = Rejection::kModelUnavailable;
      return o;
    }
    std::string state = StatePath(options.out_dir, mine[i]->file);
    std::string name = state.substr(state.find_last_of('/') + 1);
    auto written = util::WriteFiles(env, util::DirName(state), {{name, StateJson(o)}});
    if (!written.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      s.write_errors.push_back(written.error());
    }
    return o;
  };
  batch.failed = [&](size_t i, const std::string& what) {
    // A bug on this candidate must not end the others' run; it is undecided (no state), so a
    // rerun builds it again, and the command's exit status says so.
    TaskOutcome o;
    o.f2p = mine[i]->file;
    o.rejection = Rejection::kInternalError;
    o.detail = what;
    return o;
  };
  batch.report = report;
  auto outcomes = util::RunBatch(mine.size(), batch);
  for (size_t i = 0; i < mine.size(); ++i) {
    Count(*outcomes[i], resumed[i], &s);
  }
  // Shards sharing OUT keep a summary each; a run without --shard over OUT afterwards finds
  // every candidate finished and writes the whole summary.
  if (options.model) s.model = model::UsageJson(*options.model);
  auto written = env.WriteFileAtomic(AllSummaryPath(options.out_dir, all.shard), AllSummaryJson(s));
  if (!written.ok()) return written.failure();
  return s;
}

std::string AllSummaryPath(const std::string& out_dir, const util::Shard& shard) {
  return util::JoinPath(out_dir, util::ShardFileName("summary", "json", shard));
}

std::string AllSummaryJson(const AllSummary& s) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("candidates"), w.Int(static_cast<int64_t>(s.candidates));
  w.Key("emitted"), w.Int(static_cast<int64_t>(s.emitted));
  w.Key("fbkit_ms"), w.Int(static_cast<int64_t>(s.fbkit_seconds * 1000));
  w.Key("flaky_tests"), w.Int(s.flaky_tests);
  w.Key("instances_this_run"), w.Int(static_cast<int64_t>(s.instances));
  // Of the emitted F2P files: how many got an L2 task, and why the others did not (the first
  // failing test and its error line, when verification failed).
  // Sorted by path: the rule, and the evidence for it.
  w.Key("left_out"), w.BeginArray();
  for (const auto& [file, why] : s.left_out) {
    w.BeginObject(), w.Key("detail"), w.String(why.detail), w.Key("file"), w.String(file);
    w.Key("reason"), w.String(why.reason), w.EndObject();
  }
  w.EndArray();
  w.Key("level2"), w.BeginObject();
  w.Key("emitted"), w.Int(static_cast<int64_t>(s.level2));
  w.Key("rejected"), w.BeginArray();
  for (const auto& [f2p, why] : s.l2_rejected) {
    w.BeginObject(), w.Key("f2p"), w.String(f2p), w.Key("reason"), w.String(why), w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  if (!s.model.empty()) w.Key("model"), w.Raw(s.model);
  w.Key("pytest_ms"), w.Int(static_cast<int64_t>(s.pytest_seconds * 1000));
  w.Key("pytest_runs"), w.Int(s.pytest_runs);
  w.Key("rejected"), w.BeginObject();
  for (const auto& [reason, n] : s.rejected) w.Key(reason), w.Int(static_cast<int64_t>(n));
  w.EndObject();
  w.Key("repaired"), w.BeginObject();
  w.Key("rounds"), w.Int(s.repair_rounds);
  w.Key("tasks"), w.Int(s.repaired);
  w.EndObject();
  w.Key("resumed"), w.Int(static_cast<int64_t>(s.resumed));
  w.Key("shard"), w.String(util::ShardName(s.shard));
  w.Key("test_files"), w.Int(static_cast<int64_t>(s.test_files));
  w.Key("tried"), w.Int(s.tried);
  w.EndObject();
  return out + "\n";
}

}  // namespace fbkit::extract::make

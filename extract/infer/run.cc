#include "extract/infer/run.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "agents/run_dir.h"
#include "util/shard.h"

namespace fbkit::extract::infer {
namespace {

using json = nlohmann::json;

// A result of an earlier run that is final (finished or timed out).
std::optional<InferResult> Earlier(util::Env& env, const std::string& dir) {
  auto text = env.ReadFile(agents::InferInstanceDir{dir}.result());
  if (!text.ok()) return std::nullopt;
  auto r = ParseInferResult(*text);
  if (!r.ok() || r->status == InferStatus::kError) return std::nullopt;
  return *r;
}

// RUN_DIR/predictions.jsonl from every instance directory with a final result (all shards
// that share RUN_DIR), sorted by instance id: SWE-bench's convention. Written a row at a
// time beside it, then renamed into place: one instance's row is held at once, never all
// (red team round 12: control characters, escaped six bytes each, made four rows 1.5 GB).
util::Status WritePredictions(util::Env& env, const std::string& run,
                              const std::map<std::string, std::string>& tasks) {
  agents::InferRunDir run_dir{run};
  std::string path = run_dir.predictions();
  std::string part = path + ".part";
  if (auto s = env.WriteFileAtomic(part, ""); !s.ok()) return s;
  for (const auto& [id, dir] : tasks) {
    agents::InferInstanceDir inst = run_dir.instance(id);
    auto r = Earlier(env, inst.dir);
    auto patch = env.ReadFile(inst.patch());
    auto model = env.ReadFile(inst.model());
    if (!r || !patch.ok() || !model.ok()) continue;
    json row = {{"instance_id", id}, {"model_name_or_path", *model}, {"model_patch", *patch}};
    if (auto s = env.AppendFile(part, row.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
        !s.ok()) {
      return s;
    }
  }
  return env.Rename(part, path);
}

// The run's summary: counts, agent exit codes, token IO, fbkit's own time per instance.
std::string Summary(const std::vector<InferResult>& results, const std::string& shard) {
  size_t finished = 0, timed_out = 0, errors = 0, empty = 0, with_usage = 0;
  double input = 0, output = 0, fbkit = 0;
  std::map<std::string, size_t> exits;
  for (const auto& r : results) {
    finished += r.status == InferStatus::kFinished;
    timed_out += r.status == InferStatus::kTimedOut;
    errors += r.status == InferStatus::kError;
    empty += r.status != InferStatus::kError && r.patch.empty();
    if (r.status == InferStatus::kFinished) {
      exits[r.signal ? "signal " + std::to_string(r.signal) : std::to_string(r.exit_code)]++;
    }
    if (r.usage) {
      ++with_usage;
      input += static_cast<double>(r.usage->input_tokens);
      output += static_cast<double>(r.usage->output_tokens);
    }
    fbkit += r.fbkit_seconds;
  }
  json j = {{"schema", "fbkit.infer-summary/1"},
            {"instances", results.size()},
            {"finished", finished},
            {"timed_out", timed_out},
            {"errors", errors},
            {"empty_patch", empty},
            {"agent_exit_codes", exits},
            {"instances_with_usage", with_usage},
            {"shard", shard}};
  auto mean = [&](double total) {
    return with_usage ? json(total / static_cast<double>(with_usage)) : json(nullptr);
  };
  j["mean_input_tokens"] = mean(input);
  j["mean_output_tokens"] = mean(output);
  double per = results.empty() ? 0.0 : fbkit / static_cast<double>(results.size());
  j["fbkit_seconds_per_instance"] = static_cast<int64_t>(per * 1000) / 1000.0;
  return j.dump(2) + "\n";
}

// A final result in an instance directory, with its patch.
std::optional<InferResult> FinalResult(util::Env& env, const std::string& instance_dir) {
  std::optional<InferResult> r = Earlier(env, instance_dir);
  if (r) {
    auto patch = env.ReadFile(agents::InferInstanceDir{instance_dir}.patch());
    r->patch = patch.ok() ? *patch : "";
  }
  return r;
}

}  // namespace

InferRunResult InferRun(
    util::Env& env, sandbox::Launcher& launcher, const InferRunOptions& options,
    const std::function<void(const util::BatchItem<InferResult>&)>& report,
    const AgentStep& step) {
  const std::string& run = options.infer.run_dir;
  const auto& mine = options.instances;
  util::Batch<InferResult> batch;
  batch.jobs = options.jobs;
  batch.earlier = [&](size_t i) -> std::optional<InferResult> {
    if (options.rerun) return std::nullopt;
    return FinalResult(env, agents::InferRunDir{run}.instance(mine[i].first).dir);
  };
  batch.run = [&](size_t i, int) {
    InferResult r = step ? step(mine[i].second, options.infer)
                         : RunAgent(env, launcher, mine[i].second, options.infer);
    agents::InferInstanceDir inst = agents::InferRunDir{run}.instance(mine[i].first);
    util::Status s = util::WriteFiles(env, inst.dir, {{agents::kModelFile, options.model},
                                                      {agents::kResultFile, InferResultJson(r)}});
    if (!s.ok()) {
      r.status = InferStatus::kError;
      r.error = "writing the result: " + s.error();
    }
    return r;
  };
  batch.failed = [&](size_t i, const std::string& what) {
    InferResult r;  // an error, so a rerun runs the instance again
    r.instance_id = mine[i].first;
    r.status = InferStatus::kError;
    r.error = "internal error: " + what;
    return r;
  };
  // The agent cannot start: the others would fail alike.
  batch.stops = [](const InferResult& r) { return r.could_not_start; };
  batch.report = report;
  InferRunResult out;
  for (auto& r : util::RunBatch(mine.size(), batch)) {
    if (r) out.results.push_back(std::move(*r));
  }
  {
    auto lock = env.LockFile(agents::InferRunDir{run}.lock());  // shards sharing RUN_DIR
    if (auto s = WritePredictions(env, run, options.tasks); !s.ok()) {
      out.error = s.error();
      return out;
    }
  }
  const auto& [k, n] = options.shard;
  out.summary_json = Summary(out.results, std::to_string(k) + "/" + std::to_string(n));
  auto written = env.WriteFileAtomic(agents::InferRunDir{run}.summary(options.shard), out.summary_json);
  if (!written.ok()) out.error = written.error();
  return out;
}

}  // namespace fbkit::extract::infer

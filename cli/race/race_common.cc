#include "cli/race/race_common.h"

#include <algorithm>
#include <cstdio>

#include "util/batch.h"
#include "util/shard.h"

namespace fbkit::cli::race {

util::Expected<std::string> ScratchDir(const std::string& given, const std::string& what) {
  if (!given.empty()) return given;
  return MakeScratchDir("race-" + what);
}

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
  AddSpecOptions(cmd, &a->spec_options, kSpecRun);
  cmd->add_option("--repo", a->repo,
                  "The repository every instance runs in, whatever its `repo` field says (an "
                  "instances file names host paths that fbkit clones and runs the tests of: "
                  "give this for a file you did not make)");
  cmd->add_option("--work-dir", a->work_dir, "Scratch directory (default: under $TMPDIR)");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
}

util::Expected<std::vector<groundtruth::Instance>> LoadInstances(util::Env& env,
                                                                 const std::string& path,
                                                                 const std::string& repo) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return text.failure();
  auto instances = groundtruth::ParseInstances(*text, path);
  if (!instances.ok()) return instances.failure();
  for (auto& i : *instances) {
    if (!repo.empty()) i.repo = repo;
    if (auto real = env.RealPath(i.repo); real.ok()) i.repo = *real;
  }
  return instances;
}

void Note(bool quiet, const std::string& cmd, const std::string& id, const std::string& what) {
  if (!quiet) std::fprintf(stderr, "fb-race %s: %s: %s\n", cmd.c_str(), id.c_str(), what.c_str());
}

std::string Summary(const groundtruth::Validation& v) {
  if (v.status != groundtruth::ValidationStatus::kOk) {
    return std::string(groundtruth::ValidationStatusName(v.status)) + ": " + v.reason;
  }
  return "ok (FAIL_TO_PASS " + std::to_string(v.fail_to_pass.size()) + ", PASS_TO_PASS " +
         std::to_string(v.pass_to_pass.size()) + ")";
}

Out RunInstances(
    const std::vector<groundtruth::Instance>& all, const RunArgs& a,
    const util::Shard& shard, const std::string& work,
    const std::function<Out(const groundtruth::Instance&, const std::string&, int)>& fn) {
  std::vector<const groundtruth::Instance*> mine;
  for (size_t i = 0; i < all.size(); ++i) {
    if (util::InShard(i, shard)) mine.push_back(&all[i]);
  }
  util::Batch<Out> batch;
  batch.jobs = a.jobs;
  batch.run = [&](size_t k, int worker) {
    return fn(*mine[k], util::JoinPath(work, std::to_string(k)), worker);
  };
  batch.failed = [&](size_t k, const std::string& what) {
    std::fprintf(stderr, "fb-race: %s: internal error: %s\n", mine[k]->instance_id.c_str(),
                 what.c_str());
    return Out{"", "", kExitFailure};
  };
  Out all_out;
  for (const auto& o : util::RunBatch(mine.size(), batch)) {
    all_out.text += o->text;
    all_out.text2 += o->text2;
    all_out.rc = std::max(all_out.rc, o->rc);
  }
  return all_out;
}

util::Expected<std::vector<std::unique_ptr<parser::PythonParser>>> Parsers(int jobs) {
  std::vector<std::unique_ptr<parser::PythonParser>> out;
  for (int i = 0; i < jobs; ++i) {
    auto p = parser::PythonParser::Create();
    if (!p.ok()) return p.failure();
    out.push_back(std::move(*p));
  }
  return out;
}

}  // namespace fbkit::cli::race

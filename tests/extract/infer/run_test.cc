// InferRun over the fakes, in memory (ninja's Builder test): which instances run, which an
// earlier run's final result resumes, what RUN_DIR holds after (result.json, model,
// predictions.jsonl, the summary), and that an agent that cannot start stops the batch.
#include "extract/infer/run.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "agents/run_dir.h"
#include "tests/testing/fake_env.h"
#include "tests/testing/no_launcher.h"
#include "util/strings.h"

namespace fbkit::extract::infer {
namespace {

const std::string kRoot = "/fbkit-fake-infer";  // exists only in the FakeEnv

InferRunOptions Options(const std::string& run, const std::vector<std::string>& ids) {
  InferRunOptions o;
  for (const auto& id : ids) {
    o.instances.emplace_back(id, kRoot + "/tasks/" + id);
    o.tasks[id] = kRoot + "/tasks/" + id;
  }
  o.model = "agent-x";
  o.infer.run_dir = run;
  return o;
}

InferResult Finished(const std::string& id, const std::string& patch) {
  InferResult r;
  r.instance_id = id;
  r.status = InferStatus::kFinished;
  r.exit_code = 0;
  r.patch = patch;
  return r;
}

struct Step {
  testing::FakeEnv& env;
  std::mutex mu;
  std::vector<std::string> tasks;  // task dirs run, in order
  InferResult operator()(const std::string& task_dir, const InferOptions& o) {
    std::string id = task_dir.substr(task_dir.rfind('/') + 1);
    {
      std::lock_guard<std::mutex> lock(mu);
      tasks.push_back(task_dir);
    }
    if (id == "t.c") {
      InferResult r;
      r.instance_id = id;
      r.error = "the workspace could not be made";
      return r;
    }
    std::string patch = "diff --git a/" + id + " b/" + id + "\n";
    env.AddFile(agents::InferRunDir{o.run_dir}.instance(id).patch(), patch);
    return Finished(id, patch);
  }
};

TEST(InferRunTest, RunsResumesAndWritesTheRunDirectoryInMemory) {
  testing::FakeEnv env;
  testing::NoLauncher launcher;
  const std::string run = kRoot + "/run";
  env.AddDir(run);
  // t.a finished in an earlier run: resumed, not run again.
  agents::InferInstanceDir a = agents::InferRunDir{run}.instance("t.a");
  env.AddFile(a.result(), agents::InferResultJson(Finished("t.a", "earlier\n")));
  env.AddFile(a.patch(), "earlier\n");
  env.AddFile(a.model(), "agent-x");
  Step step{env, {}, {}};
  auto o = Options(run, {"t.a", "t.b", "t.c"});
  std::vector<std::string> reported;
  auto out = InferRun(env, launcher, o, [&](const util::BatchItem<InferResult>& item) {
    reported.push_back(item.result->instance_id);
  }, std::ref(step));
  EXPECT_EQ(out.error, "");
  EXPECT_EQ(step.tasks, (std::vector<std::string>{kRoot + "/tasks/t.b", kRoot + "/tasks/t.c"}));
  ASSERT_EQ(out.results.size(), 3u);
  EXPECT_EQ(reported, (std::vector<std::string>{"t.a", "t.b", "t.c"}));
  agents::InferInstanceDir b = agents::InferRunDir{run}.instance("t.b");
  auto written = agents::ParseInferResult(env.Contents(b.result()));
  ASSERT_TRUE(written.ok()) << written.error();
  EXPECT_EQ(written->status, InferStatus::kFinished);
  EXPECT_EQ(env.Contents(b.model()), "agent-x");
  // predictions.jsonl: the final results only (t.c's error is not one), sorted by id.
  auto rows = util::Split(env.Contents(agents::InferRunDir{run}.predictions()), '\n');
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_NE(rows[0].find("\"instance_id\":\"t.a\""), std::string::npos) << rows[0];
  EXPECT_NE(rows[0].find("earlier"), std::string::npos) << rows[0];
  EXPECT_NE(rows[1].find("\"instance_id\":\"t.b\""), std::string::npos) << rows[1];
  EXPECT_EQ(rows[2], "");
  EXPECT_EQ(env.Contents(agents::InferRunDir{run}.summary(o.shard)), out.summary_json);
  EXPECT_NE(out.summary_json.find("\"errors\": 1"), std::string::npos) << out.summary_json;
  EXPECT_NE(out.summary_json.find("\"instances\": 3"), std::string::npos) << out.summary_json;

  // --rerun runs every instance again; t.c's error is never a result to resume.
  Step again{env, {}, {}};
  o.rerun = true;
  InferRun(env, launcher, o, [](const auto&) {}, std::ref(again));
  EXPECT_EQ(again.tasks.size(), 3u);
  o.rerun = false;
  Step resumed{env, {}, {}};
  InferRun(env, launcher, o, [](const auto&) {}, std::ref(resumed));
  EXPECT_EQ(resumed.tasks, std::vector<std::string>{kRoot + "/tasks/t.c"});

  EXPECT_EQ(launcher.starts, 0);
  EXPECT_FALSE(std::filesystem::exists(kRoot)) << "the run touched the disk";
}

TEST(InferRunTest, AnAgentThatCannotStartStopsTheBatch) {
  testing::FakeEnv env;
  testing::NoLauncher launcher;
  const std::string run = kRoot + "/stopped";
  env.AddDir(run);
  int calls = 0;
  auto out = InferRun(env, launcher, Options(run, {"t.1", "t.2", "t.3"}), [](const auto&) {},
                      [&](const std::string&, const InferOptions&) {
                        ++calls;
                        InferResult r;
                        r.error = "agent: not found";
                        r.could_not_start = true;
                        return r;
                      });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(out.results.size(), 1u);
  EXPECT_TRUE(env.Exists(agents::InferRunDir{run}.predictions()));
  EXPECT_EQ(env.Contents(agents::InferRunDir{run}.predictions()), "");
  EXPECT_FALSE(std::filesystem::exists(kRoot));
}

}  // namespace
}  // namespace fbkit::extract::infer

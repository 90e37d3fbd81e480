// ExtractAll over the fakes, in memory: which test files are candidates (and why the others
// are not), which an earlier run's state resumes, what OUT holds after (a state per decided
// candidate, the summary), and that a rerun builds them all again.
#include "extract/make/all.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "graph/dep_graph.h"
#include "tests/testing/fake_env.h"
#include "tests/testing/fake_test_runner.h"
#include "tests/testing/no_launcher.h"

namespace fbkit::extract::make {
namespace {

const std::string kRoot = "/fbkit-fake-all";  // exists only in the FakeEnv

PassingFile File(const std::string& file, size_t tests) {
  PassingFile f;
  f.file = file;
  for (size_t i = 0; i < tests; ++i) f.tests.push_back(file + "::test_" + std::to_string(i));
  return f;
}

TEST(ExtractAllTest, ChoosesResumesAndSummarisesInMemory) {
  testing::FakeEnv env;
  testing::NoLauncher launcher;
  testing::FakeTestRunner tests;
  env.AddDir(kRoot + "/repo");
  env.AddDir(kRoot + "/out");
  auto repo = Repo::Load(env, kRoot + "/repo", {});
  ASSERT_TRUE(repo.ok()) << repo.error();
  CutIndex index(*repo);
  graph::DepGraph graph;
  std::vector<PassingFile> passing = {File("tests/test_a.py", 12), File("tests/test_b.py", 3),
                                      File("tests/test_c.py", 10)};
  std::map<std::string, std::string> not_passing = {
      {"tests/test_d.py", "errors (collection: ImportError)"}};
  AllInputs inputs{ExtractContext{*repo, index, graph, passing}, not_passing, 4};
  ExtractOptions options;
  options.out_dir = kRoot + "/out";
  AllOptions all;
  std::mutex mu;
  std::vector<std::string> built;
  BuildStep step = [&](const PassingFile& f, const ExtractOptions&) {
    {
      std::lock_guard<std::mutex> lock(mu);
      built.push_back(f.file);
    }
    TaskOutcome o;
    o.f2p = f.file;
    if (f.file == "tests/test_a.py") {
      o.emitted = true;
      o.instance_ids = {"acme.test_a.lv1", "acme.test_a.lv2"};
      o.pytest_runs = 3;
    } else {
      o.rejection = Rejection::kTooFewLines;
      o.detail = "42 lines to implement (--min-lines 100)";
    }
    return o;
  };
  auto s = ExtractAll({env, launcher, tests}, inputs, options, all, [](const auto&) {}, step);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(built, (std::vector<std::string>{"tests/test_a.py", "tests/test_c.py"}));
  EXPECT_EQ(s->candidates, 2u);
  EXPECT_EQ(s->emitted, 1u);
  EXPECT_EQ(s->instances, 2u);
  EXPECT_EQ(s->level2, 1u);
  EXPECT_EQ(s->pytest_runs, 3);
  EXPECT_EQ(s->rejected["too few lines"], 1u);
  EXPECT_EQ(s->rejected["fewer than --min-points test points"], 1u);
  EXPECT_EQ(s->rejected["not passing: errors"], 1u);
  EXPECT_EQ(s->left_out["tests/test_c.py"].detail, "42 lines to implement (--min-lines 100)");
  EXPECT_EQ(env.Contents(AllSummaryPath(options.out_dir)), AllSummaryJson(*s));

  // Both decided candidates resume from their states; the summary counts them the same.
  built.clear();
  auto again = ExtractAll({env, launcher, tests}, inputs, options, all, [](const auto&) {}, step);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_TRUE(built.empty());
  EXPECT_EQ(again->resumed, 2u);
  EXPECT_EQ(again->emitted, 1u);
  EXPECT_EQ(again->instances, 0u);  // none written by this run
  EXPECT_EQ(again->rejected, s->rejected);
  all.rerun = true;
  auto rerun = ExtractAll({env, launcher, tests}, inputs, options, all, [](const auto&) {}, step);
  ASSERT_TRUE(rerun.ok()) << rerun.error();
  EXPECT_EQ(built.size(), 2u);

  EXPECT_EQ(launcher.starts, 0);
  EXPECT_TRUE(tests.requests.empty());
  EXPECT_FALSE(std::filesystem::exists(kRoot)) << "the run touched the disk";
}

}  // namespace
}  // namespace fbkit::extract::make

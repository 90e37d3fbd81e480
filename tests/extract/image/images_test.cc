// fb-extract images' run over fakes: the engine (FakeEngine) and the disk (FakeEnv).
#include "extract/image/images.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/testing/fake_env.h"
#include "tests/testing/fake_launcher.h"

namespace fbkit::extract::image {
namespace {

class FakeEngine : public Engine {
 public:
  std::set<std::string> present;
  std::set<std::string> failing;
  std::vector<std::string> built;
  util::Expected<bool> Has(const std::string& tag) override { return present.count(tag) > 0; }
  util::Status Build(const Recipe& recipe, const std::string&) override {
    if (failing.count(recipe.tag)) return util::Error{"STEP 2/3: RUN false"};
    built.push_back(recipe.tag);
    present.insert(recipe.tag);
    return util::Status::Ok();
  }
};

// A run's options over /out and /work (`base`: the user's base image, "" for fbkit's), and
// a launcher no process of which succeeds (these runs read no task).
ImagesOptions Options(const std::string& base) {
  ImagesOptions o;
  o.recipes.out_dir = "/out";
  o.recipes.base = base;
  o.recipes.work_dir = "/work";
  return o;
}

testing::FakeLauncher NoProcess() {
  return testing::FakeLauncher([](const sandbox::ProcessSpec&) { return testing::FakeLauncher::Exit(1, "no"); });
}

TEST(ImageNamePart, LowerCaseAndSeparatorsOnly) {
  EXPECT_EQ(ImageNamePart("Pallets/Click"), "pallets-click");
  EXPECT_EQ(ImageNamePart("__x.lv1"), "x.lv1");
  EXPECT_EQ(ImageNamePart("..."), "x");
  EXPECT_EQ(ImageNamePart("a b:c"), "a-b-c");
}

TEST(PytestScript, TheSpecsPathsVariablesAndArguments) {
  std::string sh = PytestScript(
      R"({"pythonpath":["src","/opt/x"],"env":{"A":"it's"},"pytest_args":["-x","-k","a b"]})");
  EXPECT_NE(sh.find("PYTHONPATH=\"$tree\"/'src':'/opt/x'${PYTHONPATH:+:$PYTHONPATH}"), std::string::npos) << sh;
  EXPECT_NE(sh.find("export A='it'\\''s'"), std::string::npos) << sh;
  EXPECT_NE(sh.find("-rfEsxXp -p no:cacheprovider --color=no '-x' '-k' 'a b' \"$@\""), std::string::npos) << sh;
}

TEST(FailedStep, TheLastStepTheBuildReached) {
  EXPECT_EQ(FailedStep("STEP 1/3: FROM x\n--> 1\nSTEP 2/3: RUN false\nError: ..."), "STEP 2/3: RUN false");
  EXPECT_EQ(FailedStep("Step 4/9 : RUN make\n"), "Step 4/9 : RUN make");
  EXPECT_EQ(FailedStep("no steps\n"), "");
}

TEST(MakeImages, OneBadTaskDirectoryIsItsOwnErrorAndTheManifestSaysSo) {
  testing::FakeEnv env;
  testing::FakeLauncher launcher = NoProcess();
  env.AddDir("/out");
  FakeEngine engine;
  ImagesOptions o = Options("localhost/base:1");
  auto run = MakeImages(env, launcher, &engine, {"/nowhere/a.lv1", "/nowhere/b.lv1"}, o);
  ASSERT_TRUE(run.ok()) << run.error();
  ASSERT_EQ(run->tasks.size(), 2u);
  for (const auto& t : run->tasks) EXPECT_NE(t.error.find("/nowhere/"), std::string::npos) << t.error;
  EXPECT_TRUE(engine.built.empty());  // no base recipe to build: the user gave one
  auto manifest = ReadManifest(env, "/out/images.json");
  ASSERT_TRUE(manifest.ok()) << manifest.error();
  ASSERT_EQ(manifest->size(), 2u);
  EXPECT_FALSE((*manifest)[0].error.empty());
}

TEST(MakeImages, FbkitsBaseRecipeIsWrittenWhenTheUserNamesNoBase) {
  testing::FakeEnv env;
  testing::FakeLauncher launcher = NoProcess();
  env.AddDir("/out");
  FakeEngine engine;
  ImagesOptions o = Options("");
  auto base = WriteBaseRecipe(env, o.recipes);
  ASSERT_TRUE(base.ok());
  engine.failing.insert(base->tag);
  auto run = MakeImages(env, launcher, &engine, {"/nowhere/a.lv1"}, o);
  ASSERT_TRUE(run.ok()) << run.error();
  EXPECT_EQ(run->base, base->tag);
  EXPECT_NE(env.ReadFile("/out/base/Dockerfile")->find("FROM debian:bookworm-slim"), std::string::npos);
}

TEST(ManifestJson, ReadBackAsWritten) {
  ImagesRun run;
  run.base = "b:1";
  run.engine = true;
  TaskImages t;
  t.task_dir = "/tasks/x.lv1";
  t.recipes.instance_id = "x.lv1";
  t.recipes.environment = {"/out/env/abc", "fbkit/env-x:abc", true};
  t.recipes.task = {"/out/task/x.lv1", "fbkit/task-x.lv1:def", false};
  run.tasks.push_back(t);
  testing::FakeEnv env;
  env.AddDir("/out");
  ASSERT_TRUE(env.WriteFileAtomic("/out/images.json", ManifestJson(run, "/out")).ok());
  auto back = ReadManifest(env, "/out/images.json");
  ASSERT_TRUE(back.ok()) << back.error();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].recipes.environment.dir, "/out/env/abc");
  EXPECT_EQ((*back)[0].recipes.task.tag, "fbkit/task-x.lv1:def");
  EXPECT_TRUE((*back)[0].recipes.environment.network);
  EXPECT_EQ(ManifestJson(run, "/out"), ManifestJson(run, "/out"));
}

}  // namespace
}  // namespace fbkit::extract::image

// The task directory's format (extract/taskdir/task_dir.h): what is written is read back whole, for
// a task fbkit made and for an imported FeatureBench row; the older schema still reads; an
// L2 task finds its L1 sibling or says why not; errors name the file.
#include "extract/taskdir/task_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>


#include "tests/testing/fake_env.h"

namespace fbkit::extract::taskdir {
namespace {

Instance Made() {
  Instance i;
  i.instance_id = "o__r.0123abcd.test_x.00112233.lv1";
  i.repo = "o/r";
  i.base_commit = "0123abcd";
  i.level = 1;
  i.f2p_files = {"tests/test_x.py"};
  i.p2p_files = {"tests/test_y.py"};
  i.f2p_tests = {"tests/test_x.py::test_a", "tests/test_x.py::test_b"};
  i.p2p_tests = {"tests/test_y.py::test_c"};
  i.top_objects = {"pkg/x.py:X"};
  i.patch = "diff --git a/pkg/x.py b/pkg/x.py\n";
  i.test_patch = "diff --git a/tests/test_x.py b/tests/test_x.py\n";
  i.problem_statement = "## Task\n\"quoted\" \xc3\xa9\n";
  i.spec.python = "/usr/bin/python3";
  i.spec.pythonpath = {"src"};
  i.cap = 4000;
  i.create_time = "2020-01-02 03:04:05";
  i.upd_time = "2021-01-02 03:04:05";
  i.extracted = {"pkg/x.py:X", "pkg/x.py:X.f"};
  i.extracted_files = {"pkg/x.py"};
  i.interfaces = {"pkg/x.py:X.f"};
  i.functions = 1;
  i.lines = 120;
  i.model_json = R"({"name":"scripted","prompts":"abc"})";
  i.seed = 42;
  return i;
}

TEST(TaskDirTest, AMadeTaskIsReadBackWhole) {
  testing::FakeEnv env;
  env.AddDir("/t/task.lv1");
  Instance made = Made();
  ASSERT_TRUE(WriteTaskFiles(env, "/t/task.lv1", made).ok());
  EXPECT_EQ(env.Contents("/t/task.lv1/patch.diff"), made.patch);
  EXPECT_EQ(env.Contents("/t/task.lv1/test_patch.diff"), made.test_patch);
  EXPECT_EQ(env.Contents("/t/task.lv1/problem_statement.md"), made.problem_statement);
  EXPECT_TRUE(IsTaskDir(env, "/t/task.lv1"));
  auto back = ReadInstance(env, TaskDir{"/t/task.lv1"});
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->instance_id, made.instance_id);
  EXPECT_EQ(back->f2p_tests, made.f2p_tests);
  EXPECT_EQ(back->p2p_tests, made.p2p_tests);
  EXPECT_EQ(back->p2p_files, made.p2p_files);
  EXPECT_EQ(back->spec.pythonpath, made.spec.pythonpath);
  EXPECT_EQ(back->problem_statement, made.problem_statement);
  EXPECT_EQ(back->extracted, made.extracted);
  EXPECT_EQ(back->lines, 120);
  EXPECT_EQ(back->seed, 42u);
  EXPECT_FALSE(back->imported);
  // Written again from what was read: the same bytes.
  EXPECT_EQ(InstanceJson(*back), env.Contents("/t/task.lv1/instance.json"));
}

TEST(TaskDirTest, TheGoldsReadsOfTestFilesAreWrittenOnlyWhenThereAreSome) {
  Instance i;
  i.instance_id = "x.lv1";
  EXPECT_EQ(InstanceJson(i).find("gold_test_file_reads"), std::string::npos);
  i.gold_test_file_reads = {{"src/a.py", "reads the grader's test file tests/test_a.py"}};
  auto back = ParseInstance(InstanceJson(i));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->gold_test_file_reads, i.gold_test_file_reads);
}

TEST(TaskDirTest, AnImportedRowKeepsItsOwnSettingsAndNoneOfFbkitsFields) {
  Instance i = Made();
  i.imported = true;
  i.featurebench_repo_settings = R"({"python":"3.11"})";
  std::string json = InstanceJson(i);
  EXPECT_NE(json.find(R"("imported":true)"), std::string::npos);
  EXPECT_EQ(json.find(R"("cap")"), std::string::npos);
  EXPECT_EQ(json.find(R"("interfaces")"), std::string::npos);
  auto back = ParseInstance(json);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_TRUE(back->imported);
  EXPECT_EQ(back->featurebench_repo_settings, i.featurebench_repo_settings);
  EXPECT_EQ(InstanceJson(*back), json);
}

TEST(TaskDirTest, TheFirstSchemaKeptTestIdsInThePointsFields) {
  auto v1 = ParseInstance(
      R"({"instance_id":"a.lv1","repo_settings":"{}","f2p_test_points":["t.py::a"],)"
      R"("p2p_test_points":["u.py::b"]})");
  ASSERT_TRUE(v1.ok()) << v1.error();
  EXPECT_EQ(v1->f2p_tests, std::vector<std::string>{"t.py::a"});
  EXPECT_EQ(v1->p2p_tests, std::vector<std::string>{"u.py::b"});
}

TEST(TaskDirTest, ErrorsNameTheFile) {
  testing::FakeEnv env;
  env.AddFile("/t/bad.lv1/instance.json", "{\"repo\": ");
  auto bad = ReadInstance(env, TaskDir{"/t/bad.lv1"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("/t/bad.lv1/instance.json"), std::string::npos) << bad.error();
  // An id becomes a directory of eval's and infer's run (red team round 3: "../VICTIM" made
  // infer clear a directory beside its run).
  env.AddFile("/t/up.lv1/instance.json", R"({"instance_id":"../VICTIM","repo_settings":"{}"})");
  auto up = ReadInstance(env, TaskDir{"/t/up.lv1"});
  ASSERT_FALSE(up.ok());
  EXPECT_NE(up.error().find("instance_id '../VICTIM' cannot name a directory"), std::string::npos)
      << up.error();
  env.AddFile("/t/noid.lv1/instance.json", R"({"repo_settings":"{}"})");
  auto noid = ReadInstance(env, TaskDir{"/t/noid.lv1"});
  ASSERT_FALSE(noid.ok());
  EXPECT_NE(noid.error().find("instance_id"), std::string::npos) << noid.error();
  // A task directory is untrusted: its instance.json is never read through a link (red team
  // round 5, H6: a link to /dev/zero exhausted the host's memory).
  env.AddFile("/home/u/secret.json", R"({"instance_id":"x","repo_settings":"{}"})");
  env.AddSymlink("/t/link.lv1/instance.json", "/home/u/secret.json");
  auto link = ReadInstance(env, TaskDir{"/t/link.lv1"});
  ASSERT_FALSE(link.ok());
  EXPECT_NE(link.error().find("/t/link.lv1/instance.json: cannot open"), std::string::npos)
      << link.error();
  EXPECT_EQ(env.reads("/home/u/secret.json"), 0);
  auto missing = ReadInstance(env, TaskDir{"/t/none.lv1"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("/t/none.lv1/instance.json"), std::string::npos);
  EXPECT_FALSE(IsTaskDir(env, "/t/none.lv1"));
}

TEST(TaskDirTest, AnL2TaskFindsItsL1SiblingOrSaysWhyNot) {
  testing::FakeEnv env;
  env.AddDir("/t/a.lv1/presolved");
  auto l1 = Level1Task(env, TaskDir{"/t/a.lv2"});
  ASSERT_TRUE(l1.ok()) << l1.error();
  EXPECT_EQ(l1->dir, "/t/a.lv1");
  EXPECT_EQ(l1->patch(), "/t/a.lv1/patch.diff");
  auto given = Level1Task(env, TaskDir{"/t/b.lv2"}, "/t/a.lv1");
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->dir, "/t/a.lv1");
  auto none = Level1Task(env, TaskDir{"/t/b.lv2"});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("/t/b.lv1"), std::string::npos) << none.error();
}

// Git reads presolved/ for eval, verify and infer: a link or a gitfile there would hand it
// another repository of the host (red team round 6, H2), so each of them asks this first.
TEST(TaskDirTest, PresolvedIsAPlainRepositoryOrNamedAsNotOne) {
  testing::FakeEnv env;
  env.AddDir("/t/ok.lv1/presolved/.git");
  auto ok = PlainPresolved(env, TaskDir{"/t/ok.lv1"});
  ASSERT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(*ok, "/t/ok.lv1/presolved");
  env.AddDir("/home/u/repo/.git");
  env.AddSymlink("/t/link.lv1/presolved", "/home/u/repo");
  env.AddDir("/t/gitfile.lv1/presolved");
  env.AddFile("/t/gitfile.lv1/presolved/.git", "gitdir: /home/u/repo/.git\n");
  env.AddDir("/t/gitlink.lv1/presolved");
  env.AddSymlink("/t/gitlink.lv1/presolved/.git", "/home/u/repo/.git");
  for (std::string bad : {"/t/link.lv1/presolved", "/t/gitfile.lv1/presolved/.git",
                          "/t/gitlink.lv1/presolved/.git", "/t/none.lv1/presolved"}) {
    auto r = PlainPresolved(env, TaskDir{bad.substr(0, bad.find("/presolved"))});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error(), bad + ": not a directory (a task's presolved/ and its .git are plain "
                               "directories)");
  }
}

}  // namespace
}  // namespace fbkit::extract::taskdir

namespace fbkit::extract::taskdir {
namespace {

TEST(TaskDirTest, TheGradersFilesAreEveryRegularFileOfTestCode) {
  testing::FakeEnv env;
  for (const char* f : {"tests/helpers.py", "tests/data/expected.json", "tests/test_a.py",
                        "src/pkg/core.py", "src/pkg/conftest.py", "check_b.py", ".git/config",
                        "sub/test/util.py", "sub/.git/tests/test_hook.py"}) {
    env.AddFile(std::string("/tree/") + f, "x\n");
  }
  env.AddSymlink("/tree/tests/linked.py", "/etc/passwd");
  EXPECT_EQ(GraderFiles(env, "/tree", {"check_b.py"}),
            (std::vector<std::string>{"check_b.py", "src/pkg/conftest.py", "sub/test/util.py",
                                      "tests/data/expected.json", "tests/helpers.py",
                                      "tests/test_a.py"}));
}

}  // namespace
}  // namespace fbkit::extract::taskdir

// End-to-end: `fb-extract export` and `fb-extract lite` on the tasks tests/cli/make_tasks.sh
// makes once (ctest fixture infer_tasks): FeatureBench rows with FeatureBench's ids, field
// types and patch semantics (checked with FeatureBench's own rules by featurebench_rules.py
// when a FeatureBench checkout is given), SWE-bench rows whose test ids are the task's, a
// seeded Lite list that the other commands accept, `import` of the rows back into the same
// task directories (which eval grades), and clear errors for bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include "tests/testing/e2e.h"
#include "tests/testing/run.h"

namespace fbkit::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kData = FBKIT_INFER_DATA;

std::vector<json> Rows(const std::string& text) {
  std::vector<json> rows;
  size_t b = 0;
  while (b < text.size()) {
    size_t e = text.find('\n', b);
    rows.push_back(json::parse(text.substr(b, e - b)));  // plain json per line
    b = e + 1;
  }
  return rows;
}

json Instance(const std::string& id) {
  return json::parse(ReadFileOrDie(kTasks + "/" + id + "/instance.json"));
}

std::string Md5Hex8(const std::string& s) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), d, &n, EVP_md5(), nullptr);
  char hex[9];
  for (int i = 0; i < 4; ++i) std::snprintf(hex + 2 * i, 3, "%02x", d[i]);
  return hex;
}

TEST(ExportE2E, FeatureBenchRowsHaveItsIdsFieldsAndPatchSemantics) {
  ScratchDir dir;
  auto r = RunCommand({kExtract, "export", kTasks, "-o", dir / "fb.jsonl", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = Rows(ReadFileOrDie(dir / "fb.jsonl"));
  ASSERT_EQ(rows.size(), 4u);
  auto first = nlohmann::ordered_json::parse(ReadFileOrDie(dir / "fb.jsonl").substr(
      0, ReadFileOrDie(dir / "fb.jsonl").find('\n')));
  std::vector<std::string> keys;  // FeatureBench's dataset card order
  for (const auto& [k, v] : first.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"instance_id", "patch", "test_patch", "FAIL_TO_PASS",
                                            "PASS_TO_PASS", "image_name", "repo", "base_commit",
                                            "problem_statement", "repo_settings"}));
  std::string commit = Instance(rows[0]["instance_id"])["base_commit"];
  ASSERT_EQ(commit.size(), 40u);
  for (const auto& row : rows) {
    std::string id = row["instance_id"];
    std::string f2p = row["FAIL_TO_PASS"][0];
    std::string stem = fs::path(f2p).stem();
    std::string level = id.substr(id.size() - 3);
    EXPECT_EQ(id, "fbkit-fixtures__extract_features." + commit.substr(0, 8) + "." + stem + "." +
                      Md5Hex8(f2p) + "." + level);
    EXPECT_EQ(row["repo"], "fbkit-fixtures/extract_features");
    EXPECT_TRUE(row["repo_settings"].is_string());
    EXPECT_TRUE(json::parse(row["repo_settings"].get<std::string>()).contains("test_cmd"));
    std::string tp = row["test_patch"];
    if (level == "lv1") {
      // The mask goes from the original to the pre-solved code and never touches the tests;
      // the test patch deletes the F2P file (the harness applies it in reverse).
      EXPECT_EQ(row["patch"].get<std::string>().find("+++ b/" + f2p), std::string::npos);
      EXPECT_NE(tp.find("deleted file mode"), std::string::npos);
      EXPECT_NE(tp.find("+++ /dev/null"), std::string::npos);
      EXPECT_EQ(row["PASS_TO_PASS"], Instance(id)["PASS_TO_PASS"]);
      EXPECT_FALSE(row["PASS_TO_PASS"].empty());
    } else {
      // L2: the test file is rewritten in place in the original repository; no P2P.
      EXPECT_NE(tp.find("--- a/" + f2p + "\n+++ b/" + f2p), std::string::npos) << tp;
      EXPECT_EQ(tp.find("new file mode"), std::string::npos);
      EXPECT_TRUE(row["PASS_TO_PASS"].empty());
    }
  }
  // An L2 row is graded in its L1 sibling's FeatureBench image, by the image's pytest.sh.
  std::map<std::string, std::string> image_of;
  for (const auto& row : rows) image_of[row["instance_id"]] = row["image_name"];
  for (const auto& row : rows) {
    std::string id = row["instance_id"];
    EXPECT_EQ(json::parse(row["repo_settings"].get<std::string>())["test_cmd"], "/fbkit/pytest.sh");
    if (!id.ends_with(".lv2")) continue;
    std::string sibling = id.substr(0, id.size() - 1) + "1";
    ASSERT_TRUE(image_of.count(sibling)) << id;
    EXPECT_EQ(row["image_name"], image_of[sibling]);
    EXPECT_NE(row["image_name"].get<std::string>().find("featurebench-"), std::string::npos);
  }
}

// FeatureBench's own rules rebuild fbkit's trees (skipped without a FeatureBench checkout:
// CMake's FBKIT_FEATUREBENCH_SRC).
TEST(ExportE2E, FeatureBenchsOwnRulesRebuildTheTasksByteForByte) {
  ScratchDir dir;
  ASSERT_EQ(RunCommand({kExtract, "export", kTasks, "-o", dir / "fb.jsonl", "-q"}).exit_code, 0);
  auto rules = RunCommand({kPython, kSource + "/tests/cli/featurebench_rules.py", dir / "fb.jsonl",
                           kTasks, kData + "/repo", "--featurebench", FBKIT_FEATUREBENCH_SRC});
  if (rules.exit_code == 77) GTEST_SKIP() << rules.out;
  EXPECT_EQ(rules.exit_code, 0) << rules.out << rules.err;
  EXPECT_NE(rules.out.find("4 rows, 4 identical, 0 failed"), std::string::npos) << rules.out;
}

TEST(ExportE2E, SweBenchRowsCarryTheTasksTestIdsAsJsonStrings) {
  ScratchDir dir;
  auto r = RunCommand({kExtract, "export", kTasks, "--format", "swebench", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = Rows(r.out);
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    json inst = Instance(row["instance_id"]);
    for (const char* key : {"instance_id", "repo", "base_commit", "patch", "test_patch",
                            "problem_statement", "FAIL_TO_PASS", "PASS_TO_PASS", "version",
                            "environment_setup_commit", "created_at", "hints_text"}) {
      ASSERT_TRUE(row.contains(key) && row[key].is_string()) << key;
    }
    EXPECT_EQ(json::parse(row["FAIL_TO_PASS"].get<std::string>()), inst["f2p_tests"]);
    EXPECT_EQ(json::parse(row["PASS_TO_PASS"].get<std::string>()), inst["p2p_tests"]);
    if (inst["level"] == 1) {
      EXPECT_EQ(row["patch"], inst["patch"]);
    }
  }
}

TEST(ExportE2E, LiteIsASeededSubsetThatOtherCommandsReadAsATaskList) {
  ScratchDir dir;
  auto a = RunCommand({kExtract, "lite", kTasks, "--size", "2", "--seed", "7", "-o", dir / "a.txt"});
  auto b = RunCommand({kExtract, "lite", kTasks, "--size", "2", "--seed", "7", "-o", dir / "b.txt"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(ReadFileOrDie(dir / "a.txt"), ReadFileOrDie(dir / "b.txt"));
  auto all = RunCommand({kExtract, "lite", kTasks, "--size", "30"});
  ASSERT_EQ(all.exit_code, 0);
  EXPECT_NE(all.out.find("(4 of 4 tasks)"), std::string::npos) << all.out;
  auto rows = RunCommand({kExtract, "export", dir / "a.txt", "-q"});
  ASSERT_EQ(rows.exit_code, 0) << rows.err;
  EXPECT_EQ(Rows(rows.out).size(), 2u);
}

std::string TreeOf(const std::string& repo) {
  auto r = RunCommand({"/usr/bin/git", "-C", repo, "rev-parse", "HEAD^{tree}"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.size(), 41u) << repo;  // a tree id and a newline
  return r.out;
}

TEST(ExportE2E, ImportTurnsFeatureBenchRowsBackIntoTheSameTasksThatEvalGrades) {
  ScratchDir dir;
  ASSERT_EQ(RunCommand({kExtract, "export", kTasks, "-o", dir / "fb.jsonl", "-q"}).exit_code, 0);
  auto im = RunCommand({kExtract, "import", dir / "fb.jsonl", "--repo", kData + "/repo", "-o",
                        dir / "tasks", "--python", kPython, "-q"});
  ASSERT_EQ(im.exit_code, 0) << im.err;
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(kTasks)) {
    if (!fs::exists(e.path() / "instance.json")) continue;
    ++n;
    std::string id = e.path().filename();
    fs::path back = fs::path(dir / "tasks") / id;
    for (const char* f : {"patch.diff", "test_patch.diff", "problem_statement.md"}) {
      EXPECT_EQ(ReadFileOrDie(back / f), ReadFileOrDie(e.path() / f)) << id << " " << f;
    }
    json a = Instance(id), b = json::parse(ReadFileOrDie(back / "instance.json"));
    for (const char* key : {"f2p_tests", "p2p_tests"}) {
      auto x = a[key].get<std::vector<std::string>>(), y = b[key].get<std::vector<std::string>>();
      std::sort(x.begin(), x.end());
      std::sort(y.begin(), y.end());
      EXPECT_EQ(x, y) << id << " " << key;
    }
    if (id.ends_with(".lv1")) {
      EXPECT_EQ(TreeOf(back / "presolved"), TreeOf(e.path() / "presolved"));
    }
  }
  EXPECT_EQ(n, 4u);
  auto eval = RunCommand({kExtract, "eval", dir / "tasks", "--gold", "-o", dir / "eval", "-q"});
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_EQ(json::parse(ReadFileOrDie(dir / "eval/summary.json"))["resolved"], 4);
}

TEST(ExportE2E, VerifyNamesTheFirstFailingTestAndItsErrorLine) {
  // An L2 task whose gold agent_code computes a wrong mean: verification fails and says
  // which test failed first and with which error line (summary.json's level2 list too).
  ScratchDir dir;
  fs::create_directories(dir / "tasks");
  for (const auto& e : fs::directory_iterator(kTasks)) {
    if (e.path().filename().string().find(".test_stats.") != std::string::npos) {
      fs::copy(e.path(), fs::path(dir / "tasks") / e.path().filename(), fs::copy_options::recursive);
    }
  }
  std::string l2;
  for (const auto& e : fs::directory_iterator(dir / "tasks")) {
    if (e.path().string().ends_with(".lv2")) l2 = e.path();
  }
  ASSERT_FALSE(l2.empty());
  std::string patch = ReadFileOrDie(l2 + "/patch.diff");
  size_t at = patch.find("+    return sum(values) / len(values)\n");
  ASSERT_NE(at, std::string::npos);
  patch.replace(at, std::string("+    return sum(values) / len(values)").size(),
                "+    return sum(values) / len(values) + 1");
  WriteFileOrDie(l2 + "/patch.diff", patch);
  auto r = RunCommand({kExtract, "verify", l2});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tests still fail (first: F2P tests/test_stats.py::"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(" failed: E "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("assert"), std::string::npos) << r.err;
}

TEST(ExportE2E, BadInputGetsClearErrorsAndNonZeroExits) {
  ScratchDir dir;
  auto missing = RunCommand({kExtract, "export", dir / "nothing"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nothing"), std::string::npos) << missing.err;
  auto format = RunCommand({kExtract, "export", kTasks, "--format", "parquet"});
  EXPECT_EQ(format.exit_code, 2);
  auto size = RunCommand({kExtract, "lite", kTasks, "--size", "0"});
  EXPECT_EQ(size.exit_code, 2);
  std::string one;
  for (const auto& e : fs::directory_iterator(kTasks)) {
    if (fs::exists(e.path() / "instance.json")) one = e.path();
  }
  WriteFileOrDie(dir / "list.txt", "# tasks\n" + one + "\n/no/such/task\n");
  auto list = RunCommand({kExtract, "export", dir / "list.txt"});
  EXPECT_EQ(list.exit_code, 1);
  EXPECT_NE(list.err.find("list.txt:3: /no/such/task is no task directory"), std::string::npos)
      << list.err;
  // import: one bad row (an unknown commit, then not JSON) is named by line; the others go on.
  ASSERT_EQ(RunCommand({kExtract, "export", kTasks, "-o", dir / "fb.jsonl", "-q"}).exit_code, 0);
  std::string rows = ReadFileOrDie(dir / "fb.jsonl");
  std::string first = rows.substr(0, rows.find('\n'));
  json bad = json::parse(first);
  bad["base_commit"] = std::string(40, 'f');
  WriteFileOrDie(dir / "bad.jsonl", first + "\n" + bad.dump() + "\n{oops\n");
  auto im = RunCommand({kExtract, "import", dir / "bad.jsonl", "--repo", kData + "/repo", "-o",
                        dir / "imported", "--python", kPython, "-q"});
  EXPECT_EQ(im.exit_code, 1);
  EXPECT_NE(im.err.find("bad.jsonl:2: "), std::string::npos) << im.err;
  EXPECT_NE(im.err.find("bad.jsonl:3: not a JSON object"), std::string::npos) << im.err;
  EXPECT_TRUE(fs::exists(fs::path(dir / "imported") / bad["instance_id"].get<std::string>() /
                         "instance.json"));
  auto norepo = RunCommand({kExtract, "import", dir / "bad.jsonl", "--repo", dir / "none", "-o",
                            dir / "x"});
  EXPECT_EQ(norepo.exit_code, 2);
  // A row naming a test file outside the work copy, or whose patch links out of it, is refused
  // before anything is removed (red team round 6: the host deleted what they named).
  fs::create_directories(dir / "victim");
  WriteFileOrDie(dir / "victim/keep.txt", "keep\n");
  json out = json::parse(first), link = json::parse(first);
  out["instance_id"] = "x__out.lv1";
  out["FAIL_TO_PASS"] = json::array({"../../../../../../../../.." + (dir / "victim")});
  link["instance_id"] = "x__link.lv1";
  link["patch"] = "diff --git a/lnk b/lnk\nnew file mode 120000\n--- /dev/null\n+++ b/lnk\n"
                  "@@ -0,0 +1 @@\n+" + (dir / "victim") + "\n\\ No newline at end of file\n";
  link["FAIL_TO_PASS"] = json::array({"lnk/keep.txt"});
  json glob = json::parse(first);
  glob["instance_id"] = "x__glob.lv1";
  glob["FAIL_TO_PASS"] = json::array({":(glob)**"});
  WriteFileOrDie(dir / "evil.jsonl", out.dump() + "\n" + link.dump() + "\n" + glob.dump() + "\n");
  auto evil = RunCommand({kExtract, "import", dir / "evil.jsonl", "--repo", kData + "/repo", "-o",
                          dir / "evil", "--python", kPython, "-q"});
  EXPECT_EQ(evil.exit_code, 1);
  EXPECT_NE(evil.err.find("x__out.lv1: a test file: a path that climbs out"), std::string::npos)
      << evil.err;
  EXPECT_NE(evil.err.find("x__link.lv1: patch: a symbolic link b/lnk"), std::string::npos)
      << evil.err;
  EXPECT_NE(evil.err.find("x__glob.lv1: a test file: a pattern, not a path"), std::string::npos)
      << evil.err;
  EXPECT_EQ(ReadFileOrDie(dir / "victim/keep.txt"), "keep\n");
}

}  // namespace
}  // namespace fbkit::testing

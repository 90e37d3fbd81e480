// End-to-end: the real fb-graph binary on the fixtures, compared with expected JSON.
// Set FBKIT_UPDATE_EXPECTED=1 to rewrite the expected files (then review the diff).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>

#include "tests/testing/e2e.h"
#include "tests/testing/run.h"

namespace fbkit {
namespace {

using testing::ReadFileOrDie;
using testing::RunCommand;
using testing::RunResult;
using testing::ScratchDir;

using testing::Fixture;
using testing::kBinary;
using testing::kSource;


// The document with the machine-specific root replaced, pretty-printed for readable diffs.
std::string Normalise(const std::string& doc) {
  auto j = nlohmann::json::parse(doc);
  j["root"] = "<ROOT>";
  return j.dump(1) + "\n";
}

void ExpectMatchesGolden(const std::string& fixture, const std::vector<std::string>& extra,
                         int expected_exit) {
  std::vector<std::string> argv = {kBinary, "entities", Fixture(fixture), "--no-cache", "-q"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  RunResult r = RunCommand(argv);
  ASSERT_EQ(r.exit_code, expected_exit) << r.err;
  std::string got = Normalise(r.out);
  std::string golden = kSource + "/tests/cli/expected/" + fixture + ".entities.json";
  if (const char* update = std::getenv("FBKIT_UPDATE_EXPECTED"); update && *update == '1') {
    testing::WriteFileOrDie(golden, got);
  }
  EXPECT_EQ(got, ReadFileOrDie(golden)) << "fixture " << fixture << " differs from " << golden;
}

TEST(FbGraphEntities, Basic) { ExpectMatchesGolden("entities_basic", {}, 0); }

TEST(FbGraphEntities, Encodings) {
  // latin1_no_cookie.py has an invalid UTF-8 byte and no coding declaration: exit 3.
  ExpectMatchesGolden("entities_encodings", {}, 3);
}

TEST(FbGraphEntities, ErrorsDoNotStopOtherFiles) {
  ExpectMatchesGolden("entities_errors", {}, 3);
}

TEST(FbGraphEntities, LayoutSkipsExcludesAndSymlinks) {
  ExpectMatchesGolden("entities_layout", {"--exclude", "build/*"}, 3);
}

TEST(FbGraphEntities, ParseErrorsNamedOnStderr) {
  RunResult r = RunCommand({kBinary, "entities", Fixture("entities_errors"), "--no-cache", "-q"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("middle_error.py:"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("valid.py:"), std::string::npos) << r.err;
}

TEST(FbGraphEntities, DeterministicAcrossJobsAndCache) {
  ScratchDir tmp;
  std::string fixture = Fixture("entities_basic");
  RunResult one = RunCommand({kBinary, "entities", fixture, "-j", "1", "--no-cache", "-q"});
  RunResult cold = RunCommand({kBinary, "entities", fixture, "-j", "2", "--cache", tmp / "c", "-q",
                        "-o", tmp / "cold.json"});
  RunResult warm = RunCommand({kBinary, "entities", fixture, "-j", "2", "--cache", tmp / "c", "-o",
                        tmp / "warm.json"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  EXPECT_EQ(ReadFileOrDie(tmp / "cold.json"), one.out);
  EXPECT_EQ(ReadFileOrDie(tmp / "warm.json"), one.out);
  EXPECT_NE(warm.err.find("from cache"), std::string::npos) << warm.err;
  EXPECT_EQ(warm.err.find(", 0 from cache"), std::string::npos) << warm.err;
}

TEST(FbGraphEntities, DefaultCacheLivesBesideTheOutput) {
  ScratchDir tmp;
  RunResult r = RunCommand({kBinary, "entities", Fixture("entities_basic"), "-q", "-o", tmp / "out/e.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_directory(tmp / "out/.fbkit-cache/v2"));
}

TEST(FbGraphEntities, NeverWritesIntoTheRepository) {
  ScratchDir tmp;
  std::filesystem::copy(Fixture("entities_basic"), tmp / "repo",
                        std::filesystem::copy_options::recursive);
  auto before = RunCommand({"/usr/bin/find", tmp / "repo"}).out;
  RunResult r = RunCommand({kBinary, "entities", tmp / "repo", "-q", "--cache", tmp / "cache"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(RunCommand({"/usr/bin/find", tmp / "repo"}).out, before);
}

TEST(FbGraphEntitiesExit, MissingRootIsAFailure) {
  RunResult r = RunCommand({kBinary, "entities", "/nonexistent/repo", "--no-cache"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/repo"), std::string::npos) << r.err;
}

TEST(FbGraphEntitiesExit, RootThatIsAFileIsAFailure) {
  RunResult r = RunCommand({kBinary, "entities", Fixture("entities_errors/valid.py"), "--no-cache"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a directory"), std::string::npos) << r.err;
}

TEST(FbGraphEntitiesExit, UnwritableOutputIsAFailure) {
  RunResult r = RunCommand({kBinary, "entities", Fixture("entities_basic"), "--no-cache", "-o",
                     Fixture("entities_errors/valid.py") + "/x/out.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("valid.py"), std::string::npos) << r.err;
}

TEST(FbGraphEntitiesExit, BadUsage) {
  EXPECT_EQ(RunCommand({kBinary}).exit_code, 2);
  EXPECT_EQ(RunCommand({kBinary, "entities"}).exit_code, 2);
  EXPECT_EQ(RunCommand({kBinary, "entities", ".", "--jobs", "0"}).exit_code, 2);
  EXPECT_EQ(RunCommand({kBinary, "entities", ".", "--no-such-flag"}).exit_code, 2);
  EXPECT_EQ(RunCommand({kBinary, "no-such-command"}).exit_code, 2);
}

TEST(FbGraphEntitiesExit, HelpExplainsAndSucceeds) {
  RunResult r = RunCommand({kBinary, "entities", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--exclude"), std::string::npos);
  EXPECT_NE(r.out.find("Exit status"), std::string::npos);
}

TEST(FbGraphEntitiesExit, UnreadableFileIsReportedOthersStillWritten) {
  ScratchDir tmp;
  std::filesystem::create_directories(tmp / "repo");
  testing::WriteFileOrDie(tmp / "repo/ok.py", "def f():\n    pass\n");
  std::filesystem::create_symlink("missing.py", tmp / "repo/gone.py");
  RunResult r = RunCommand({kBinary, "entities", tmp / "repo", "--no-cache", "-q"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("gone.py"), std::string::npos) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["files"].size(), 1u);
  EXPECT_EQ(doc["files"][0]["path"], "ok.py");
  EXPECT_EQ(doc["errors"][0]["path"], "gone.py");
}

}  // namespace
}  // namespace fbkit

namespace fbkit {
namespace {

// -o naming a device or a FIFO writes into it (helper run, session 40: `-o /dev/null` as
// root renamed a regular file over /dev/null). A link to /dev/null stands in for it.
TEST(FbGraphEntities, OutputToADeviceWritesIntoItNeverOverIt) {
  testing::ScratchDir scratch;
  std::string link = scratch.path() + "/null";
  std::filesystem::create_symlink("/dev/null", link);
  testing::RunResult r = testing::RunCommand({testing::kBinary, "entities",
                                              testing::Fixture("entities_basic"), "--no-cache",
                                              "-q", "-o", link});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
}

}  // namespace
}  // namespace fbkit

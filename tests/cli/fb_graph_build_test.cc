// End-to-end: fb-graph build and its queries on the trace_basic fixture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/testing/e2e.h"
#include "tests/testing/run.h"

namespace fbkit {
namespace {

using nlohmann::json;
using testing::ReadFileOrDie;
using testing::RunCommand;
using testing::RunResult;
using testing::ScratchDir;

using testing::Fixture;
using testing::kBinary;
using testing::kSource;
const std::string kFixture = kSource + "/fixtures/trace_basic";

// Traces the fixture (one session, or --isolate) and builds its graph into dir/graph.json.
std::string TraceAndBuild(const ScratchDir& dir, bool isolate) {
  std::vector<std::string> trace = {kBinary,          "trace", kFixture, "--python",
                                    testing::kPython, "-q",    "-o",     dir / "trace.json"};
  if (isolate) trace.push_back("--isolate");
  RunResult t = RunCommand(trace);
  EXPECT_EQ(t.exit_code, 0) << t.err;
  RunResult b = RunCommand({kBinary, "build", kFixture, "--trace", dir / "trace.json", "--no-cache",
                            "-q", "-o", dir / "graph.json"});
  EXPECT_EQ(b.exit_code, 0) << b.err;
  return dir / "graph.json";
}

std::map<std::string, json> Reach(const json& g) {
  std::map<std::string, json> out;
  for (const auto& n : g["nodes"]) out[n["id"]] = n["test_files"];
  return out;
}

class FbGraphBuild : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    graph_ = TraceAndBuild(*dir_, false);
  }
  static void TearDownTestSuite() { delete dir_; }
  static ScratchDir* dir_;
  static std::string graph_;
};
ScratchDir* FbGraphBuild::dir_ = nullptr;
std::string FbGraphBuild::graph_;

TEST_F(FbGraphBuild, MatchesTheExpectedGraph) {
  json g = json::parse(ReadFileOrDie(graph_));
  g["root"] = "<ROOT>";
  std::string got = g.dump(1) + "\n";
  std::string golden = kSource + "/tests/cli/expected/trace_basic.graph.json";
  if (const char* update = std::getenv("FBKIT_UPDATE_EXPECTED"); update && *update == '1') {
    testing::WriteFileOrDie(golden, got);
  }
  EXPECT_TRUE(got == ReadFileOrDie(golden)) << "differs from " << golden;
  EXPECT_EQ(g["join"]["unmapped"].size(), 0u);
  EXPECT_EQ(g["join"]["identities"], g["join"]["mapped"]);
}

TEST_F(FbGraphBuild, ReachFromOneSessionEqualsReachFromIsolate) {
  ScratchDir other;
  json session = json::parse(ReadFileOrDie(graph_));
  json isolate = json::parse(ReadFileOrDie(TraceAndBuild(other, true)));
  EXPECT_TRUE(Reach(session) == Reach(isolate));
  // The same edges with the same test files; only counts differ (isolate mode imports
  // every module once per file).
  auto without_counts = [](json edges) {
    for (auto& e : edges) e.erase("count");
    return edges;
  };
  EXPECT_TRUE(without_counts(session["edges"]) == without_counts(isolate["edges"]));
}

TEST_F(FbGraphBuild, EveryEdgeKindAndReachOnlyWhereTested) {
  json g = json::parse(ReadFileOrDie(graph_));
  std::set<std::string> kinds;
  for (const auto& e : g["edges"]) kinds.insert(e["kind"]);
  EXPECT_TRUE(kinds.count("call") && kinds.count("contains") && kinds.count("import") &&
              kinds.count("reference"));
  auto reach = Reach(g);
  EXPECT_EQ(reach["src/tpkg/core.py::weight"], json({"tests/test_core.py"}));
  EXPECT_EQ(reach["src/tpkg/shapes.py::Box.width#2"], json({"tests/test_shapes.py"}));  // setter
  EXPECT_EQ(reach["src/tpkg/workers.py::child_job"], json({"tests/test_env.py"}));  // child process
  EXPECT_EQ(reach["src/tpkg/workers.py::after_profile_removed"], json::array());
}

TEST_F(FbGraphBuild, Queries) {
  RunResult deps =
      RunCommand({kBinary, "deps", graph_, "tests/test_core.py::test_callbacks", "--depth", "1"});
  EXPECT_EQ(deps.exit_code, 0) << deps.err;
  EXPECT_NE(deps.out.find("1\tsrc/tpkg/core.py::by_weight\n"), std::string::npos) << deps.out;
  RunResult rdeps =
      RunCommand({kBinary, "rdeps", graph_, "src/tpkg/core.py::weight", "--json", "--depth", "1"});
  auto r = json::parse(rdeps.out);
  EXPECT_NE(
      std::find(r.begin(), r.end(), json({{"depth", 1}, {"id", "src/tpkg/core.py::by_weight"}})),
      r.end());
  RunResult tests = RunCommand({kBinary, "tests", graph_, "src/tpkg/core.py::weight"});
  EXPECT_EQ(tests.out, "tests/test_core.py\n");
  RunResult path = RunCommand(
      {kBinary, "path", graph_, "tests/test_core.py::test_callbacks", "src/tpkg/core.py::weight"});
  EXPECT_EQ(path.out,
            "tests/test_core.py::test_callbacks --call--> src/tpkg/core.py::by_weight\n"
            "src/tpkg/core.py::by_weight --call--> src/tpkg/core.py::weight\n");
  RunResult none = RunCommand(
      {kBinary, "path", graph_, "src/tpkg/core.py::weight", "tests/test_core.py::test_callbacks"});
  EXPECT_EQ(none.exit_code, 1);
}

TEST_F(FbGraphBuild, ExportsForPeople) {
  RunResult dot =
      RunCommand({kBinary, "build", kFixture, "--trace", dir_->path() + "/trace.json", "--no-cache",
                  "-q", "--format", "dot", "--focus", "src/tpkg/core.py::weight", "--depth", "1"});
  EXPECT_EQ(dot.exit_code, 0) << dot.err;
  EXPECT_NE(dot.out.find("digraph fbkit"), std::string::npos);
  EXPECT_NE(dot.out.find("\"src/tpkg/core.py::by_weight\""), std::string::npos);
  EXPECT_EQ(dot.out.find("shapes.py"), std::string::npos);  // outside the neighbourhood
  RunResult ml =
      RunCommand({kBinary, "build", kFixture, "--no-cache", "-q", "--format", "graphml"});
  EXPECT_EQ(ml.exit_code, 0) << ml.err;
  EXPECT_NE(ml.out.find("<graphml"), std::string::npos);
}

TEST(FbGraphBuildExit, BadInputs) {
  EXPECT_EQ(RunCommand({kBinary, "build", "/nonexistent"}).exit_code, 1);
  EXPECT_EQ(RunCommand({kBinary, "build", kFixture, "--trace", "/nonexistent.json"}).exit_code, 1);
  RunResult not_trace =
      RunCommand({kBinary, "build", kFixture, "--trace", kFixture + "/pyproject.toml"});
  EXPECT_EQ(not_trace.exit_code, 1);
  EXPECT_NE(not_trace.err.find("pyproject.toml"), std::string::npos);
  EXPECT_EQ(RunCommand({kBinary, "build", kFixture, "--format", "svg"}).exit_code, 2);
  EXPECT_EQ(
      RunCommand({kBinary, "build", kFixture, "--no-cache", "--focus", "nope", "--format", "dot"})
          .exit_code,
      1);
  EXPECT_EQ(RunCommand({kBinary, "deps", "/nonexistent.json", "x"}).exit_code, 1);
  EXPECT_EQ(RunCommand({kBinary, "deps"}).exit_code, 2);
}

}  // namespace
}  // namespace fbkit

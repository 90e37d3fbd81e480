// End-to-end: the real fb-graph trace on the tracer fixtures, under Debian's python3.
#include <gtest/gtest.h>

#include <filesystem>
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
using testing::kPython;
using testing::kSource;

struct Traced {
  RunResult run;
  json doc;
};

Traced Trace(const std::string& root, std::vector<std::string> extra) {
  ScratchDir tmp;
  std::vector<std::string> argv = {kBinary, "trace", root, "--python",
                                   kPython, "-q",    "-o", tmp / "trace.json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  Traced t{RunCommand(argv), json()};
  if (std::filesystem::exists(tmp / "trace.json"))
    t.doc = json::parse(ReadFileOrDie(tmp / "trace.json"));
  return t;
}

const json* File(const json& doc, const std::string& name) {
  for (const auto& f : doc["files"]) {
    if (f["file"] == name) return &f;
  }
  return nullptr;
}

// (caller name, callee name) pairs of a file's edges, "-" for an outside caller.
std::set<std::pair<std::string, std::string>> Names(const json& edges) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& e : edges) {
    out.insert({e[0].is_null() ? "-" : e[0][2].get<std::string>(), e[1][2].get<std::string>()});
  }
  return out;
}

// Everything a file's own contexts recorded, as exact identities (counts dropped).
std::set<std::string> EdgeSet(const json& edges) {
  std::set<std::string> out;
  for (const auto& e : edges) out.insert(e[0].dump() + "->" + e[1].dump());
  return out;
}

TEST(FbGraphTrace, BasicOutcomesMatchPytestsSummary) {
  Traced t = Trace(Fixture("trace_basic"), {});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(t.doc["counts"], json({{"error", 1},
                                   {"failed", 1},
                                   {"passed", 21},
                                   {"skipped", 1},
                                   {"xfailed", 1},
                                   {"xpassed", 1}}));
  EXPECT_EQ(t.doc["exitstatus"], 1);
  EXPECT_EQ(t.doc["schema"], "fbkit.trace/1");
  const json* core = File(t.doc, "tests/test_core.py");
  ASSERT_NE(core, nullptr);
  std::vector<std::string> ids = (*core)["nodeids"];
  EXPECT_NE(std::find(ids.begin(), ids.end(), "tests/test_core.py::test_slug[[x]::y / z]"),
            ids.end());
  const json* shapes = File(t.doc, "tests/test_shapes.py");
  ASSERT_NE(shapes, nullptr);
  std::vector<std::string> shape_ids = (*shapes)["nodeids"];
  EXPECT_NE(std::find(shape_ids.begin(), shape_ids.end(),
                      "tests/test_shapes.py::TestBox::test_setter_clamps"),
            shape_ids.end());
  EXPECT_EQ((*shapes)["counts"]["error"], 1);
  EXPECT_EQ((*shapes)["counts"]["failed"], 1);
}

TEST(FbGraphTrace, EdgesThroughStdlibCallbacksThreadsAndChildProcesses) {
  Traced t = Trace(Fixture("trace_basic"), {});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  auto core = Names((*File(t.doc, "tests/test_core.py"))["edges"]);
  EXPECT_TRUE(core.count({"by_weight", "weight"})) << "sorted(key=...) callback";
  EXPECT_TRUE(core.count({"doubled_all", "double"})) << "map() callback";
  EXPECT_TRUE(core.count({"outer", "inner"})) << "nested function";
  auto env = Names((*File(t.doc, "tests/test_env.py"))["edges"]);
  EXPECT_TRUE(env.count({"-", "crunch"})) << "run in a threading.Thread";
  EXPECT_TRUE(env.count({"-", "child_job"})) << "run in a child Python process";
  EXPECT_TRUE(env.count({"child_job", "double"})) << "called inside the child process";
  EXPECT_FALSE(t.doc["warnings"].empty()) << "the tests that replace the profiler or tracer";
}

TEST(FbGraphTrace, SessionAndIsolateGiveTheSameEdgesPerFile) {
  Traced session = Trace(Fixture("trace_basic"), {});
  Traced isolate = Trace(Fixture("trace_basic"), {"--isolate", "-j", "2"});
  ASSERT_EQ(session.run.exit_code, 0) << session.run.err;
  ASSERT_EQ(isolate.run.exit_code, 0) << isolate.run.err;
  ASSERT_EQ(session.doc["files"].size(), isolate.doc["files"].size());
  for (const auto& f : session.doc["files"]) {
    const json* g = File(isolate.doc, f["file"]);
    ASSERT_NE(g, nullptr) << f["file"];
    EXPECT_EQ(EdgeSet(f["edges"]), EdgeSet((*g)["edges"])) << f["file"];
    EXPECT_EQ(f["counts"], (*g)["counts"]) << f["file"];
    EXPECT_EQ(f["fixture_contexts"], (*g)["fixture_contexts"]) << f["file"];
  }
  EXPECT_EQ(session.doc["counts"], isolate.doc["counts"]);
  // Import time: one session records it once in "<import>"; isolate mode per file in
  // "<import>FILE". Together they must hold the same edges.
  std::set<std::string> isolate_imports;
  for (const auto& [name, edges] : isolate.doc["contexts"].items()) {
    if (name.rfind("<import>", 0) != 0) {
      EXPECT_EQ(EdgeSet(edges), EdgeSet(session.doc["contexts"][name])) << name;
      continue;
    }
    EXPECT_NE(name, "<import>");
    auto e = EdgeSet(edges);
    isolate_imports.insert(e.begin(), e.end());
  }
  EXPECT_EQ(EdgeSet(session.doc["contexts"]["<import>"]), isolate_imports);
}

TEST(FbGraphTrace, AcceleratedAndPurePythonAgree) {
  Traced fast = Trace(Fixture("trace_basic"), {});
  Traced pure = Trace(Fixture("trace_basic"), {"--no-accel"});
  ASSERT_EQ(fast.run.exit_code, 0) << fast.run.err;
  ASSERT_EQ(pure.run.exit_code, 0) << pure.run.err;
  EXPECT_TRUE(fast.doc["accelerated"]) << fast.doc["accel_error"];
  EXPECT_FALSE(pure.doc["accelerated"]);
  EXPECT_TRUE(fast.doc["files"] == pure.doc["files"]);
  EXPECT_TRUE(fast.doc["contexts"] == pure.doc["contexts"]);
}

TEST(FbGraphTrace, Deterministic) {
  Traced a = Trace(Fixture("trace_basic"), {});
  Traced b = Trace(Fixture("trace_basic"), {});
  ASSERT_EQ(a.run.exit_code, 0) << a.run.err;
  EXPECT_TRUE(a.doc.dump() == b.doc.dump());  // (not EXPECT_EQ: no 100 kB dump on failure)
}

TEST(FbGraphTrace, CrashExitAndHangAreIsolatedAndTheRestResumes) {
  Traced t = Trace(Fixture("trace_crash"), {"--timeout", "3"});
  ASSERT_EQ(t.run.exit_code, 3) << t.run.err;
  auto status = [&](const std::string& f) {
    return (*File(t.doc, f))["status"].get<std::string>();
  };
  EXPECT_EQ(status("tests/test_ok_first.py"), "ok");
  EXPECT_EQ(status("tests/test_segfault.py"), "crashed");
  EXPECT_EQ(status("tests/test_exit.py"), "crashed");
  EXPECT_EQ(status("tests/test_hang.py"), "timeout");
  EXPECT_EQ(status("tests/test_hang_forged_clock.py"), "timeout");
  EXPECT_EQ(status("tests/test_ok_last.py"), "ok");
  EXPECT_NE((*File(t.doc, "tests/test_segfault.py"))["error"].get<std::string>().find("signal 11"),
            std::string::npos);
  EXPECT_FALSE((*File(t.doc, "tests/test_ok_last.py"))["edges"].empty());
  // A file that hung or crashed names the test it was in.
  EXPECT_NE((*File(t.doc, "tests/test_hang.py"))["error"].get<std::string>().find(
                "exceeded --timeout 3.000000 s in tests/test_hang.py::test_hang"),
            std::string::npos) << (*File(t.doc, "tests/test_hang.py"))["error"];
  EXPECT_NE((*File(t.doc, "tests/test_segfault.py"))["error"].get<std::string>().find(
                "signal 11 in tests/test_segfault.py::test_segfault"),
            std::string::npos);
  EXPECT_NE(t.run.err.find("tests/test_hang.py"), std::string::npos) << t.run.err;
}

// A configuration that forces pytest-xdist (`addopts = -n auto`): traced in one process
// per run all the same (xdist's worker_id says no worker ran), outcomes and edges whole.
TEST(FbGraphTrace, AConfigurationThatForcesXdistRunsInOneProcess) {
  Traced t = Trace(Fixture("pytest_xdist_forced"), {"--details"});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  for (const char* name : {"tests/test_scale.py", "tests/test_total.py"}) {
    const json* f = File(t.doc, name);
    ASSERT_NE(f, nullptr) << t.doc.dump(1);
    EXPECT_EQ(f->at("status"), "ok") << name;
    for (const auto& [id, test] : f->at("tests").items()) EXPECT_EQ(test["outcome"], "passed") << id;
  }
  EXPECT_EQ(File(t.doc, "tests/test_scale.py")->at("tests").size(), 2u);
  auto names = Names(File(t.doc, "tests/test_total.py")->at("edges"));
  EXPECT_TRUE(names.count({"total", "scale"})) << File(t.doc, "tests/test_total.py")->dump(1);
}

// Workers multiprocessing starts with spawn or forkserver import the main script again:
// fbkit's boot file must not run a second pytest session in them.
TEST(FbGraphTrace, SpawnedWorkersDoNotRunTheSessionAgain) {
  Traced t = Trace(Fixture("trace_spawn"), {"--timeout", "60"});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  const json* f = File(t.doc, "tests/test_workers.py");
  ASSERT_NE(f, nullptr) << t.doc.dump(1);
  EXPECT_EQ(f->at("status"), "ok");
  EXPECT_EQ(f->at("tests").size(), 2u);
  for (const auto& [id, test] : f->at("tests").items()) EXPECT_EQ(test["outcome"], "passed") << id;
  EXPECT_EQ(t.doc["counts"], json::parse(R"({"passed": 2})"));
}

TEST(FbGraphTrace, NeverWritesIntoTheRepository) {
  ScratchDir tmp;
  std::filesystem::copy(Fixture("trace_basic"), tmp / "repo",
                        std::filesystem::copy_options::recursive);
  std::string before = RunCommand({"/usr/bin/find", tmp / "repo"}).out;
  Traced t = Trace(tmp / "repo", {});
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  EXPECT_EQ(RunCommand({"/usr/bin/find", tmp / "repo"}).out, before);
}

// `--shard K/N` + merge: the N traces of a sharded isolated run merge into the unsharded
// run's trace byte for byte, and build takes the shards directly. The repository has a file
// that fails to collect (carried by shard 1 only) and more shards than files make one empty.
TEST(FbGraphTrace, ShardedTracesMergeIntoTheUnshardedTraceByteForByte) {
  ScratchDir tmp;
  std::string root = tmp / "repo";
  std::filesystem::copy(Fixture("trace_basic"), root, std::filesystem::copy_options::recursive);
  testing::WriteFileOrDie(root + "/tests/test_broken.py", "def test_x(:\n    pass\n");
  auto trace = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> argv = {kBinary, "trace", root, "--python", kPython, "-q",
                                     "--isolate", "-j", "2", "-o", tmp / out};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv).exit_code;
  };
  ASSERT_EQ(trace("whole.json", {}), 3);  // the broken file is named, the rest traced
  std::string whole = ReadFileOrDie(tmp / "whole.json");
  ASSERT_EQ(trace("details.json", {"--details"}), 3);
  // N = 2 balanced by size, N = 4 (one shard empty) by the durations of a --details trace.
  for (int n : {2, 4}) {
    std::vector<std::string> merge = {kBinary, "merge", "-o", tmp / "merged.json"};
    for (int k = n; k >= 1; --k) {  // any order
      std::string shard = "shard-" + std::to_string(k) + ".json";
      std::vector<std::string> extra = {"--shard", std::to_string(k) + "/" + std::to_string(n)};
      if (n == 4) extra.insert(extra.end(), {"--shard-weights", tmp / "details.json"});
      int code = trace(shard, extra);
      EXPECT_EQ(code, k == 1 ? 3 : 0) << shard;
      merge.push_back(tmp / shard);
    }
    RunResult merged = RunCommand(merge);
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_TRUE(ReadFileOrDie(tmp / "merged.json") == whole) << "N = " << n;
    if (n != 2) continue;
    json shard1 = json::parse(ReadFileOrDie(tmp / "shard-1.json"));
    json shard2 = json::parse(ReadFileOrDie(tmp / "shard-2.json"));
    EXPECT_EQ(shard1["shard"]["all"].size(), 3u);
    EXPECT_EQ(shard1["shard"]["files"].size() + shard2["shard"]["files"].size(), 3u);
    EXPECT_NE(File(shard1, "tests/test_broken.py"), nullptr);
    EXPECT_EQ(File(shard2, "tests/test_broken.py"), nullptr);
    // build takes the shards as they are.
    auto build = [&](const std::string& out, std::vector<std::string> traces) {
      std::vector<std::string> argv = {kBinary, "build", root, "-q", "--no-cache", "-o", tmp / out};
      for (const auto& t : traces) argv.insert(argv.end(), {"--trace", tmp / t});
      return RunCommand(argv);
    };
    ASSERT_EQ(build("g-whole.json", {"whole.json"}).exit_code, 0);
    RunResult b = build("g-shards.json", {"shard-2.json", "shard-1.json"});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_TRUE(ReadFileOrDie(tmp / "g-whole.json") == ReadFileOrDie(tmp / "g-shards.json"));
    // Bad sets of shards: one missing, one repeated, one of another split, a plain trace.
    RunResult missing = RunCommand({kBinary, "merge", tmp / "shard-1.json"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.err.find("expected 2 shards"), std::string::npos) << missing.err;
    RunResult repeated = RunCommand({kBinary, "merge", tmp / "shard-1.json", tmp / "shard-1.json"});
    EXPECT_EQ(repeated.exit_code, 1);
    EXPECT_NE(repeated.err.find("missing or repeated"), std::string::npos) << repeated.err;
    RunResult plain = RunCommand({kBinary, "merge", tmp / "shard-1.json", tmp / "whole.json"});
    EXPECT_EQ(plain.exit_code, 1);
    EXPECT_NE(plain.err.find("no shard"), std::string::npos) << plain.err;
    EXPECT_EQ(build("g-bad.json", {"shard-1.json"}).exit_code, 1);
  }
}

// A repository whose own code drives pytest's collection (as pytest-dev/pytest's does, being
// pytest): the agent refuses records asked for by code under ROOT, so nothing is traced; the
// run fails and says why, in either mode, instead of writing an empty trace with exit 0.
TEST(FbGraphTraceExit, AnUntrustedDriverOfPytestsHooksIsAnErrorThatSaysWhy) {
  ScratchDir repo;
  testing::WriteFileOrDie(repo / "conftest.py",
                          "def pytest_collection(session):\n"
                          "    session.perform_collect()\n"
                          "    return True\n");
  testing::WriteFileOrDie(repo / "m.py", "def f():\n    return 1\n");
  std::filesystem::create_directories(repo / "tests");
  testing::WriteFileOrDie(repo / "tests/test_m.py",
                          "from m import f\n\n\ndef test_f():\n    assert f() == 1\n");
  for (std::vector<std::string> mode : {std::vector<std::string>{}, {"--isolate"}}) {
    mode.insert(mode.end(), {"--pythonpath", "."});
    RunResult r = Trace(repo.path(), mode).run;
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("conftest.py"), std::string::npos) << r.err;
  }
  // A shard holds what it holds (here nothing: one test file, the second of two shards); the
  // merge of the shards decides.
  EXPECT_EQ(Trace(repo.path(), {"--pythonpath", ".", "--isolate", "--shard", "2/2"}).run.exit_code, 0);
}

TEST(FbGraphTraceExit, BadInputs) {
  EXPECT_EQ(Trace("/nonexistent/repo", {}).run.exit_code, 1);
  RunResult bad_python = RunCommand(
      {kBinary, "trace", Fixture("trace_basic"), "--python", "/nonexistent/python3", "-q"});
  EXPECT_EQ(bad_python.exit_code, 1);
  EXPECT_NE(bad_python.err.find("/nonexistent/python3"), std::string::npos) << bad_python.err;
  Traced no_tests = Trace(Fixture("entities_errors"), {});
  EXPECT_EQ(no_tests.run.exit_code, 1);
  EXPECT_NE(no_tests.run.err.find("no tests"), std::string::npos) << no_tests.run.err;
  EXPECT_EQ(Trace(Fixture("trace_basic"), {"--env", "NOEQUALS"}).run.exit_code, 2);
  EXPECT_EQ(RunCommand({kBinary, "trace"}).exit_code, 2);
  EXPECT_EQ(RunCommand({kBinary, "trace", ".", "--timeout", "-1"}).exit_code, 2);
  EXPECT_EQ(RunCommand({kBinary, "trace", ".", "--bogus"}).exit_code, 2);
  for (const char* shard : {"3/2", "0/2", "1/0", "a/b", "1/2/3", "2"}) {
    EXPECT_EQ(Trace(Fixture("trace_basic"), {"--isolate", "--shard", shard}).run.exit_code, 2) << shard;
  }
  RunResult no_isolate = Trace(Fixture("trace_basic"), {"--shard", "1/2"}).run;
  EXPECT_EQ(no_isolate.exit_code, 2);
  EXPECT_NE(no_isolate.err.find("--isolate"), std::string::npos) << no_isolate.err;
  EXPECT_EQ(Trace(Fixture("trace_basic"), {"--isolate", "--shard", "1/2", "--shard-weights",
                                           "/nonexistent/trace.json"}).run.exit_code, 1);
  EXPECT_EQ(RunCommand({kBinary, "merge"}).exit_code, 2);
  RunResult bad_merge = RunCommand({kBinary, "merge", "/nonexistent/shard.json"});
  EXPECT_EQ(bad_merge.exit_code, 1);
  EXPECT_NE(bad_merge.err.find("/nonexistent/shard.json"), std::string::npos) << bad_merge.err;
}

}  // namespace
}  // namespace fbkit

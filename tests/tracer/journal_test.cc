#include "tracer/journal.h"

#include <gtest/gtest.h>

#include "tracer/trace_json.h"
#include "util/hash.h"

namespace fbkit::tracer {
namespace {

const char* kJournal =
    R"({"type": "start", "pid": 1, "python": "3.11", "accelerated": true, "preloaded": ["src/p/__init__.py"]})"
    "\n"
    R"({"type": "collect", "file": "tests/test_a.py", "error": null, "category": ""})"
    "\n"
    R"({"type": "collect", "file": "tests/test_bad.py", "error": "ImportError: boom", "category": "error"})"
    "\n"
    R"({"type": "edges", "context": "<collect>tests/test_a.py", "codes": [["tests/test_a.py", 1, "<module>"]], "edges": [[-1, 0, 1]]})"
    "\n"
    R"({"type": "selected", "files": [["tests/test_a.py", ["tests/test_a.py::test_x[a b [c]]", "tests/test_a.py::test_y"]]]})"
    "\n"
    R"({"type": "begin", "file": "tests/test_a.py"})"
    "\n"
    R"({"type": "report", "nodeid": "tests/test_a.py::test_x[a b [c]]", "file": "tests/test_a.py", "when": "setup", "outcome": "passed", "category": "", "duration": 0.1, "message": null})"
    "\n"
    R"({"type": "report", "nodeid": "tests/test_a.py::test_x[a b [c]]", "file": "tests/test_a.py", "when": "call", "outcome": "skipped", "category": "xfailed", "duration": 0.2, "message": null})"
    "\n"
    R"({"type": "report", "nodeid": "tests/test_a.py::test_y", "file": "tests/test_a.py", "when": "setup", "outcome": "failed", "category": "error", "duration": 0, "message": "fixture broke"})"
    "\n"
    R"({"type": "edges", "context": "tests/test_a.py", "codes": [["src/p/m.py", 3, "f"], ["src/p/m.py", 9, "g"]], "edges": [[-1, 0, 2], [0, 1, 5]]})"
    "\n"
    R"({"type": "edges", "context": "<import>", "codes": [["src/p/m.py", 1, "<module>"]], "edges": [[-1, 0, 1]]})"
    "\n"
    R"({"type": "uses", "file": "tests/test_a.py", "context": "<fixture>::db"})"
    "\n"
    R"({"type": "finish", "exitstatus": 1})"
    "\n";

TEST(JournalReaderTest, AppliesEveryRecordKind) {
  TraceSet trace;
  JournalReader reader(&trace);
  reader.Feed(kJournal);
  EXPECT_TRUE(reader.finished());
  EXPECT_EQ(reader.malformed_lines(), 0);
  EXPECT_EQ(reader.collected(), (std::vector<std::string>{"tests/test_a.py", "tests/test_bad.py"}));
  EXPECT_EQ(reader.current_file(), "tests/test_a.py");
  EXPECT_EQ(reader.selected(), (std::vector<std::string>{"tests/test_a.py"}));
  EXPECT_TRUE(trace.accelerated);
  EXPECT_EQ(trace.exitstatus, 1);
  EXPECT_EQ(trace.preloaded.count("src/p/__init__.py"), 1u);
  const FileTrace& a = trace.files.at("tests/test_a.py");
  EXPECT_EQ(a.nodeids.size(), 2u);
  EXPECT_EQ(a.tests.at("tests/test_a.py::test_x[a b [c]]").outcome, runner::Outcome::kXfailed);
  EXPECT_EQ(a.tests.at("tests/test_a.py::test_y").outcome, runner::Outcome::kError);
  EXPECT_EQ(a.tests.at("tests/test_a.py::test_y").message, "fixture broke");
  CodeId f{"src/p/m.py", 3, "f"}, g{"src/p/m.py", 9, "g"};
  EXPECT_EQ(a.edges.at({std::nullopt, f}), 2);
  EXPECT_EQ(a.edges.at({f, g}), 5);
  EXPECT_EQ(a.fixture_contexts.count("<fixture>::db"), 1u);
  EXPECT_EQ(trace.contexts.at("<import>").size(), 1u);
  EXPECT_EQ(a.collect_edges.size(), 1u);
  EXPECT_EQ(trace.files.at("tests/test_bad.py").status, runner::FileStatus::kCollectError);
  EXPECT_EQ(trace.counts.at("error"), 2);  // one collection error, one setup error
  EXPECT_EQ(trace.counts.at("xfailed"), 1);
}

// Reports of tests pytest did not select (the file failed to collect, or no such test) are
// not outcomes: written by the tested code, ignored and reported.
TEST(JournalReaderTest, ReportsOfUnselectedTestsAreIgnoredAndReported) {
  TraceSet trace;
  JournalReader reader(&trace);
  reader.Feed(std::string(kJournal).substr(0, std::string(kJournal).find(R"({"type": "finish")")) +
              R"({"type": "report", "nodeid": "tests/test_bad.py::test_forged", "file": "tests/test_bad.py", "when": "call", "outcome": "passed", "category": "passed", "duration": 0, "message": null})"
              "\n");
  EXPECT_TRUE(trace.files.at("tests/test_bad.py").tests.empty());
  ASSERT_EQ(trace.integrity.size(), 1u);
  EXPECT_NE(trace.integrity[0].find("tests/test_bad.py::test_forged, a test pytest had not selected"),
            std::string::npos);
}

// With a key, only records signed with it, numbered in order, count: a forged line (no
// signature, a wrong one, or a replayed number) is ignored and reported once.
TEST(JournalReaderTest, WithAKeyOnlyRecordsSignedInOrderCount) {
  const std::string key = "k3y";
  auto sign = [&](const std::string& json) { return json + "\t" + util::HmacSha256Hex(key, json) + "\n"; };
  std::string start = R"({"seq": 1, "type": "start", "pid": 1, "python": "3.11", "accelerated": false, "preloaded": []})";
  std::string finish = R"({"seq": 2, "type": "finish", "exitstatus": 0})";
  TraceSet trace;
  JournalReader reader(&trace, key);
  reader.Feed(sign(start) + R"({"type": "finish", "exitstatus": 5})" "\n" +
              R"({"seq": 1, "type": "finish", "exitstatus": 4})" "\t00\n" + sign(finish) +
              sign(R"({"seq": 2, "type": "finish", "exitstatus": 3})"));
  EXPECT_EQ(trace.exitstatus, 0);
  ASSERT_EQ(trace.integrity.size(), 1u);
  EXPECT_NE(trace.integrity[0].find("a journal record fbkit's plugin did not write"), std::string::npos);
}

// With checks (said at the start), each call report needs the plugin's word that it checked
// the test before its call: the tested code that turned the checks off is reported once.
TEST(JournalReaderTest, ACallReportWithoutTheChecksBeforeItIsReported) {
  std::string journal = kJournal;
  const std::string plain = R"("preloaded": ["src/p/__init__.py"]})";
  journal.replace(journal.find(plain), plain.size(), R"("preloaded": ["src/p/__init__.py"], "checks": true})");
  TraceSet unchecked;
  JournalReader(&unchecked).Feed(journal);
  ASSERT_EQ(unchecked.integrity.size(), 1u);
  EXPECT_EQ(unchecked.integrity[0], "the grader's checks did not run before the call of "
                                    "tests/test_a.py::test_x[a b [c]] (the tested code turned them off?)");
  const std::string begin = R"({"type": "begin", "file": "tests/test_a.py"})" "\n";
  journal.insert(journal.find(begin) + begin.size(),
                 R"({"type": "checked", "nodeid": "tests/test_a.py::test_x[a b [c]]"})" "\n"
                 R"({"type": "checked", "nodeid": "tests/test_a.py::test_y"})" "\n");
  TraceSet checked;
  JournalReader(&checked).Feed(journal);
  EXPECT_TRUE(checked.integrity.empty()) << checked.integrity[0];
  TraceSet without;  // a run without checks asks for none
  JournalReader(&without).Feed(kJournal);
  EXPECT_TRUE(without.integrity.empty());
}

TEST(JournalReaderTest, AReportOfAnotherTestThanTheRunningOneIsReported) {
  std::string journal = kJournal;
  const std::string plain = R"("preloaded": ["src/p/__init__.py"]})";
  journal.replace(journal.find(plain), plain.size(), R"("preloaded": ["src/p/__init__.py"], "checks": true})");
  const std::string begin = R"({"type": "begin", "file": "tests/test_a.py"})" "\n";
  journal.insert(journal.find(begin) + begin.size(),
                 R"({"type": "checked", "nodeid": "tests/test_a.py::test_x[a b [c]]"})" "\n"
                 R"({"type": "checked", "nodeid": "tests/test_a.py::test_y"})" "\n");
  const std::string x_setup = R"({"type": "report", "nodeid": "tests/test_a.py::test_x[a b [c]]", "file": "tests/test_a.py", "when": "setup")";
  const std::string y_setup = R"({"type": "report", "nodeid": "tests/test_a.py::test_y", "file": "tests/test_a.py", "when": "setup")";
  // In pytest's order: each test's reports after its own "test" record.
  std::string ordered = journal;
  ordered.insert(ordered.find(y_setup), R"({"type": "test", "nodeid": "tests/test_a.py::test_y"})" "\n");
  ordered.insert(ordered.find(x_setup), R"({"type": "test", "nodeid": "tests/test_a.py::test_x[a b [c]]"})" "\n");
  TraceSet in_order;
  JournalReader(&in_order).Feed(ordered);
  EXPECT_TRUE(in_order.integrity.empty()) << in_order.integrity[0];
  // test_y's report while test_x runs: written outside pytest's protocol.
  std::string elsewhere = journal;
  elsewhere.insert(elsewhere.find(x_setup), R"({"type": "test", "nodeid": "tests/test_a.py::test_x[a b [c]]"})" "\n");
  TraceSet other;
  JournalReader(&other).Feed(elsewhere);
  ASSERT_EQ(other.integrity.size(), 1u);
  EXPECT_EQ(other.integrity[0], "a report of tests/test_a.py::test_y while pytest ran "
                                "tests/test_a.py::test_x[a b [c]] (written by the tested code?)");
}

// pytest selects once per session and reports each phase of a test once: a second selection
// (which would add a test) or a second report of a phase was written by someone else, and
// is reported; the second selection adds nothing.
TEST(JournalReaderTest, ASecondSelectionAndASecondReportOfAPhaseAreReported) {
  const std::string begin = R"({"type": "begin", "file": "tests/test_a.py"})" "\n";
  std::string journal = kJournal;
  journal.insert(journal.find(begin),
                 R"({"type": "selected", "files": [["tests/test_a.py", ["tests/test_a.py::test_z"]]]})"
                 "\n");
  TraceSet twice_selected;
  JournalReader(&twice_selected).Feed(journal);
  ASSERT_EQ(twice_selected.integrity.size(), 1u);
  EXPECT_EQ(twice_selected.integrity[0],
            "a second selection of tests in one session's journal (written by the tested code?)");
  EXPECT_EQ(twice_selected.files.at("tests/test_a.py").nodeids,
            (std::vector<std::string>{"tests/test_a.py::test_x[a b [c]]", "tests/test_a.py::test_y"}));

  journal = kJournal;
  const std::string finish = R"({"type": "finish")";
  journal.insert(journal.find(finish),
                 R"({"type": "report", "nodeid": "tests/test_a.py::test_y", "file": "tests/test_a.py", "when": "setup", "outcome": "passed", "category": "passed", "duration": 0, "message": null})"
                 "\n");
  TraceSet twice_reported;
  JournalReader(&twice_reported).Feed(journal);
  ASSERT_EQ(twice_reported.integrity.size(), 1u);
  EXPECT_EQ(twice_reported.integrity[0], "two reports of the setup phase of tests/test_a.py::test_y "
                                         "(a report written by the tested code?)");
  TraceSet honest;
  JournalReader(&honest).Feed(kJournal);
  EXPECT_TRUE(honest.integrity.empty());
}

TEST(JournalReaderTest, PartialLinesWaitForTheRest) {
  TraceSet trace;
  JournalReader reader(&trace);
  std::string all = kJournal;
  for (size_t i = 0; i < all.size(); i += 7) reader.Feed(all.substr(i, 7));
  EXPECT_TRUE(reader.finished());
  EXPECT_EQ(trace.files.at("tests/test_a.py").edges.size(), 2u);
}

TEST(JournalReaderTest, EdgesFromSeveralProcessesAreSummed) {
  TraceSet trace;
  for (int i = 0; i < 3; ++i) {
    JournalReader reader(&trace);
    reader.Feed(kJournal);
  }
  EXPECT_EQ(trace.files.at("tests/test_a.py").edges.at({CodeId{"src/p/m.py", 3, "f"},
                                                          CodeId{"src/p/m.py", 9, "g"}}),
            15);
}

TEST(JournalReaderTest, MalformedLinesAreCountedNotFatal) {
  TraceSet trace;
  JournalReader reader(&trace);
  reader.Feed("{not json\n{\"type\": \"begin\"}\n{\"type\": \"begin\", \"file\": \"t.py\"}\n");
  EXPECT_EQ(reader.malformed_lines(), 2);
  EXPECT_EQ(reader.current_file(), "t.py");
}

TEST(MergeTraceTest, RunEdgesSumSharedEdgesTakeTheLarger) {
  TraceSet one, two, run;
  JournalReader(&one).Feed(kJournal);
  JournalReader(&two).Feed(kJournal);
  MergeTrace(one, &run);
  MergeTrace(two, &run);
  const FileTrace& a = run.files.at("tests/test_a.py");
  EXPECT_EQ(a.edges.at({CodeId{"src/p/m.py", 3, "f"}, CodeId{"src/p/m.py", 9, "g"}}), 10);
  EXPECT_EQ(a.collect_edges.begin()->second, 1);  // collected again, imported once
  EXPECT_EQ(run.contexts.at("<import>").begin()->second, 1);
  EXPECT_EQ(run.counts.at("xfailed"), 2);
  EXPECT_EQ(run.exitstatus, 1);
}

TEST(TraceJsonTest, DeterministicAndSorted) {
  TraceSet one, two;
  JournalReader(&one).Feed(kJournal);
  JournalReader(&two).Feed(kJournal);
  std::string doc = TraceDocument(one, false);
  EXPECT_EQ(doc, TraceDocument(two, false));
  EXPECT_NE(doc.find("\"schema\":\"fbkit.trace/1\""), std::string::npos);
  EXPECT_EQ(doc.find("duration"), std::string::npos);
  EXPECT_EQ(doc.find("fixture broke"), std::string::npos);
  EXPECT_NE(TraceDocument(one, true).find("duration"), std::string::npos);
  EXPECT_NE(TraceDocument(one, true).find("fixture broke"), std::string::npos);
  EXPECT_LT(doc.find("[null,[\"src/p/m.py\",3,\"f\"],2]"), doc.find("[[\"src/p/m.py\",3,\"f\"],"));
}

// Observed types ride on a test file's edges records: kept per file (not for shared or
// collection contexts), unions over records and processes, written sorted and read back; a
// trace without them (an older one) loads with none.
TEST(ObservedTypesTest, FromTheJournalIntoTheTraceAndBack) {
  const char* journal =
      R"({"type": "edges", "context": "tests/test_a.py", "codes": [["src/p/m.py", 3, "f"]], "edges": [[-1, 0, 2]], "types": [[0, {"x": ["str", "int"]}, ["list"]]]})"
      "\n"
      R"({"type": "edges", "context": "tests/test_a.py", "codes": [["src/p/m.py", 3, "f"]], "edges": [[-1, 0, 1]], "types": [[0, {"x": ["bytes"], "*rest": ["NoneType"]}, []]]})"
      "\n"
      R"({"type": "edges", "context": "<import>", "codes": [["src/p/m.py", 3, "f"]], "edges": [[-1, 0, 1]], "types": [[0, {"x": ["float"]}, []]]})"
      "\n";
  TraceSet trace;
  JournalReader(&trace).Feed(journal);
  CodeId f{"src/p/m.py", 3, "f"};
  const ObservedTypes& t = trace.files.at("tests/test_a.py").types.at(f);
  EXPECT_EQ(t.params.at("x"), (std::set<std::string>{"bytes", "int", "str"}));
  EXPECT_EQ(t.params.at("*rest"), (std::set<std::string>{"NoneType"}));
  EXPECT_EQ(t.returns, (std::set<std::string>{"list"}));
  std::string doc = TraceDocument(trace, false);
  EXPECT_NE(doc.find(R"("types":[[["src/p/m.py",3,"f"],{"*rest":["NoneType"],"x":["bytes","int","str"]},["list"]]])"),
            std::string::npos)
      << doc;
  auto back = ParseTraceDocument(doc);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->files.at("tests/test_a.py").types, trace.files.at("tests/test_a.py").types);
  EXPECT_EQ(TraceDocument(*back, false), doc);
  TraceSet older;
  JournalReader(&older).Feed(kJournal);
  std::string old_doc = TraceDocument(older, false);
  EXPECT_EQ(old_doc.find("\"types\""), std::string::npos);
  auto old_back = ParseTraceDocument(old_doc);
  ASSERT_TRUE(old_back.ok()) << old_back.error();
  EXPECT_TRUE(old_back->files.at("tests/test_a.py").types.empty());
  TraceSet run;
  MergeTrace(trace, &run);
  TraceSet other;
  JournalReader(&other).Feed(
      R"({"type": "edges", "context": "tests/test_a.py", "codes": [["src/p/m.py", 3, "f"]], "edges": [[-1, 0, 1]], "types": [[0, {"x": ["dict"]}, ["tuple"]]]})"
      "\n");
  MergeTrace(other, &run);
  const ObservedTypes& merged = run.files.at("tests/test_a.py").types.at(f);
  EXPECT_EQ(merged.params.at("x"), (std::set<std::string>{"bytes", "dict", "int", "str"}));
  EXPECT_EQ(merged.returns, (std::set<std::string>{"list", "tuple"}));
}

}  // namespace
}  // namespace fbkit::tracer

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/batch.h"
#include "util/env.h"
#include "util/hash.h"
#include "util/json_read.h"
#include "util/json_writer.h"
#include "util/parallel.h"
#include "util/strings.h"
#include "util/utf8.h"

namespace fbkit::util {
namespace {

TEST(JsonWriterTest, NestedValuesAndEscapes) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("a"), w.String("q\"\\\n\x01");
  w.Key("b");
  w.BeginArray();
  w.Int(-3), w.Bool(true), w.Null(), w.Raw("{}");
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(out, "{\"a\":\"q\\\"\\\\\\n\\u0001\",\"b\":[-3,true,null,{}]}");
}

TEST(JsonWriterTest, InvalidUtf8BecomesReplacementCharacter) {
  std::string out;
  AppendJsonString("caf\xE9 ok \xC3\xA9", &out);
  EXPECT_EQ(out, "\"caf\xEF\xBF\xBD ok \xC3\xA9\"");
}

// Agent-written JSON: a document nested deeper than the bound, or holding more values, is
// discarded whole before it is parsed (so dump() and walks terminate in bounded memory, and
// the parse is linear); an ordinary document comes back whole.
TEST(JsonReadTest, UntrustedJsonIsBoundedInDepthAndSize) {
  std::string deep = "{\"a\": " + std::string(200, '[') + std::string(200, ']') + ", \"b\": 1}";
  EXPECT_TRUE(util::ParseUntrustedJson(deep).is_discarded());
  EXPECT_EQ(util::ParseUntrustedJson(deep, 201)["b"], 1);
  EXPECT_TRUE(util::ParseUntrustedJson("[" + std::string(1000000, '[') + std::string(1000000, ']') + "]").is_discarded());
  EXPECT_TRUE(util::ParseUntrustedJson("[\"" + std::string(5000, '[') + "\"]").is_array());  // in a string
  std::string many = "[";
  for (int i = 0; i < 3000; ++i) many += (i ? ",[]" : "[]");
  many += "]";
  EXPECT_TRUE(util::ParseUntrustedJson(many, 64, 1000).is_discarded());
  EXPECT_EQ(util::ParseUntrustedJson(many, 64, 10000).size(), 3000u);
  EXPECT_EQ(util::ParseUntrustedJson("{\"x\": [1, {\"y\": \"z\"}]}").dump(), "{\"x\":[1,{\"y\":\"z\"}]}");
  EXPECT_TRUE(util::ParseUntrustedJson("{not json").is_discarded());
}

// Names that become one path part (instance ids, run directories) cannot climb or descend.
// Strings measured decoded without parsing: an escape is its one byte, \\u its UTF-8 bytes
// (a surrogate pair four), a quote inside a string does not end it.
TEST(JsonReadTest, StringSizesAreMeasuredDecodedWithoutParsing) {
  auto sizes = util::MeasureJsonStrings(R"({"ab": "x\"y\n", "k": ["\u00e9\u4e2d\ud83d\ude00", 7]})");
  EXPECT_EQ(sizes.longest, 9u);  // 2 + 3 + 4
  EXPECT_EQ(sizes.total, 2u + 4u + 1u + 9u);
  EXPECT_EQ(util::MeasureJsonStrings("[1, 2, null]").total, 0u);
  EXPECT_EQ(util::MeasureJsonStrings("\"unterminated").longest, 12u);
}

TEST(StringsTest, AFileNameIsOnePartOfAPath) {
  EXPECT_TRUE(IsFileName("pkg__repo.62cba957.test_stats.8a32a05c.lv1"));
  const std::vector<std::string> bad_names = {
      "", ".", "..", "../VICTIM", "a/b", std::string("a\0b", 3), "a\nb", std::string(256, 'x')};
  for (const std::string& bad : bad_names) {
    EXPECT_FALSE(IsFileName(bad)) << bad;
  }
}

TEST(Utf8Test, FindsFirstInvalidByte) {
  EXPECT_EQ(FindInvalidUtf8("plain"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("ab\xE9"), 2u);
  EXPECT_EQ(FindInvalidUtf8("\xC0\xAF"), 0u);          // overlong
  EXPECT_EQ(FindInvalidUtf8("x\xED\xA0\x80"), 1u);     // surrogate
  EXPECT_EQ(FindInvalidUtf8("\xE2\x82"), 0u);          // truncated
}

TEST(HashTest, Sha256KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(HashTest, Md5KnownVectors) {  // RFC 1321; and a FeatureBench id's path hash
  EXPECT_EQ(Md5Hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Md5Hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(Md5Hex("astropy/visualization/tests/test_basic_rgb.py").substr(0, 8), "067e927c");
}

TEST(StringsTest, Base64LinesAsRfc4648Says) {
  EXPECT_EQ(Base64Lines(""), "");
  EXPECT_EQ(Base64Lines("f"), "Zg==\n");
  EXPECT_EQ(Base64Lines("fo"), "Zm8=\n");
  EXPECT_EQ(Base64Lines("foobar"), "Zm9vYmFy\n");
  EXPECT_EQ(Base64Lines(std::string("\xff\x00\x01", 3)), "/wAB\n");
  std::string lines = Base64Lines(std::string(100, 'a'));
  EXPECT_EQ(lines.find('\n'), 76u);
  EXPECT_EQ(lines.size(), 136u + 2u);
}

TEST(StringsTest, ShellQuoteAndNumberedLines) {
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  using Lines = std::vector<std::pair<size_t, std::string>>;
  EXPECT_EQ(NumberedLines("a\n\nb"), (Lines{{1, "a"}, {2, ""}, {3, "b"}}));
  EXPECT_EQ(NumberedLines("a\n"), (Lines{{1, "a"}}));
  EXPECT_TRUE(NumberedLines("").empty());
}

TEST(ParallelTest, EveryIndexOnce) {
  std::vector<std::atomic<int>> hits(1000);
  ParallelFor(hits.size(), 4, [&](size_t i, int worker) {
    EXPECT_GE(worker, 0);
    EXPECT_LT(worker, 4);
    hits[i]++;
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  ParallelFor(0, 4, [&](size_t, int) { FAIL(); });
}

// A batch resumes what an earlier run finished, runs the rest once each, reports every
// item once with the running count, and returns the results in item order.
TEST(BatchTest, ResumesRunsAndReportsEveryItemOnce) {
  std::vector<std::atomic<int>> runs(50);
  std::vector<int> reported(50, 0);
  size_t last_done = 0;
  Batch<std::string> b;
  b.jobs = 3;
  b.earlier = [](size_t i) -> std::optional<std::string> {
    if (i % 5 == 0) return "earlier " + std::to_string(i);
    return std::nullopt;
  };
  b.run = [&](size_t i, int worker) {
    EXPECT_GE(worker, 0);
    EXPECT_LT(worker, 3);
    runs[i]++;
    return "now " + std::to_string(i);
  };
  b.report = [&](const BatchItem<std::string>& item) {  // one call at a time
    reported[item.index]++;
    EXPECT_EQ(item.done, ++last_done);
    EXPECT_EQ(item.total, 50u);
    EXPECT_EQ(item.resumed, item.index % 5 == 0);
  };
  auto results = RunBatch(50, b);
  ASSERT_EQ(results.size(), 50u);
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(runs[i].load(), i % 5 == 0 ? 0 : 1) << i;
    EXPECT_EQ(reported[i], 1) << i;
    EXPECT_EQ(*results[i], (i % 5 == 0 ? "earlier " : "now ") + std::to_string(i));
  }
}

// Once a result says the rest would fail alike, no further item starts.
TEST(BatchTest, AStopLeavesTheItemsNotYetStarted) {
  Batch<int> b;
  b.jobs = 1;
  b.run = [](size_t i, int) { return static_cast<int>(i); };
  b.stops = [](const int& r) { return r == 3; };
  auto results = RunBatch(10, b);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(results[i].has_value(), i <= 3) << i;
}

// An exception out of one item is that item's `failed` result; the others are done.
TEST(BatchTest, AnExceptionInOneItemIsItsFailedResult) {
  Batch<std::string> b;
  b.jobs = 3;
  b.run = [](size_t i, int) -> std::string {
    if (i == 4) throw std::runtime_error("boom " + std::to_string(i));
    return "now " + std::to_string(i);
  };
  b.failed = [](size_t i, const std::string& what) {
    return "failed " + std::to_string(i) + ": " + what;
  };
  size_t reported = 0;
  b.report = [&](const BatchItem<std::string>&) { ++reported; };
  auto results = RunBatch(10, b);
  EXPECT_EQ(reported, 10u);
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(*results[i], i == 4 ? "failed 4: boom 4" : "now " + std::to_string(i)) << i;
  }
}

// Without `failed`, the first exception reaches the caller (not std::terminate from a worker
// thread), after the items already started have finished; no item starts after it (one job: item 2 is
// the last).
TEST(BatchTest, WithoutAFailedHookTheExceptionReachesTheCaller) {
  for (int jobs : {1, 3}) {
    std::atomic<int> started = 0;
    Batch<int> b;
    b.jobs = jobs;
    b.run = [&](size_t i, int) {
      ++started;
      if (i == 2) throw std::runtime_error("boom");
      return static_cast<int>(i);
    };
    EXPECT_THROW(RunBatch(100, b), std::runtime_error) << jobs;
    if (jobs == 1) {
      EXPECT_EQ(started.load(), 3);
    }
  }
}

// A failure goes up as it is (failure()), and a stage's own error type keeps what its
// callers act on.
TEST(ExpectedTest, AFailureKeepsItsTypeOnTheWayUp) {
  struct Refused {
    int rule = 0;
    std::string detail;
  };
  auto parse = [](const std::string& s) -> Expected<int, Refused> {
    if (s.empty()) return Refused{7, "empty"};
    return static_cast<int>(s.size());
  };
  auto twice = [&](const std::string& s) -> Expected<int, Refused> {
    auto n = parse(s);
    if (!n.ok()) return n.failure();
    return 2 * *n;
  };
  EXPECT_EQ(*twice("abc"), 6);
  auto bad = twice("");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.failure().rule, 7);
  EXPECT_EQ(bad.failure().detail, "empty");
  auto up = [](Status s) -> Expected<std::string> {
    if (!s.ok()) return s.failure();
    return std::string("fine");
  };
  EXPECT_EQ(up(Error{"disk full"}).error(), "disk full");
  EXPECT_EQ(*up(Status::Ok()), "fine");
}

TEST(PathTest, JoinAndDirName) {
  EXPECT_EQ(JoinPath("a/b", "c"), "a/b/c");
  EXPECT_EQ(JoinPath("a/", "c"), "a/c");
  EXPECT_EQ(JoinPath("", "c"), "c");
  EXPECT_EQ(DirName("a/b/c"), "a/b");
  EXPECT_EQ(DirName("c"), "");
  EXPECT_EQ(DirName("/c"), "/");
}

class RealEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fbkit-env-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string dir_;
};

// A walk for at most N files stops after the (N+1)th: an agent's tree of millions is not
// listed whole to learn it has too many.
TEST_F(RealEnvTest, FilesUnderStopsPastItsBound) {
  Env& env = RealEnv();
  for (int d = 0; d < 3; ++d) {
    ASSERT_TRUE(env.MakeDirs(dir_ + "/d" + std::to_string(d)).ok());
    for (int f = 0; f < 4; ++f) {
      ASSERT_TRUE(env.WriteFileAtomic(dir_ + "/d" + std::to_string(d) + "/r" + std::to_string(f) + ".jsonl", "").ok());
    }
  }
  auto any = [](const std::string&) { return true; };
  auto all = FilesUnder(env, dir_, any);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 12u);
  auto bounded = FilesUnder(env, dir_, any, 5);
  ASSERT_TRUE(bounded.ok());
  EXPECT_EQ(bounded->size(), 6u);
  // Directories count too, at ten times the bound on files (red team round 12: empty
  // directories by the ten thousand made every walk long), and depth costs no stack.
  std::string deep = dir_ + "/deep";
  for (int i = 0; i < 30; ++i) deep += "/x";
  ASSERT_TRUE(env.MakeDirs(deep).ok());
  auto many = FilesUnder(env, dir_ + "/deep", any, 2);
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.error().find("more than 20 entries"), std::string::npos) << many.error();
  auto unbounded = FilesUnder(env, dir_ + "/deep", any);
  ASSERT_TRUE(unbounded.ok()) << unbounded.error();
  EXPECT_TRUE(unbounded->empty());
}

TEST_F(RealEnvTest, AppendFileAddsToAnExistingFileNeverThroughALink) {
  Env& env = RealEnv();
  std::string f = dir_ + "/rows";
  EXPECT_FALSE(env.AppendFile(f, "x").ok());  // not there: appending creates nothing
  ASSERT_TRUE(env.WriteFileAtomic(f, "a\n").ok());
  ASSERT_TRUE(env.AppendFile(f, "b\n").ok());
  ASSERT_TRUE(env.AppendFile(f, "c\n").ok());
  EXPECT_EQ(*env.ReadFile(f), "a\nb\nc\n");
  ASSERT_EQ(::symlink(f.c_str(), (dir_ + "/link").c_str()), 0);
  EXPECT_FALSE(env.AppendFile(dir_ + "/link", "d\n").ok());
  EXPECT_EQ(*env.ReadFile(f), "a\nb\nc\n");
}

TEST_F(RealEnvTest, WriteReadStatList) {
  Env& env = RealEnv();
  ASSERT_TRUE(env.MakeDirs(dir_ + "/a/b").ok());
  ASSERT_TRUE(env.WriteFileAtomic(dir_ + "/a/b/f.txt", "hello").ok());
  auto data = env.ReadFile(dir_ + "/a/b/f.txt");
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(*data, "hello");
  auto info = env.Stat(dir_ + "/a/b/f.txt", true);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->size, 5u);
  EXPECT_EQ(info->type, FileType::kRegular);
  ASSERT_EQ(::symlink("b/f.txt", (dir_ + "/a/link").c_str()), 0);
  auto list = env.ListDir(dir_ + "/a");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "b");
  EXPECT_EQ((*list)[0].type, FileType::kDirectory);
  EXPECT_EQ((*list)[1].type, FileType::kSymlink);
  auto missing = env.ReadFile(dir_ + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find(dir_ + "/nope"), std::string::npos);
  EXPECT_FALSE(env.ReadFile(dir_ + "/a").ok());
  EXPECT_FALSE(env.WriteFileAtomic(dir_ + "/no/such/dir/f", "x").ok());
}

// A directory sandboxed code could write (an environment's cache entry) may hold links
// planted under every name a temporary file could have had: the write goes through none of
// them, and a link at the destination is replaced, not followed.
TEST_F(RealEnvTest, AnAtomicWriteFollowsNoPlantedLink) {
  Env& env = RealEnv();
  ASSERT_TRUE(env.MakeDirs(dir_ + "/entry").ok());
  ASSERT_TRUE(env.WriteFileAtomic(dir_ + "/victim", "host file").ok());
  std::string pid = std::to_string(::getpid());
  for (int n = 0; n < 200; ++n) {
    std::string link = dir_ + "/entry/env.json.tmp." + pid + "." + std::to_string(n);
    ASSERT_EQ(::symlink((dir_ + "/victim").c_str(), link.c_str()), 0);
  }
  ASSERT_EQ(::symlink((dir_ + "/victim").c_str(), (dir_ + "/entry/env.json").c_str()), 0);
  ASSERT_TRUE(env.WriteFileAtomic(dir_ + "/entry/env.json", "{}").ok());
  EXPECT_EQ(*env.ReadFile(dir_ + "/victim"), "host file");
  auto info = env.Stat(dir_ + "/entry/env.json", false);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->type, FileType::kRegular);
  EXPECT_EQ(*env.ReadFile(dir_ + "/entry/env.json"), "{}");
}

// WalkTree gives each entry with its own type, goes into no linked directory, and passes
// over a directory it cannot list (as a user: root lists everything).
TEST_F(RealEnvTest, WalkTreeListsWithoutFollowingLinks) {
  Env& env = RealEnv();
  ASSERT_TRUE(env.MakeDirs(dir_ + "/t/a/b").ok());
  ASSERT_TRUE(env.MakeDirs(dir_ + "/t/closed").ok());
  ASSERT_TRUE(env.WriteFileAtomic(dir_ + "/t/a/b/f.py", "x").ok());
  ASSERT_TRUE(env.WriteFileAtomic(dir_ + "/t/closed/g.py", "x").ok());
  ASSERT_EQ(::symlink((dir_ + "/t/a").c_str(), (dir_ + "/t/link").c_str()), 0);
  ASSERT_EQ(::chmod((dir_ + "/t/closed").c_str(), 0), 0);
  std::vector<std::string> seen;
  WalkTree(env, dir_ + "/t", [&](const std::string& rel, FileType type) {
    seen.push_back(rel + (type == FileType::kDirectory ? "/" : type == FileType::kSymlink ? "@" : ""));
    return rel != "a/b";  // not into a/b
  });
  ::chmod((dir_ + "/t/closed").c_str(), 0700);
  std::vector<std::string> want = {"a/", "a/b/", "closed/"};
  if (::geteuid() == 0) want.push_back("closed/g.py");
  want.push_back("link@");
  EXPECT_EQ(seen, want);
  auto held = env.LockFile(dir_ + "/t/.lock");
  EXPECT_NE(held, nullptr);
  EXPECT_TRUE(env.Stat(dir_ + "/t/.lock", false).ok());
}

// CopyFile keeps what a repository's copy must keep (bytes, the executable bit, a link as a
// link), never writes through a link at the destination, and refuses a FIFO without hanging.
TEST_F(RealEnvTest, CopyFileKeepsModeAndLinksAndRefusesAFifo) {
  Env& env = RealEnv();
  ASSERT_TRUE(env.WriteFileAtomic(dir_ + "/run.sh", "#!/bin/sh\n").ok());
  ASSERT_EQ(::chmod((dir_ + "/run.sh").c_str(), 0750), 0);
  ASSERT_TRUE(env.MakeDirs(dir_ + "/copy").ok());
  ASSERT_TRUE(env.CopyFile(dir_ + "/run.sh", dir_ + "/copy/run.sh").ok());
  EXPECT_EQ(*env.ReadFile(dir_ + "/copy/run.sh"), "#!/bin/sh\n");
  EXPECT_EQ(env.Stat(dir_ + "/copy/run.sh", false)->mode, 0750u);
  ASSERT_EQ(::symlink("run.sh", (dir_ + "/alias").c_str()), 0);
  ASSERT_TRUE(env.CopyFile(dir_ + "/alias", dir_ + "/copy/alias").ok());
  EXPECT_EQ(env.Stat(dir_ + "/copy/alias", false)->type, FileType::kSymlink);
  EXPECT_EQ(*env.ReadLink(dir_ + "/copy/alias"), "run.sh");
  EXPECT_FALSE(env.CopyFile(dir_ + "/alias", dir_ + "/copy/alias").ok());  // exists
  // A link where the copy goes is not written through.
  ASSERT_TRUE(env.WriteFileAtomic(dir_ + "/victim", "host file").ok());
  ASSERT_EQ(::symlink((dir_ + "/victim").c_str(), (dir_ + "/copy/trap").c_str()), 0);
  EXPECT_FALSE(env.CopyFile(dir_ + "/run.sh", dir_ + "/copy/trap").ok());
  EXPECT_EQ(*env.ReadFile(dir_ + "/victim"), "host file");
  ASSERT_EQ(::mkfifo((dir_ + "/pipe").c_str(), 0600), 0);
  auto fifo = env.CopyFile(dir_ + "/pipe", dir_ + "/copy/pipe");
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.error().find("not a regular file"), std::string::npos) << fifo.error();
  ASSERT_TRUE(env.WriteFileAtomic(dir_ + "/copy/new.sh", "echo\n").ok());
  ASSERT_TRUE(env.CopyMode(dir_ + "/run.sh", dir_ + "/copy/new.sh").ok());
  EXPECT_EQ(env.Stat(dir_ + "/copy/new.sh", false)->mode, 0750u);
  EXPECT_FALSE(env.ReadLink(dir_ + "/run.sh").ok());
}

}  // namespace
}  // namespace fbkit::util

namespace fbkit::util {
namespace {

TEST(StringsTest, SplitKeepsEmptyPieces) {
  EXPECT_EQ(Split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(Split("", ','), std::vector<std::string>{""});
  EXPECT_EQ(Split("a.", '.'), (std::vector<std::string>{"a", ""}));
  using Views = std::vector<std::string_view>;
  EXPECT_EQ(Records(std::string("a\0\0b\0", 5), '\0'), (Views{"a", "", "b"}));
  EXPECT_EQ(Records(std::string("a\0b", 3), '\0'), (Views{"a", "b"}));
  EXPECT_TRUE(Records("", '\0').empty());
}

}  // namespace
}  // namespace fbkit::util

namespace fbkit::util {
namespace {

// Tests running as fbkit's user can leave directories it cannot list or empty: removing the
// tree gives them their owner's permissions back (through descriptors) and succeeds.
TEST_F(RealEnvTest, RemovesDirectoriesMadeUnreadableAndUnwritable) {
  std::string dir = dir_ + "/tree";
  Env& env = RealEnv();
  ASSERT_TRUE(env.MakeDirs(dir + "/locked/inner").ok());
  ASSERT_TRUE(env.WriteFileAtomic(dir + "/locked/inner/f", "x").ok());
  ASSERT_EQ(::chmod((dir + "/locked/inner").c_str(), 0), 0);
  ASSERT_EQ(::chmod((dir + "/locked").c_str(), 0500), 0);
  EXPECT_TRUE(env.RemoveAll(dir).ok());
  EXPECT_FALSE(env.Stat(dir, false).ok());
}

}  // namespace
}  // namespace fbkit::util

#include "tracer/trace.h"

#include <gtest/gtest.h>

namespace fbkit::tracer {
namespace {

TEST(ShardBoundsTest, ContiguousPartsWithTheSmallestLargestPart) {
  // 10 | 1 1 1 1 1 | 5 5: the best contiguous cut in three has parts of 10, 5 and 10.
  std::vector<double> w = {10, 1, 1, 1, 1, 1, 5, 5};
  EXPECT_EQ(ShardBounds(w, 3), (std::vector<size_t>{0, 1, 7, 8}));
  EXPECT_EQ(ShardBounds(w, 1), (std::vector<size_t>{0, 8}));
  // Equal weights split evenly; more shards than files leave the last ones empty.
  EXPECT_EQ(ShardBounds({1, 1, 1, 1}, 2), (std::vector<size_t>{0, 2, 4}));
  EXPECT_EQ(ShardBounds({1, 1}, 4), (std::vector<size_t>{0, 1, 2, 2, 2}));
  EXPECT_EQ(ShardBounds({}, 2), (std::vector<size_t>{0, 0, 0}));
}

TraceSet Shard(int index, int count, std::vector<std::string> all, std::vector<std::string> files) {
  TraceSet t;
  t.root = "/r";
  t.mode = TraceMode::kIsolate;
  t.python = "3.11";
  t.shard = ShardInfo{index, count, std::move(all), files};
  for (const auto& f : files) {
    t.files[f].file = f;
    t.counts["passed"] += 1;
    t.warnings.push_back({f + "::t", "w"});
  }
  return t;
}

TEST(MergeShardsTest, MergesInShardOrderAndRefusesIncompleteSets) {
  std::vector<std::string> all = {"a.py", "b.py", "c.py"};
  auto merged = MergeShards({Shard(2, 2, all, {"c.py"}), Shard(1, 2, all, {"a.py", "b.py"})});
  ASSERT_TRUE(merged.ok()) << merged.error();
  EXPECT_EQ(merged->files.size(), 3u);
  EXPECT_EQ(merged->counts["passed"], 3);
  ASSERT_EQ(merged->warnings.size(), 3u);
  EXPECT_EQ(merged->warnings[0].nodeid, "a.py::t");
  EXPECT_EQ(merged->warnings[2].nodeid, "c.py::t");
  EXPECT_FALSE(merged->shard);
  EXPECT_FALSE(MergeShards({Shard(1, 2, all, {"a.py", "b.py"})}).ok());
  EXPECT_FALSE(MergeShards({Shard(1, 2, all, {"a.py"}), Shard(2, 2, all, {"c.py"})}).ok());
  EXPECT_FALSE(MergeShards({Shard(1, 2, all, {"a.py", "b.py"}), Shard(1, 2, all, {"c.py"})}).ok());
  EXPECT_FALSE(MergeShards({Shard(1, 2, all, {"a.py", "b.py"}), Shard(2, 3, all, {"c.py"})}).ok());
  TraceSet other = Shard(2, 2, all, {"c.py"});
  other.root = "/elsewhere";
  EXPECT_FALSE(MergeShards({Shard(1, 2, all, {"a.py", "b.py"}), other}).ok());
}

FileTrace Collected(const std::string& file, std::vector<std::string> names) {
  FileTrace f;
  f.file = file;
  for (const auto& n : names) f.nodeids.push_back(file + "::" + n);
  return f;
}

TEST(DoctestsOnlyTest, LibraryModulesCollectedForTheirDoctestsAreNoTestFiles) {
  EXPECT_TRUE(DoctestsOnly(Collected("astropy/io/fits/header.py",
                                     {"astropy.io.fits.header.Header.fromstring",
                                      "astropy.io.fits.header.Header"})));
  EXPECT_TRUE(DoctestsOnly(Collected("src/units/convert.py", {"units.convert.to_meters"})));
  EXPECT_TRUE(DoctestsOnly(Collected("src/units/__init__.py", {"units"})));
  EXPECT_TRUE(DoctestsOnly(Collected("pkg/util.py", {})));  // collected, no doctests in it
  // Test modules and their functions, classes and parameters are tests whatever they hold.
  EXPECT_FALSE(DoctestsOnly(Collected("tests/test_foo.py", {"test_foo"})));
  EXPECT_FALSE(DoctestsOnly(Collected("tests/test_foo.py", {"tests.test_foo.helper"})));
  EXPECT_FALSE(DoctestsOnly(Collected("pkg/checks.py", {"test_a", "pkg.checks.f"})));
  EXPECT_FALSE(DoctestsOnly(Collected("pkg/checks.py", {"TestA::test_b"})));
  EXPECT_FALSE(DoctestsOnly(Collected("pkg/checks.py", {"pkg.checks.f[1]"})));
  EXPECT_FALSE(DoctestsOnly(Collected("pkg/checks.py", {"other.module.f"})));
  EXPECT_FALSE(DoctestsOnly(Collected("docs/index.rst", {"index.rst"})));
  // python_functions may name a test after its module: in a tests directory it is a test.
  EXPECT_FALSE(DoctestsOnly(Collected("tests/stats_check.py", {"stats_check"})));
  EXPECT_FALSE(DoctestsOnly(Collected("checks/stats_check.py", {"stats_check"})));
  EXPECT_FALSE(DoctestsOnly(Collected("stats_check.py", {"stats_check"})));
  EXPECT_FALSE(DoctestsOnly(Collected("pkg/tests/helpers.py", {"pkg.tests.helpers.f"})));
}

}  // namespace
}  // namespace fbkit::tracer

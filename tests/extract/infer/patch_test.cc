#include "extract/infer/patch.h"

#include <gtest/gtest.h>

#include <string>

namespace fbkit::extract::infer {
namespace {

const std::string kZero(40, '0');
const std::string kOld = std::string(39, '1') + "a";
const std::string kNew = std::string(39, '2') + "b";

// One file as `git diff --raw --numstat -z` lists it: the raw record, then numstat's row.
std::string Listed(const std::string& path, const std::string& old_blob,
                   const std::string& new_blob, const std::string& numstat) {
  std::string old_mode = old_blob == kZero ? "000000" : "100644";
  std::string new_mode = new_blob == kZero ? "000000" : "100644";
  char status = old_blob == kZero ? 'A' : new_blob == kZero ? 'D' : 'M';
  return ":" + old_mode + " " + new_mode + " " + old_blob + " " + new_blob + " " + status +
         std::string(1, '\0') + path + std::string(1, '\0') + numstat + "\t" + path +
         std::string(1, '\0');
}

ChangedFile File(const std::string& path, uint64_t old_bytes, uint64_t new_bytes,
                 uint64_t lines) {
  ChangedFile f;
  f.path = path;
  f.old_bytes = old_bytes;
  f.new_bytes = new_bytes;
  f.lines = lines;
  return f;
}

TEST(PatchTest, ParsesGitsListingInItsOrder) {
  std::string listing = Listed("a.py", kOld, kNew, "3\t1") + Listed("new.bin", kZero, kNew, "-\t-") +
                        Listed("caf\xe9.py", kZero, kNew, "1\t0");
  auto parsed = ParseChangedFiles(listing);
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  const auto& files = *parsed;
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].path, "a.py");
  EXPECT_EQ(files[0].old_mode, "100644");
  EXPECT_EQ(files[0].old_blob, kOld);
  EXPECT_EQ(files[0].new_blob, kNew);
  EXPECT_EQ(files[0].lines, 4u);
  EXPECT_FALSE(files[0].binary);
  EXPECT_TRUE(files[1].binary);
  EXPECT_EQ(files[1].old_mode, "000000");
  EXPECT_FALSE(files[0].not_utf8);
  EXPECT_TRUE(files[2].not_utf8);  // a Latin-1 name
}

TEST(PatchTest, AMissingRawRecordIsAnError) {
  auto files = ParseChangedFiles(std::string("1\t0\ta.py") + '\0');
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.error(), "git listed no start for a.py");
}

TEST(PatchTest, RemovedLinesAreChargedTheOldContents) {
  // Red team round 11, L2: a removal carries its old contents in "-" lines.
  ChangedFile removed = File("big.py", 50u << 20, 0, 9);
  ChangedFile added = File("new.py", 0, 20u << 20, 9);
  EXPECT_GE(PatchCost(removed), 50u << 20);
  auto out = ChooseLeftOut({removed, added}, 1 << 20, 64u << 20);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].index, 1u);  // the removal fits, the addition is past the bound
  EXPECT_NE(out[0].why.find("past the 64 MiB"), std::string::npos) << out[0].why;
}

TEST(PatchTest, LeavesOutBinaryNotUtf8AndOversizedFilesWithTheirReasons) {
  std::vector<ChangedFile> files = {File("a.bin", 0, 10, 0), File("b.py", 3100, 10, 2),
                                    File("c.py", 0, 10, 1), File("d.py", 0, 10, 1)};
  files[0].binary = true;
  files[2].not_utf8 = true;
  auto out = ChooseLeftOut(files, 2, 64u << 20);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].why, "binary");
  EXPECT_EQ(out[1].why, "3 KiB (over the limit)");  // the larger side counts
  EXPECT_EQ(out[2].why, kNotUtf8);
}

TEST(PatchTest, RestoreInputPutsBackWhatWasThere) {
  std::vector<ChangedFile> files = {File("kept.py", 1, 1, 1), File("new\tname.py", 0, 1, 1)};
  files[0].old_mode = "100644", files[0].old_blob = kOld;
  files[1].old_mode = "000000", files[1].old_blob = kZero;
  std::string input = RestoreInput(files, {{0, "x"}, {1, "y"}});
  EXPECT_EQ(input, "100644 " + kOld + "\tkept.py" + std::string(1, '\0') + "000000 " + kZero +
                       "\tnew\tname.py" + std::string(1, '\0'));
}

}  // namespace
}  // namespace fbkit::extract::infer

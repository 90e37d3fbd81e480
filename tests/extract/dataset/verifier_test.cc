// The script that carries a verifier's files (SWE-bench's eval_script) writes them back exactly.
#include "extract/dataset/verifier.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fbkit::extract::dataset {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(WriteFilesScript, BashWritesEveryFileBackByteForByte) {
  std::map<std::string, std::string> files = {
      {"text.py", "print('x')\nEOF\n'quoted' \"$HOME\" `cmd` \\\n"},
      {"no_newline.txt", "the end"},
      {"binary.tar", std::string("\0\xff\x01tar\n", 7)},
      {"empty", ""},
      {"dir/sub/file.json", "{}\n"},
      {"lookalike", "FBKIT_EOF_\nFBKIT_EOF_0000\n"},
  };
  std::string dir = ::testing::TempDir() + "verifier_files";
  std::filesystem::remove_all(dir);
  std::string script_path = ::testing::TempDir() + "write_files.sh";
  std::ofstream(script_path, std::ios::binary) << WriteFilesScript(files, dir);
  ASSERT_EQ(std::system(("/bin/bash " + script_path).c_str()), 0);
  for (const auto& [name, bytes] : files) EXPECT_EQ(Slurp(dir + "/" + name), bytes) << name;
}

}  // namespace
}  // namespace fbkit::extract::dataset

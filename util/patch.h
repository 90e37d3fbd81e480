// Unified diffs split per file: which files a patch touches (new, deleted, renamed) and each
// file's section as text (so a patch can be applied or reverted file by file).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace fbkit::util {

struct FilePatch {
  std::string old_path;  // empty for a new file (/dev/null)
  std::string new_path;  // empty for a deleted file
  bool binary = false;
  std::string text;  // this file's section, headers included, ending in '\n'

  const std::string& path() const { return new_path.empty() ? old_path : new_path; }
  bool is_new() const { return old_path.empty(); }
  bool is_deleted() const { return new_path.empty(); }
};

// Splits a git-style ("diff --git") or plain unified diff into its files, in patch order.
// An empty patch gives no files; text that holds no file header is an error.
Expected<std::vector<FilePatch>> ParsePatch(std::string_view diff);

// The concatenation of the sections (a valid patch of those files).
std::string JoinPatch(const std::vector<FilePatch>& files);

}  // namespace fbkit::util

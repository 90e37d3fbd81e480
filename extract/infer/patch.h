// What of an agent's changes goes into its patch: the files git lists, what each costs in
// the patch, and which are left out (binary, too large, past the patch's bound, or bytes a
// JSON prediction cannot carry). Pure functions; CollectPatch (instance.cc) runs git.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/expected.h"

namespace fbkit::extract::infer {

// One changed file as `git diff --raw --numstat -z` lists it, with the sizes git stored.
struct ChangedFile {
  std::string path;
  std::string old_mode;  // "000000": it is new
  std::string old_blob;  // all zeros: it is new
  std::string new_blob;  // all zeros: it was removed
  uint64_t old_bytes = 0;
  uint64_t new_bytes = 0;
  uint64_t lines = 0;  // added plus removed lines
  bool binary = false;
  bool not_utf8 = false;  // its name or either side's contents is no valid UTF-8
};

// The files of `git diff --cached --no-renames --raw --numstat --no-abbrev -z` output, in
// git's order (sizes and not_utf8 of the name filled; contents are checked elsewhere).
// An error names a path whose raw record is missing.
util::Expected<std::vector<ChangedFile>> ParseChangedFiles(std::string_view listing);

// What a file's entry in the patch may cost at most: its header names the path four times
// (escaped, at most four bytes a character) beside modes and blob ids, every changed line
// takes a sign, and its lines come from both sides (removed lines carry the old contents).
uint64_t PatchCost(const ChangedFile& f);

// A file left out of the patch and why (its index in the list).
struct LeftOut {
  size_t index = 0;
  std::string why;
};

// Why a file whose name or contents are no valid UTF-8 is left out.
inline constexpr const char* kNotUtf8 = "not UTF-8 (a JSON patch cannot carry its bytes)";

// The files to leave out, in order: binary ones, names or contents that are no UTF-8, those
// whose larger side is over `max_kb` KiB, and those past `max_total` bytes together (in
// git's order, each charged PatchCost).
std::vector<LeftOut> ChooseLeftOut(const std::vector<ChangedFile>& files, int64_t max_kb,
                                   uint64_t max_total);

// The `git update-index -z --index-info` input that puts the left-out files back as they
// were at the start (mode 000000: they were not there).
std::string RestoreInput(const std::vector<ChangedFile>& files, const std::vector<LeftOut>& out);

}  // namespace fbkit::extract::infer

// The entities cache: one pack file per repository root holding, for every file of the last
// run, its stat (size, mtime, ctime, inode), the SHA-256 of its bytes, the record key (a hash
// of parser version, path, module and content hash), its parse errors and its JSON fragment.
// A run reads the pack once and writes a new one once. A file whose stat is unchanged is
// not even read, unless it was modified within two seconds of the previous run (git's
// "racy" rule); otherwise it is read and hashed, and its record is reused if the key matches.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "parser/entity.h"
#include "util/env.h"

namespace fbkit::parser {

// What the cache keeps per file besides its stat: the JSON fragment and the parse errors.
// Fragments of the previous run are views into the pack (see storage()); those of this run
// must outlive Save().
struct CachedFile {
  std::string_view fragment;
  std::vector<ParseError> parse_errors;
};

class EntityCache {
 public:
  // `dir` is the cache directory; `root` the absolute repository root; `files` the number
  // of files of this run (the slots passed to Put); `variant` names what the parser was
  // asked for beyond the default (e.g. "references"), so variants never share records.
  EntityCache(util::Env& env, std::string dir, const std::string& root, size_t files,
              std::string variant = "");

  // Reads the pack of the previous run; a missing or corrupt pack is treated as empty.
  void Open();
  // The record for `path` if its stat matches the previous run's, is not racy, and its key
  // is still the one for (path, module); sets *sha to the recorded content hash.
  const CachedFile* LookupByStat(const std::string& path, const std::string& module,
                                 const util::FileInfo& info, std::string* sha) const;
  // The record with this key (the content hash matched), if any.
  const CachedFile* LookupByKey(const std::string& key) const;
  // Keeps a file's record for the next pack. Thread-safe for distinct slots. `unchanged`:
  // the record is the previous run's, found by an unchanged stat.
  void Put(size_t slot, const std::string& path, const util::FileInfo& info,
           const std::string& sha, const std::string& key, const CachedFile& file,
           bool unchanged);
  // Writes the new pack (atomically replacing the old one), unless every file was found
  // unchanged by its stat: then the old pack is already right.
  util::Status Save();
  // The previous run's pack, which fragments returned by the lookups point into.
  std::shared_ptr<const std::string> storage() const { return pack_; }

  std::string Key(const std::string& path, const std::string& module,
                  const std::string& sha) const;

 private:
  struct Record {
    uint64_t size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    uint64_t inode = 0;
    std::string sha, key, path;
    CachedFile file;
  };
  bool Parse(std::string_view pack);

  util::Env& env_;
  std::string variant_;
  std::string pack_path_;
  std::shared_ptr<const std::string> pack_;
  int64_t written_ns_ = 0;
  std::vector<Record> old_;
  std::unordered_map<std::string, size_t> by_path_, by_key_;
  std::vector<Record> next_;
  std::vector<char> unchanged_;  // per slot
};

}  // namespace fbkit::parser

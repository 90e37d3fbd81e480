// The entities cache: per-file records keyed by a hash of (parser version, path, module,
// file content), plus a per-root manifest of file stats so an unchanged file is not even
// re-read. A stat entry is trusted only if the file was last modified more than two seconds
// before the manifest was written (git's "racy" rule); otherwise the file is re-hashed.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "parser/entity.h"
#include "util/env.h"

namespace fbkit::parser {

// What the cache keeps per file: the JSON fragment and the parse errors as text lines.
struct CachedFile {
  std::string fragment;
  std::vector<ParseError> parse_errors;
};

class EntityCache {
 public:
  // `dir` is the cache directory; `root` the absolute repository root (the manifest's key).
  EntityCache(util::Env& env, std::string dir, const std::string& root);

  // Reads the manifest; a missing or corrupt one is treated as empty.
  void LoadManifest();
  // The content hash recorded for `rel_path` if its stat still matches and is not racy.
  std::optional<std::string> KnownSha(const std::string& rel_path, const util::FileInfo& info) const;
  // Records the stat and hash of a file for the next manifest (thread-safe after Reserve).
  void Remember(size_t slot, const std::string& rel_path, const util::FileInfo& info,
                const std::string& sha);
  void Reserve(size_t files);
  util::Status SaveManifest();

  static std::string Key(const std::string& path, const std::string& module,
                         const std::string& sha);
  std::optional<CachedFile> Load(const std::string& key);
  util::Status Store(const std::string& key, const CachedFile& file);

 private:
  struct StatEntry {
    uint64_t size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    uint64_t inode = 0;
    std::string sha;
  };
  std::string RecordPath(const std::string& key) const;

  util::Env& env_;
  std::string dir_;
  std::string manifest_path_;
  int64_t manifest_written_ns_ = 0;
  std::unordered_map<std::string, StatEntry> known_;
  std::vector<std::pair<std::string, StatEntry>> next_;
};

}  // namespace fbkit::parser

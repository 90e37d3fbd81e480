// An in-memory Env for tests: files, directories and symlinks in a map, a settable clock,
// and counters of reads so tests can check what was (not) touched. Thread-safe like the
// real one (the entity table reads files from several threads).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "util/env.h"

namespace fbkit::testing {

class FakeEnv : public util::Env {
 public:
  // Creates the file and its parent directories; bumps its mtime to the clock.
  void AddFile(const std::string& path, const std::string& data);
  void AddDir(const std::string& path);
  void AddSymlink(const std::string& path, const std::string& target);
  void SetNow(int64_t ns) { now_ns_ = ns; }
  int reads(const std::string& path) const;
  bool Exists(const std::string& path) const { return nodes_.count(path) > 0; }
  const std::string& Contents(const std::string& path) const { return nodes_.at(path).data; }

  util::Expected<std::string> ReadFile(const std::string& path) override;
  util::Expected<std::string> ReadUntrusted(const std::string& base, const std::string& rel,
                                            uint64_t max_bytes) override;
  util::Expected<std::string> ReadFileFrom(const std::string& path, uint64_t offset) override;
  util::Status WriteFileAtomic(const std::string& path, std::string_view data) override;
  util::Status AppendFile(const std::string& path, std::string_view data) override;
  util::Expected<util::FileInfo> Stat(const std::string& path, bool follow_symlinks) override;
  util::Expected<std::vector<util::DirEntry>> ListDir(const std::string& path) override;
  util::Status MakeDirs(const std::string& path) override;
  util::Status RemoveAll(const std::string& path) override;
  util::Status RemoveEmptyDir(const std::string& path) override;
  util::Status Rename(const std::string& from, const std::string& to) override;
  int64_t NowNs() override { return now_ns_; }
  util::Expected<std::string> RealPath(const std::string& path) override;
  util::Expected<std::string> ReadLink(const std::string& path) override;
  // Holds nothing (the fake's callers are one process); counted.
  std::unique_ptr<util::HeldLock> LockFile(const std::string& path) override;
  int locks() const { return locks_; }
  util::Status CopyFile(const std::string& from, const std::string& to) override;
  util::Status CopyMode(const std::string& from, const std::string& to) override;
  void SetMode(const std::string& path, uint32_t mode);

 private:
  struct Node {
    util::FileType type = util::FileType::kRegular;
    std::string data;  // file contents, or a symlink's target
    int64_t mtime_ns = 0;
    uint64_t inode = 0;
    uint32_t mode = 0644;
  };
  // The node `path` names, following links when asked; `resolved` gets the path reached.
  const Node* Resolve(const std::string& path, bool follow, std::string* resolved = nullptr) const;

  std::map<std::string, Node> nodes_;
  std::map<std::string, int> reads_;
  mutable std::recursive_mutex mu_;
  int64_t now_ns_ = 1'000'000'000'000;
  uint64_t next_inode_ = 1;
  int locks_ = 0;
};

}  // namespace fbkit::testing

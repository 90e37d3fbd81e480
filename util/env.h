// The side effects fbkit needs from the operating system (files, directories, clock),
// behind one small interface so tests can substitute an in-memory fake (cf. ninja's
// DiskInterface, leveldb's Env). Paths are plain strings; errors name the path.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace fbkit::util {

enum class FileType { kRegular, kDirectory, kSymlink, kOther };

struct FileInfo {
  FileType type = FileType::kOther;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t inode = 0;
  uint64_t links = 1;  // hard links to it (a regular file with more may be any file's)
  uint32_t mode = 0;   // permission bits (07777)
};

struct DirEntry {
  std::string name;
  FileType type = FileType::kOther;  // the entry itself, symlinks not followed
};

std::string JoinPath(std::string_view a, std::string_view b);

// The most fbkit reads of one file of a tree it does not trust (a repository, a task
// directory, a copy a patch was applied to) on the host, through Env::ReadUntrusted.
inline constexpr uint64_t kMaxTreeFileBytes = 256u << 20;

// A lock Env::LockFile took, held until destroyed.
class HeldLock {
 public:
  virtual ~HeldLock() = default;
};

class Env {
 public:
  virtual ~Env() = default;
  virtual Expected<std::string> ReadFile(const std::string& path) = 0;
  // The bytes from `offset` to the end (empty when the file is shorter).
  virtual Expected<std::string> ReadFileFrom(const std::string& path, uint64_t offset) = 0;
  // The last `max_bytes` of a file (all of it when shorter): a log fbkit wrote of what
  // untrusted code printed, read within a bound.
  Expected<std::string> ReadTail(const std::string& path, uint64_t max_bytes) {
    auto st = Stat(path, false);
    if (!st.ok()) return st.failure();
    return ReadFileFrom(path, st->size > max_bytes ? st->size - max_bytes : 0);
  }
  // A file that code fbkit does not trust wrote (inside a sandbox's writable tree): `rel`
  // below the trusted directory `base`, read only when no component of `rel` is a symlink
  // and it is a regular file (never a FIFO or device, so nothing blocks), at most
  // `max_bytes` of it (longer: an error).
  virtual Expected<std::string> ReadUntrusted(const std::string& base, const std::string& rel,
                                              uint64_t max_bytes) {
    (void)max_bytes;
    return ReadFile(JoinPath(base, rel));
  }
  // Writes via a temporary file and rename, so readers never see a partial file.
  virtual Status WriteFileAtomic(const std::string& path, std::string_view data) = 0;
  // Adds `data` at the end of an existing regular file (never through a symlink): a file
  // written piece by piece, each piece dropped once written.
  virtual Status AppendFile(const std::string& path, std::string_view data) = 0;
  virtual Expected<FileInfo> Stat(const std::string& path, bool follow_symlinks) = 0;
  // Entries other than "." and "..", sorted by name.
  virtual Expected<std::vector<DirEntry>> ListDir(const std::string& path) = 0;
  virtual Status MakeDirs(const std::string& path) = 0;
  // Removes a file or a directory tree (symlinks themselves, never their targets); a
  // missing path is no error.
  virtual Status RemoveAll(const std::string& path) = 0;
  // Removes `path` if it is an empty directory; anything else (a directory another process
  // still fills) is an error and stays.
  virtual Status RemoveEmptyDir(const std::string& path) = 0;
  // Renames a file or directory (same file system).
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  virtual int64_t NowNs() = 0;
  // The absolute path with symlinks, "." and ".." resolved.
  virtual Expected<std::string> RealPath(const std::string& path) = 0;
  // An exclusive advisory lock on `path` (the file made when missing), for processes that
  // share a directory (shards, parallel builds of one environment); blocks until held.
  virtual std::unique_ptr<HeldLock> LockFile(const std::string& path) = 0;
  // The target a symlink holds, as written in it.
  virtual Expected<std::string> ReadLink(const std::string& path) = 0;
  // A copy of `from` at `to`, whose directory exists: a symlink as the same link (`to` must
  // not exist), a regular file with its bytes and permission bits (`to` replaced, never
  // written through a link); anything else (a FIFO, a device) is an error.
  virtual Status CopyFile(const std::string& from, const std::string& to) = 0;
  // `to` (links followed) given the permission bits of `from` (links followed).
  virtual Status CopyMode(const std::string& from, const std::string& to) = 0;
};

// The process-wide POSIX implementation.
Env& RealEnv();

// "a/b" + "c" -> "a/b/c"; an empty side returns the other.
std::string JoinPath(std::string_view a, std::string_view b);
// Directory part of a path ("" for a bare name).
std::string DirName(std::string_view path);
// Whether `path` is `dir` or lies below it, by their text ("/a/bc" is not under "/a/b").
bool IsUnder(std::string_view path, std::string_view dir);

// DIR made and each (name, content) written into it atomically, in order; the first failure
// stops, naming the directory or the file (a result that cannot be written is an error,
// never dropped).
Status WriteFiles(Env& env, const std::string& dir,
                  const std::vector<std::pair<std::string, std::string>>& files);

// Each entry below `root`, root-relative, with its own type (links are not followed),
// entries of a directory in name order, depth first; `visit` returns whether to go into a
// directory it was given. A directory that cannot be listed is passed over. No bound: for
// trees whose size fbkit does not have to fear (FilesUnder is for those it does).
void WalkTree(Env& env, const std::string& root,
              const std::function<bool(const std::string& rel, FileType type)>& visit);

// `path` itself when it is no directory, else the regular files under it whose names pass
// `name_ok`, sorted; symlinks are not followed. The walk stops once it has found more than
// `max_files` (a tree an agent wrote can hold millions): then max_files + 1 come back. With
// such a bound, more than 10 * max_files entries looked at (directories too) is an error.
Expected<std::vector<std::string>> FilesUnder(
    Env& env, const std::string& path,
    const std::function<bool(const std::string&)>& name_ok, size_t max_files = SIZE_MAX);

}  // namespace fbkit::util

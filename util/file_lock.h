// An exclusive advisory lock (flock) on a file for the life of the object: fbkit processes
// that share a directory (concurrent shards, parallel builds of one environment) take turns.
#pragma once

#include <string>

namespace fbkit::util {

class FileLock {
 public:
  explicit FileLock(const std::string& path);  // blocks until the lock is held
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace fbkit::util

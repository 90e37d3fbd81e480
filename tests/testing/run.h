// Test helpers for end-to-end tests: run a command, capture its output and exit status,
// and manage scratch directories.
#pragma once

#include <string>
#include <vector>

namespace fbkit::testing {

struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

// Runs argv (no shell) with stdin closed; captures stdout and stderr.
RunResult RunCommand(const std::vector<std::string>& argv);

// A fresh directory under /tmp, removed by the destructor.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// Held (an exclusive flock on a file under /tmp) by every test that runs fbkit as nobody
// or starts a fork bomb in a sandbox (which runs as nobody when fbkit is root): nobody's
// RLIMIT_NPROC counts every process of that uid on the machine, so such tests must not
// overlap when ctest runs tests in parallel.
class NobodyLock {
 public:
  NobodyLock();
  ~NobodyLock();
  NobodyLock(const NobodyLock&) = delete;
  NobodyLock& operator=(const NobodyLock&) = delete;

 private:
  int fd_ = -1;
};

std::string ReadFileOrDie(const std::string& path);
void WriteFileOrDie(const std::string& path, const std::string& data);

}  // namespace fbkit::testing

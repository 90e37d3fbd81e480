// Child processes behind a small interface (fakes in tests): start a command in its own
// process group with a working directory, environment changes and a log file for its
// output, inside the sandbox its spec asks for; poll it; kill the whole group.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/sandbox.h"
#include "util/expected.h"

namespace fbkit::sandbox {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH
  // Environment variables set on top of the parent's.
  std::vector<std::pair<std::string, std::string>> vars;
  std::string cwd;
  std::string log_path;  // stdout, and stderr unless err_path names its own file
  // kNone: the parent's environment plus `vars`, no limits. kBwrap: isolated as the
  // Sandbox says, with a scrubbed environment plus `vars` and its limits; its output reaches
  // log_path through a pipe fbkit drains (at most the file-size limit is kept), so the
  // process can neither truncate nor replace its log.
  Sandbox sandbox;
  // Files the process appends records to through inherited descriptors 3, 4, ... in this
  // order (created or truncated by the launcher, never through a symlink): the caller tells
  // the process which descriptor is which. Each descriptor is the write-only end of a socket
  // the launcher drains into its file while the process runs (Poll): what the process sent
  // is final (no seek, truncate or reopening it to read back) and needs no path it could
  // replace with a symlink or a FIFO. Sandboxed, each keeps at most limits.file_size_mb.
  std::vector<std::string> channels = {};
  // Bytes the process reads once on the descriptor after the channels (3 + channels.size()):
  // a pipe holding them, its writing end closed. Nothing else of the process sees them (not
  // its environment, not a file): a key its own code uses before anything else runs.
  std::string secret = {};
  // stdin: this file (fbkit's, opened by fbkit before the process starts, never through a
  // symlink); empty: /dev/null.
  std::string stdin_path = {};
  // stderr apart, written as log_path is; "": into log_path.
  std::string err_path = {};
};

struct ExitInfo {
  int code = -1;           // exit status, or -1 when killed by a signal
  int signal = 0;          // the signal that ended it, or 0
  bool timed_out = false;  // RunToCompletion killed it at its timeout
  // killed: its writable trees grew by more than limits.disk_mb, or its processes held more
  // descriptors together (100,000) than the watch can count at the limit's pace
  bool disk_exceeded = false;
  // Its log or a channel passed limits.file_size_mb: fbkit kept only the start, so what the
  // log holds is not all it wrote (a reader of its output must not take it as whole).
  bool output_cut = false;
  // Whole-sandbox limits its processes ran into, where cgroups bound the sandbox: a fork
  // refused at the process limit, a process OOM-killed at the memory limit.
  bool processes_limit_reached = false;
  bool memory_limit_reached = false;
};

class Process {
 public:
  virtual ~Process() = default;
  // The exit information once the process has ended (its group is then killed too, so
  // nothing it started lingers); nullopt while it runs.
  virtual std::optional<ExitInfo> Poll() = 0;
  // SIGKILLs the whole process group and reaps the process.
  virtual ExitInfo Kill() = 0;
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual util::Expected<std::unique_ptr<Process>> Start(const ProcessSpec& spec) = 0;
};

Launcher& RealLauncher();

// Runs a spec to completion, or until `timeout_seconds` pass (0: no limit; the process
// group is then killed and `timed_out` set), and returns its exit information.
util::Expected<ExitInfo> RunToCompletion(Launcher& launcher, const ProcessSpec& spec,
                                         double timeout_seconds = 0);

}  // namespace fbkit::sandbox

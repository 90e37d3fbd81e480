// How a process that runs repository or agent code is isolated. Callers describe what the
// process needs (paths to read, paths to write, network, limits); only the launcher in
// process.cc turns that into a bubblewrap command line, resource limits and a scrubbed
// environment, so a container runner can later sit behind the same description.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "util/expected.h"

namespace fbkit::tracer {

enum class SandboxKind { kNone, kBwrap };

// "none" or "bwrap"; an error names the accepted values.
util::Expected<SandboxKind> ParseSandboxKind(const std::string& name);
const char* SandboxKindName(SandboxKind kind);

// Per-process resource limits inside a sandbox (0: no limit).
struct Limits {
  int64_t memory_mb = 4096;     // address space of each process (RLIMIT_AS)
  int64_t processes = 512;      // processes and threads of the whole sandbox
  int64_t file_size_mb = 1024;  // largest file written (RLIMIT_FSIZE), also the private /tmp's size
};

// A host path mounted at another path inside the sandbox (a private copy in place of the
// original, say).
struct Bind {
  std::string source;
  std::string target;
  bool writable = false;
};

struct Sandbox {
  SandboxKind kind = SandboxKind::kNone;
  bool network = false;
  Limits limits;
  std::vector<std::string> hidden;     // existing dirs replaced by empty ones, like HiddenDirs
  std::vector<Bind> binds;             // mounted first, in order
  std::vector<std::string> read_only;  // absolute paths the process must see (never written)
  std::vector<std::string> writable;   // absolute paths it may write (its work copy, scratch)
};

// What BwrapArgs needs to know about the host.
struct HostInfo {
  std::string bwrap = "bwrap";  // the bubblewrap binary
  std::string home;             // the invoking user's $HOME ("" when unset)
  bool root = false;            // fbkit runs as uid 0
  std::vector<std::string> existing;  // which of the hidden directories exist (see HiddenDirs)
};

// Directories a sandboxed process never sees (each replaced by an empty private tmpfs):
// users' homes, /root, /run (daemon sockets), /tmp and /var/tmp, and `home`.
std::vector<std::string> HiddenDirs(const std::string& home);

// The host facts of this machine (bwrap looked up on PATH; empty when absent).
HostInfo CurrentHost();

// bubblewrap's argv for running `argv` in `cwd` under `sandbox`: the system read-only, the
// hidden directories (and `hidden`) private and empty, then `binds`, then the `read_only` paths that lie
// under a hidden directory or a bind's target bound back read-only, then `writable` paths
// bound read-write, own PID/IPC/UTS/user/network namespaces
// (network shared when allowed), capabilities dropped, killed with its parent.
std::vector<std::string> BwrapArgs(const Sandbox& sandbox, const HostInfo& host,
                                   const std::string& cwd, const std::vector<std::string>& argv);

// The environment of a sandboxed process: only PATH, locale, TZ and TERM of `parent`
// ("K=V" strings), HOME (an empty private directory) and TMPDIR, then `extra` on top. No
// credentials, tokens or agent sockets leak in.
std::vector<std::string> SandboxEnvironment(
    const char* const* parent, const std::string& home,
    const std::vector<std::pair<std::string, std::string>>& extra);

// The directories an interpreter needs to run: the prefix of `python` as named (a virtual
// environment) and of the file it resolves to (PATH lookup for a bare name).
std::vector<std::string> InterpreterDirs(const std::string& python);

// Checks once per process that bubblewrap is installed and can create its namespaces here;
// the error says why not and how to proceed.
util::Status CheckBwrap();

}  // namespace fbkit::tracer

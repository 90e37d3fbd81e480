// How a process that runs repository or agent code is isolated. Callers describe what the
// process needs (paths to read, paths to write, network, limits); only the launcher in
// process.cc turns that into a bubblewrap command line (or a container engine's), resource
// limits and a scrubbed environment.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "util/expected.h"

namespace fbkit::sandbox {

// kContainer: a container of a task's environment image (fb-extract images), started by a
// container engine's CLI, with the same mounts as under bubblewrap (ContainerArgs).
enum class SandboxKind { kNone, kBwrap, kContainer };

// "none", "bwrap" or "container"; an error names the accepted values.
util::Expected<SandboxKind> ParseSandboxKind(const std::string& name);
const char* SandboxKindName(SandboxKind kind);

// Resource limits of a sandbox (0: no limit). Where fbkit may create cgroups (as root, or
// with a delegated cgroup v2 subtree) memory and processes bound the whole sandbox, every
// process it starts together; elsewhere memory bounds each process (RLIMIT_AS) and
// processes the user's (RLIMIT_NPROC).
struct Limits {
  int64_t memory_mb = 4096;     // memory of the whole sandbox (and each process's address space)
  int64_t processes = 512;      // processes and threads of the whole sandbox
  int64_t file_size_mb = 1024;  // largest file written (RLIMIT_FSIZE); also the size of each
                                // private tmpfs (/tmp, /var/tmp, /dev/shm, $HOME)
  // What the sandbox may add to its writable trees together (their growth, measured by the
  // launcher four times a second; over it, the sandbox is killed).
  int64_t disk_mb = 10240;
  // CPUs the whole sandbox may keep busy (a cgroup CPU quota, where cgroups bound it): 0 for
  // all the host's but one (at least one), so a fork bomb cannot take the machine; negative
  // for no limit.
  double cpus = 0;
};

// The uid and gid sandboxed code runs as when fbkit runs as root (nobody:nogroup): never
// uid 0, so nothing root-owned on the host is writable (/proc/sys, /etc) or readable when
// private (/etc/shadow), even through a mount the sandbox forgot.
inline constexpr unsigned kSandboxUid = 65534;
inline constexpr unsigned kSandboxGid = 65534;

// A host path mounted at another path inside the sandbox (a private copy in place of the
// original, say).
struct Bind {
  std::string source;
  std::string target;
  bool writable = false;
};

// A tree the process sees at `target` as a private copy of `source` (Sandbox::copies).
struct PrivateCopy {
  std::string source;
  std::string target;
  // Files laid over the copy from `built_dir` (same relative paths): what the environment's
  // install steps built in its own copy of the repository, e.g. compiled extension modules.
  std::string built_dir;
  std::vector<std::string> built_files;
  // Or a file inside the sandbox listing them (one per line, relative to `built_dir`): a
  // container image's /fbkit/built-files.txt, which the host cannot read.
  std::string built_list = {};
};

// What a kContainer sandbox runs in: the engine's CLI ("podman"; docker's cannot hand the
// process its channels) and the image, whose system, interpreter (/fbkit/python) and
// environment (/fbkit/src, /fbkit/built-files.txt) take the place of the host's.
struct ContainerImage {
  std::string engine = "podman";
  std::string image;
};

// Where an environment image (extract/image/recipe.h writes them) keeps what a container
// sandbox runs with: the tests' interpreter, the tree the install steps ran in, and the list
// of the files they built there (relative to that tree).
inline constexpr char kImagePython[] = "/fbkit/python";
inline constexpr char kImageSource[] = "/fbkit/src";
inline constexpr char kImageTestbed[] = "/testbed";  // a task image's project (fb-extract images)
inline constexpr char kImageBuiltList[] = "/fbkit/built-files.txt";

struct Sandbox {
  SandboxKind kind = SandboxKind::kNone;
  ContainerImage container;  // kContainer only
  bool network = false;
  // The host's whole system (SystemPaths: compilers, headers, every installed library) in
  // place of the allow-list (SystemView): only for an environment's install steps, which build
  // from the original tree anyway and are no agent's or graded run.
  bool whole_system = false;
  Limits limits;
  std::vector<std::string> hidden;     // dirs replaced by empty ones (over a bound parent)
  std::vector<Bind> binds;             // mounted first, in order
  std::vector<std::string> read_only;  // absolute paths the process must see (never written)
  std::vector<std::string> writable;   // absolute paths it may write (its work copy, scratch)
  // Trees the process sees as its own copies: at each target a tmpfs holding the source's
  // files (copied in, inside the sandbox, before the command starts) with room for
  // limits.disk_mb more; mount points below the target (`protect` paths, binds) are not
  // copied. What the process writes there, unlinked and unreadable files included, the
  // kernel counts and refuses past that size, and it vanishes with the sandbox: nothing
  // reaches the host. The memory the tmpfs takes is the sandbox's (limits.memory_mb).
  std::vector<PrivateCopy> copies;
  // Paths inside writable ones bound read-only on top (a work copy's .git: what host-side
  // git reads back must not be changed by the code under test).
  std::vector<std::string> protect;
  // Files or dirs mounted last, read-only, over what the sandbox sees (fbkit's fixed git
  // configuration in place of a work copy's own .git/config, say).
  std::vector<Bind> overlays;
  // Paths mounted over, after everything else, by an empty read-only directory (or an empty
  // file for a file): a copy of the repository's packages that must not be seen (exposure.h).
  std::vector<std::string> masked;
};

// One entry of the system allow-list as it is on this host.
struct SystemPath {
  std::string path;    // "/usr"
  std::string target;  // the symlink's target ("usr/bin" for a merged /bin), "" for a dir
};

// What BwrapArgs needs to know about the host.
struct HostInfo {
  std::string bwrap = "bwrap";      // the bubblewrap binary
  std::string setpriv = "setpriv";  // util-linux's setpriv: drops root inside the sandbox
  std::string home;                 // the invoking user's $HOME ("" when unset)
  bool root = false;                // fbkit runs as uid 0
  std::string tar = "tar";          // GNU tar: fills a private copy inside the sandbox
  std::string env = "env";          // env(1): sets the spec's variables for the command alone
  std::vector<SystemPath> system;   // the allow-listed system paths that exist (SystemView)
  std::vector<SystemPath> whole;    // the whole system's paths that exist (SystemPaths)
};

// `name` found on PATH (or as given when it has a slash): the first executable candidate
// `accept` takes (every one when null); "" when none.
std::string FindProgram(const std::string& name,
                        const std::function<bool(const std::string&)>& accept = nullptr);

// Whether a process under `sandbox` (bwrap) sees host `path` as it is on the host: a path of
// the system view (SystemView, or SystemPaths for whole_system) not hidden, or a path it is
// given (read_only, writable, a bind's target), or under /dev and /proc (its own). /tmp,
// /var/tmp, homes and everything else are not.
bool VisibleInSandbox(const Sandbox& sandbox, const std::string& path);

// The host's system directories, root's and trusted as code: /usr, /etc, /opt, /sys and the
// merged-/usr links (/bin, /sbin, /lib*). A whole_system sandbox sees them all; no sandbox
// sees the rest of the host: no homes, no /root, /run, /srv, /mnt, /var, /work, /tmp.
const std::vector<std::string>& SystemPaths();

// What every other sandbox sees of the system, read-only, when it exists: the programs
// (/usr/bin, /usr/sbin, /usr/libexec, /usr/local/bin), the shared libraries (/usr/lib64,
// /usr/lib/<multiarch>), what git, the C library and TLS read (git-core, locale, zoneinfo,
// terminfo, CA certificates), /etc, /sys and the merged-/usr links. No Python library of the
// system is in it (InterpreterDirs adds the interpreter's own), nor /opt, nor the rest of
// /usr/lib, /usr/share and /usr/local: copies of a repository's packages live there (a
// vendored jinja2 in another package's tree). `multiarch` names the /usr/lib/<triplet>
// directories that exist ("x86_64-linux-gnu").
std::vector<std::string> SystemView(const std::vector<std::string>& multiarch);

// The host facts of this machine (bwrap looked up on PATH; empty when absent).
HostInfo CurrentHost();

// bubblewrap's argv for running `argv` in `cwd` under `sandbox`: the system allow-list
// read-only, /proc with /proc/sys read-only, private size-limited tmpfs for /tmp, /var/tmp,
// /dev/shm and `home`, `hidden` empty, the `copies` (each sized for `copy_bytes[i]`, what its
// source takes, and filled by a shell prelude before `argv` runs), then `binds`, the
// `read_only` paths, the `writable` paths, the `protect` paths over them and the `overlays` last; own PID/IPC/UTS/network namespaces (network
// shared when allowed), the seccomp filter read from `seccomp_fd` (-1: none), killed with
// its parent. As root: no user namespace but all capabilities dropped and the command run
// as kSandboxUid:kSandboxGid through setpriv; as a user: a user namespace, no nested ones.
std::vector<std::string> BwrapArgs(const Sandbox& sandbox, const HostInfo& host,
                                   const std::string& cwd, const std::vector<std::string>& argv,
                                   int seccomp_fd = -1,
                                   const std::vector<int64_t>& copy_bytes = {});

// The engine's argv (`podman run ...`) that runs `argv` in `cwd` under `sandbox` (kContainer)
// as BwrapArgs does under bubblewrap: the image's root read-only in place of the host's
// system, the same private tmpfs, hidden, copied, bound, protected, overlaid and masked
// paths (host paths at the same paths), no network unless allowed, every capability dropped,
// no new privileges, kSandboxUid:kSandboxGid, the image's homes and /srv, /mnt, /media empty
// (as the host's are under bubblewrap), its limits as the engine's (memory, processes, CPUs)
// and the shell's (file size and, as RLIMIT_AS bounds each process under bubblewrap, memory), `preserved_fds` descriptors from 3 on handed in, `env` ("K=V") its whole
// environment beside the image's, `name` the container's, `seccomp_profile` (a file of
// SeccompProfileJson: fbkit's filter in place of the engine's; "" for the engine's). A path
// the engine's syntax cannot carry (a ':' or ',') is an error.
util::Expected<std::vector<std::string>> ContainerArgs(
    const Sandbox& sandbox, const std::string& name, const std::string& cwd,
    const std::vector<std::string>& argv, const std::vector<std::string>& env,
    int preserved_fds, const std::vector<int64_t>& copy_bytes = {},
    const std::string& seccomp_profile = "");

// The environment a container sandbox's process starts with: a fixed PATH, C.UTF-8, HOME
// (kContainerHome, a private tmpfs), TMPDIR and git's safe.directory = * (as
// SandboxEnvironment), then `extra` (the spec's variables) on top. Nothing of the host's.
inline constexpr char kContainerHome[] = "/home/fbkit";
std::vector<std::string> ContainerEnvironment(
    const std::vector<std::pair<std::string, std::string>>& extra);

// Checks once per engine that it is installed and can run a container here; the error says
// why not and how to proceed.
util::Status CheckContainerEngine(const std::string& engine);

// The environment bubblewrap starts with, and so every sandboxed process: only PATH,
// locale, TZ, TERM and the CA-bundle paths of `parent` ("K=V" strings), HOME (an empty
// private directory), TMPDIR and git's safe.directory = * (GIT_CONFIG_*: the process is
// not the owner of the tree's .git), then `extra` on top. No credentials, tokens or agent
// sockets leak in. A spec's variables are never `extra`: bwrap (and setpriv, before it drops
// root) would load what LD_PRELOAD names on the host; they reach the command alone
// (SandboxedCommand).
std::vector<std::string> SandboxEnvironment(
    const char* const* parent, const std::string& home,
    const std::vector<std::pair<std::string, std::string>>& extra);

// The command a sandbox runs for `argv` with the spec's `vars`: `argv` itself without them,
// else env(1) setting them first, inside the sandbox, after root is dropped.
std::vector<std::string> SandboxedCommand(
    const HostInfo& host, const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& vars);

// The directories an interpreter needs to run: the prefix of `python` as named (a virtual
// environment) and of the file it resolves to (PATH lookup for a bare name). A prefix that is
// the system's (/usr, /usr/local) is not given whole: its pythonX.Y directories under lib/
// and local/lib/ (the standard library and what pip installed for it) and lib/python3 (a
// Debian interpreter's packages) instead, X.Y from the name the interpreter resolves to.
std::vector<std::string> InterpreterDirs(const std::string& python);

// Checks once per process that bubblewrap is installed and can create its namespaces here;
// the error says why not and how to proceed.
util::Status CheckBwrap();

}  // namespace fbkit::sandbox

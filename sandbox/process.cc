#include "sandbox/process.h"

#include "sandbox/seccomp.h"
#include "util/env.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <pthread.h>
#include <unistd.h>

#include <dirent.h>
#include <ftw.h>
#include <linux/openat2.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <random>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <iterator>
#include <sstream>
#include <thread>

extern char** environ;

namespace fbkit::sandbox {
namespace {

ExitInfo FromStatus(int status) {
  ExitInfo info;
  if (WIFEXITED(status)) info.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) info.signal = WTERMSIG(status);
  return info;
}

// The cgroups bounding one sandbox as a whole where fbkit may create them (as root): pids
// and memory, cgroup v1 controllers or a v2 unified hierarchy. Each is named
// fbkit-<fbkit's pid>-<n>; those of fbkit processes that no longer exist (killed before
// they could clean up) are removed the first time this process creates one.
class SandboxCgroups {
 public:
  static std::vector<std::string> Create(const Limits& limits) {
    static std::once_flag swept;
    std::call_once(swept, SweepStale);
    static std::atomic<int> counter{0};
    std::string name = "fbkit-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    std::vector<std::string> dirs;
    if (::access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
      WriteValue("/sys/fs/cgroup/cgroup.subtree_control", "+pids +memory +cpu");
      std::string dir = "/sys/fs/cgroup/" + name;
      if (::mkdir(dir.c_str(), 0755) != 0) return {};
      bool ok = true;
      if (limits.processes > 0) ok &= WriteValue(dir + "/pids.max", std::to_string(limits.processes + 2));
      if (limits.memory_mb > 0) {
        ok &= WriteValue(dir + "/memory.max", std::to_string(limits.memory_mb << 20));
        WriteValue(dir + "/memory.swap.max", "0");
      }
      if (int64_t quota = CpuQuota(limits); quota > 0) {
        ok &= WriteValue(dir + "/cpu.max", std::to_string(quota) + " " + std::to_string(kCpuPeriod));
      }
      if (!ok) return Remove({dir}), std::vector<std::string>{};
      return {dir};
    }
    struct Controller {
      const char* name;
      const char* file;
      int64_t value;
    };
    for (const Controller& c : {Controller{"pids", "pids.max", limits.processes > 0 ? limits.processes + 2 : 0},
                                Controller{"memory", "memory.limit_in_bytes", limits.memory_mb << 20}}) {
      if (c.value <= 0) continue;
      std::string dir = std::string("/sys/fs/cgroup/") + c.name + "/" + name;
      if (::mkdir(dir.c_str(), 0755) != 0) continue;
      if (!WriteValue(dir + "/" + c.file, std::to_string(c.value))) {
        ::rmdir(dir.c_str());
        continue;
      }
      if (std::string(c.name) == "memory") {
        WriteValue(dir + "/memory.memsw.limit_in_bytes", std::to_string(c.value));
      }
      dirs.push_back(dir);
    }
    if (int64_t quota = CpuQuota(limits); quota > 0) {
      std::string dir = "/sys/fs/cgroup/cpu/" + name;
      if (::mkdir(dir.c_str(), 0755) == 0) {
        if (WriteValue(dir + "/cpu.cfs_period_us", std::to_string(kCpuPeriod)) &&
            WriteValue(dir + "/cpu.cfs_quota_us", std::to_string(quota))) {
          dirs.push_back(dir);
        } else {
          ::rmdir(dir.c_str());
        }
      }
    }
    return dirs;
  }

  // The CPU time (microseconds) the sandbox may use per kCpuPeriod: limits.cpus CPUs, or all
  // the host's but one (at least one) when 0; none (no limit) when negative.
  static constexpr int64_t kCpuPeriod = 100000;
  static int64_t CpuQuota(const Limits& limits) {
    double cpus = limits.cpus;
    if (cpus == 0) {
      long online = ::sysconf(_SC_NPROCESSORS_ONLN);
      cpus = static_cast<double>(std::max(1L, online - 1));
    }
    if (cpus < 0) return 0;
    return std::max<int64_t>(1000, static_cast<int64_t>(cpus * static_cast<double>(kCpuPeriod)));
  }

  // Which whole-sandbox limits its processes ran into, from the cgroups' event counters.
  static void ReadLimitsReached(const std::vector<std::string>& dirs, ExitInfo* info) {
    auto counter = [](const std::string& path, const std::string& key) {
      std::ifstream in(path);
      std::string k;
      int64_t v = 0;
      while (in >> k >> v) {
        if (k == key) return v;
      }
      return int64_t{0};
    };
    for (const auto& dir : dirs) {
      info->processes_limit_reached |= counter(dir + "/pids.events", "max") > 0;
      info->memory_limit_reached |= counter(dir + "/memory.events", "oom_kill") > 0 ||
                                    counter(dir + "/memory.oom_control", "oom_kill") > 0;
    }
  }

  // Kills what is left in each cgroup and removes it.
  static void Remove(const std::vector<std::string>& dirs) {
    for (const auto& dir : dirs) {
      for (int attempt = 0; attempt < 200; ++attempt) {
        std::ifstream procs(dir + "/cgroup.procs");
        for (pid_t pid; procs >> pid;) ::kill(pid, SIGKILL);
        if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
  }

 private:
  static bool WriteValue(const std::string& path, const std::string& value) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
    ::close(fd);
    return ok;
  }

  static void SweepStale() {
    for (const char* base : {"/sys/fs/cgroup", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory",
                             "/sys/fs/cgroup/cpu"}) {
      DIR* d = ::opendir(base);
      if (d == nullptr) continue;
      std::vector<std::string> stale;
      while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (!n.starts_with("fbkit-")) continue;
        pid_t owner = static_cast<pid_t>(std::atol(n.c_str() + 6));
        if (owner > 0 && ::kill(owner, 0) != 0 && errno == ESRCH) {
          stale.push_back(std::string(base) + "/" + n);
        }
      }
      ::closedir(d);
      Remove(stale);
    }
  }
};

// A read-only descriptor holding `bytes` from its start (-1 when empty or on failure).
int MemoryFile(const std::string& bytes) {
  if (bytes.empty()) return -1;
  int fd = ::memfd_create("fbkit-seccomp", MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
    ::close(fd);
    return -1;
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

// A descriptor with the sandbox's seccomp filter to read (-1 when there is none).
// `profile`: the filter as the OCI profile a container engine's client reads (a path to it,
// /proc/self/fd/N, names the descriptor).
int SeccompFd(bool profile = false) {
  static const std::string program = SeccompProgram();
  static const std::string json = SeccompProfileJson();
  if (profile) return MemoryFile(json);
  if (program.empty()) return -1;
  return MemoryFile(program);
}

// Opens `path` below `root` (O_PATH with `flags`) without following any link on the way
// (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): the tree is the sandbox's to change, and
// a parent swapped for a link must not lead fbkit's change out. -1 when it cannot.
int OpenBeneath(const std::string& root, const std::string& path, int flags) {
  if (path.size() <= root.size() + 1 || path.compare(0, root.size() + 1, root + "/") != 0) return -1;
  int base = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (base < 0) return -1;
  struct open_how how = {};
  how.flags = static_cast<uint64_t>(O_PATH | O_NOFOLLOW | O_CLOEXEC | flags);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  std::string rel = path.substr(root.size() + 1);
  long fd = ::syscall(SYS_openat2, base, rel.c_str(), &how, sizeof how);
  ::close(base);
  return static_cast<int>(fd);
}

// Makes the directory `path` below `root` readable for its owner again (OpenBeneath).
void ReopenDirectory(const std::string& root, const std::string& path) {
  int fd = OpenBeneath(root, path, O_DIRECTORY);
  if (fd < 0) return;
  struct stat st;
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid()) {
    (void)::chmod(self.c_str(), (st.st_mode | S_IRWXU) & 07777);  // the inode opened, no path
  }
  ::close(fd);
}

// Gives group kSandboxGid read and write on the entry `path` below `root` (and search on a
// directory), opened with OpenBeneath: the tests of another sandbox sharing the
// tree may swap a parent for a link meanwhile, which must not lead the change onto a host
// file. The root itself is fbkit's and is changed by path.
void ShareEntry(const std::string& root, const std::string& path) {
  if (path == root) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
    if (st.st_gid != kSandboxGid) (void)::lchown(path.c_str(), static_cast<uid_t>(-1), kSandboxGid);
    (void)::chmod(path.c_str(), (st.st_mode | S_IRGRP | S_IWGRP | S_IXGRP) & 07777);
    return;
  }
  int fd = OpenBeneath(root, path, 0);
  if (fd < 0) return;
  struct stat st;
  if (::fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
    if (st.st_gid != kSandboxGid) {
      (void)::fchownat(fd, "", static_cast<uid_t>(-1), kSandboxGid, AT_EMPTY_PATH);
    }
    mode_t want = st.st_mode | S_IRGRP | S_IWGRP | (S_ISDIR(st.st_mode) ? S_IXGRP : 0);
    std::string self = "/proc/self/fd/" + std::to_string(fd);
    if ((want & 07777) != (st.st_mode & 07777)) (void)::chmod(self.c_str(), want & 07777);
  }
  ::close(fd);
}

// Bytes the files and directories below `roots` take on disk (symlinks not followed); with
// `share`, also makes them writable for kSandboxGid on the way (group write on every file
// and directory, symlinks left alone): the sandbox runs as kSandboxUid when fbkit is root,
// and the trees stay fbkit's, so git's ownership checks hold for host-side git.
int64_t WalkWritableHere(const std::vector<std::string>& roots, bool share) {
  static thread_local int64_t total;
  static thread_local bool sharing;
  static thread_local const std::string* walked;
  total = 0;
  sharing = share;
  for (const auto& root : roots) {
    walked = &root;
    ::nftw(root.c_str(), [](const char* path, const struct stat* st, int type, FTW*) {
      if (type == FTW_NS) return 0;
      // Every entry takes a block at least: empty files still use up inodes.
      total += std::max<int64_t>(static_cast<int64_t>(st->st_blocks) * 512, 4096);
      // A directory the tested code made unreadable (it runs as fbkit's user when fbkit is
      // not root) is opened again for the next walk: what it holds is counted then.
      if (type == FTW_DNR) ReopenDirectory(*walked, path);
      if (!sharing || type == FTW_SL || type == FTW_SLN) return 0;
      bool shared = st->st_gid == kSandboxGid &&
                    (st->st_mode & (S_IRGRP | S_IWGRP)) == (S_IRGRP | S_IWGRP) &&
                    (!S_ISDIR(st->st_mode) || (st->st_mode & S_IXGRP));
      if (!shared) ShareEntry(*walked, path);
      return 0;
    }, 64, FTW_PHYS);
  }
  return total;
}

// WalkWritableHere on a thread of its own: nftw recurses once per directory level, and a tree
// the tested code made 25,000 levels deep overflowed fbkit's 8 MiB stack (red team round 12).
// The thread's stack is reserved large and touched only as deep as the tree goes.
int64_t WalkWritable(const std::vector<std::string>& roots, bool share) {
  struct Job {
    const std::vector<std::string>* roots;
    bool share;
    int64_t total;
  } job{&roots, share, 0};
  pthread_attr_t attr;
  pthread_t thread;
  bool started = ::pthread_attr_init(&attr) == 0 &&
                 ::pthread_attr_setstacksize(&attr, size_t{1} << 30) == 0 &&
                 ::pthread_create(&thread, &attr, [](void* p) -> void* {
                   auto* j = static_cast<Job*>(p);
                   j->total = WalkWritableHere(*j->roots, j->share);
                   return nullptr;
                 }, &job) == 0;
  ::pthread_attr_destroy(&attr);
  if (!started) return WalkWritableHere(roots, share);
  ::pthread_join(thread, nullptr);
  return job.total;
}

// The text of a /proc file, "" when it cannot be read: the process may exit between the
// listing and the read (ESRCH), which a C++ stream's buffer would throw as an exception.
std::string ReadProcFile(const std::string& path) {
  auto text = util::RealEnv().ReadFile(path);
  return text.ok() ? std::move(*text) : std::string();
}

// Whether process `p` is the engine's monitor (conmon) of container `name` ("-n NAME" in its
// command line): the parent of the container's processes, which descend from it, not from
// the engine's client.
bool MonitorsContainer(const std::string& p, const std::string& name) {
  std::string cmdline = ReadProcFile("/proc/" + p + "/cmdline");
  std::vector<std::string> args;
  for (size_t at = 0; at < cmdline.size();) {
    size_t end = cmdline.find('\0', at);
    if (end == std::string::npos) end = cmdline.size();
    args.push_back(cmdline.substr(at, end - at));
    at = end + 1;
  }
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if ((args[i] == "-n" || args[i] == "--name") && args[i + 1] == name) return true;
  }
  return false;
}

// The processes descending from `pid` (itself included), from /proc: a sandbox's, whatever
// session or group they moved to (bubblewrap's own init inherits orphans); with `container`,
// also those of that container (below its conmon).
std::set<pid_t> Descendants(pid_t pid, const std::string& container = "") {
  std::vector<std::pair<pid_t, pid_t>> parents;  // (process, its parent)
  std::set<pid_t> tree = {pid};
  if (DIR* proc = ::opendir("/proc")) {
    while (dirent* e = ::readdir(proc)) {
      char* end = nullptr;
      long p = std::strtol(e->d_name, &end, 10);
      if (p <= 0 || *end != '\0') continue;
      std::string stat = ReadProcFile(std::string("/proc/") + e->d_name + "/stat");
      size_t close = stat.rfind(')');
      if (close == std::string::npos || close + 4 >= stat.size()) continue;
      long ppid = std::strtol(stat.c_str() + close + 4, nullptr, 10);  // ") S PPID"
      parents.emplace_back(static_cast<pid_t>(p), static_cast<pid_t>(ppid));
      size_t open = stat.find('(');
      if (!container.empty() && open != std::string::npos &&
          stat.compare(open, close - open + 1, "(conmon)") == 0 && MonitorsContainer(e->d_name, container)) {
        tree.insert(static_cast<pid_t>(p));
      }
    }
    ::closedir(proc);
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [p, pp] : parents) {
      if (tree.count(pp) && tree.insert(p).second) grew = true;
    }
  }
  return tree;
}

// More descriptors than honest processes hold, together: past it a sandbox's disk use cannot be
// watched at the pace the limit needs (red team round 13: 2.85 million descriptors made each
// count take seconds, the watch's pause four times that, and 19 GB went past a 200 MB limit).
constexpr size_t kMaxWatchedDescriptors = 100'000;

// Bytes of regular files on the devices `devices` that the processes below `pid` (and in
// `container`, when named) hold open after unlinking them: no walk sees them, yet they take
// the disk until closed. -1 when the processes hold more than kMaxWatchedDescriptors
// descriptors (counted as over the limit).
int64_t UnlinkedOpenBytes(pid_t pid, const std::string& container, const std::set<dev_t>& devices) {
  std::set<std::pair<dev_t, ino_t>> seen;
  int64_t total = 0;
  size_t descriptors = 0;
  for (pid_t p : Descendants(pid, container)) {
    std::string dir = "/proc/" + std::to_string(p) + "/fd";
    DIR* fds = ::opendir(dir.c_str());
    if (!fds) continue;
    while (dirent* e = ::readdir(fds)) {
      if (e->d_name[0] == '.') continue;
      if (++descriptors > kMaxWatchedDescriptors) {
        ::closedir(fds);
        return -1;
      }
      struct stat st;
      if (::stat((dir + "/" + e->d_name).c_str(), &st) != 0) continue;
      if (!S_ISREG(st.st_mode) || st.st_nlink != 0 || !devices.count(st.st_dev)) continue;
      if (seen.insert({st.st_dev, st.st_ino}).second) total += static_cast<int64_t>(st.st_blocks) * 512;
    }
    ::closedir(fds);
    // Mapped, its descriptor closed: the file lives on in the mapping ("(deleted)" in maps),
    // at least as large as what is mapped of it.
    std::istringstream maps(ReadProcFile("/proc/" + std::to_string(p) + "/maps"));
    for (std::string line; std::getline(maps, line);) {
      if (!line.ends_with(" (deleted)")) continue;
      unsigned long start = 0, end = 0, major = 0, minor = 0, inode = 0;
      if (std::sscanf(line.c_str(), "%lx-%lx %*s %*s %lx:%lx %lu", &start, &end, &major, &minor, &inode) != 5) continue;
      dev_t dev = makedev(major, minor);
      if (inode == 0 || !devices.count(dev) || !seen.insert({dev, static_cast<ino_t>(inode)}).second) continue;
      total += static_cast<int64_t>(end - start);
    }
  }
  return total;
}

// The disk a sandbox may fill: how much its writable trees may grow (files it unlinked but
// keeps open included), checked at most four times a second, and never more than a fifth of
// the time (a walk of a tree of 400,000 files took fbkit a whole core: red team round 12).
struct DiskWatch {
  std::vector<std::string> roots;
  int64_t limit = 0;     // bytes; 0: not watched
  int64_t baseline = 0;  // usage when the process started
  std::set<dev_t> devices;  // the file systems of `roots`
  std::string container;    // the container the process's own run in (red team f: not its children)
  std::chrono::steady_clock::time_point next;

  // `at_exit`: the process has ended; what it left counts whatever the time (a quick writer
  // may end before the first count).
  bool Exceeded(pid_t pid, bool at_exit = false) {
    if (limit <= 0 || roots.empty()) return false;
    auto now = std::chrono::steady_clock::now();
    if (now < next && !at_exit) return false;
    int64_t open = at_exit ? 0 : UnlinkedOpenBytes(pid, container, devices);
    bool over = open < 0 || WalkWritable(roots, false) + open - baseline > limit;
    auto end = std::chrono::steady_clock::now();
    next = end + std::max<std::chrono::steady_clock::duration>(std::chrono::milliseconds(250),
                                                               4 * (end - now));
    return over;
  }
};

// Moves what a process writes to a pipe or socket (`from`, non-blocking) into a file fbkit
// opened (`to`), keeping at most `left` bytes. The process holds only its end: it can add to
// what it sent, never seek, truncate or read it back.
struct Pump {
  int from = -1;
  int to = -1;
  int64_t left = 0;
  bool cut = false;  // bytes past `left` were dropped

  void Drain() {
    if (from < 0) return;
    char buf[1 << 16];
    for (;;) {
      ssize_t n = ::read(from, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      int64_t keep = std::min<int64_t>(n, left);
      cut = cut || keep < n;
      for (int64_t done = 0; done < keep;) {
        ssize_t w = ::write(to, buf + done, static_cast<size_t>(keep - done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += w;
      }
      left -= keep;
    }
  }

  void Close() {
    for (int* fd : {&from, &to}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }
};

// A container a sandboxed process runs in: the engine's CLI and the container's name.
struct RunningContainer {
  std::string engine;
  std::string name;  // "" when the process runs in no container
};

// A name no other container of this host has: fbkit-PID-COUNTER-RANDOM.
std::string ContainerName() {
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  char buf[64];
  std::snprintf(buf, sizeof buf, "fbkit-%d-%u-%08x", static_cast<int>(::getpid()), counter++, rd());
  return buf;
}

void CloseFrom(int first);

// The shell that stops container `name`: `engine kill`, then `engine rm -f` (it may be gone).
std::string StopScript(const std::string& engine, const std::string& name) {
  std::string e = util::ShellQuote(engine), n = util::ShellQuote(name);
  return e + " kill " + n + "; " + e + " rm -f " + n;
}

// Runs StopScript and waits for it, its output discarded.
void StopContainer(const std::string& engine, const std::string& name) {
  std::string script = StopScript(engine, name);
  const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};  // before the fork
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    for (int fd : {0, 1, 2}) ::dup2(null, fd);
    CloseFrom(3);
    ::execve("/bin/sh", const_cast<char* const*>(argv), environ);
    ::_exit(127);
  }
  while (pid > 0 && ::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

// A watcher of the container `name` that outlives fbkit: a shell in a session of its own
// waiting on a pipe whose other end fbkit holds (the returned descriptor). Told "done" it
// exits; at the end of the pipe without it (fbkit killed, however) it kills the engine's
// client (`client`, while its command line still names the container) and stops the
// container until the engine has not known it for 3 s (a client killed while it was still
// creating it starts it later: red team f), as bubblewrap's sandbox dies with its parent.
// -1 when it cannot be started.
int StartReaper(const std::string& engine, const std::string& name, pid_t client) {
  std::string path = FindProgram(engine);
  if (path.empty()) return -1;
  std::string c = std::to_string(client), e = util::ShellQuote(path), n = util::ShellQuote(name);
  std::string script = "read -r said; [ \"$said\" = done ] && exit 0; "
                       "grep -qaF -- " + n + " /proc/" + c + "/cmdline 2>/dev/null && kill -KILL " + c + "; "
                       "i=0; gone=0; while [ $i -lt 120 ] && [ $gone -lt 3 ]; do " + StopScript(path, name) +
                       "; if " + e + " inspect " + n + " >/dev/null 2>&1; then gone=0; else gone=$((gone+1)); fi; "
                       "i=$((i+1)); sleep 1; done";
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  const char* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
  pid_t first = ::fork();
  if (first == 0) {
    if (::fork() == 0) {  // the watcher, adopted by init when its parent exits below
      ::setsid();
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(fds[0], 0);
      ::dup2(null, 1);
      ::dup2(null, 2);
      CloseFrom(3);
      ::execve("/bin/sh", const_cast<char* const*>(argv), environ);
      ::_exit(127);
    }
    ::_exit(0);
  }
  ::close(fds[0]);
  if (first < 0) {
    ::close(fds[1]);
    return -1;
  }
  while (::waitpid(first, nullptr, 0) < 0 && errno == EINTR) {
  }
  return fds[1];
}

// Tells the watcher the container ended under fbkit's eyes.
void ReleaseReaper(int* fd) {
  if (*fd < 0) return;
  (void)!::write(*fd, "done\n", 5);
  ::close(*fd);
  *fd = -1;
}

class PosixProcess : public Process {
 public:
  // `pumps`: the sandboxed process's output, then its channels. `container`: the engine and
  // the name of the container the process (the engine's client) runs, stopped with it.
  PosixProcess(pid_t pid, std::vector<std::string> cgroups, bool sandboxed,
               std::vector<Pump> pumps, DiskWatch disk, RunningContainer container = {},
               int reaper = -1)
      : pid_(pid), cgroups_(std::move(cgroups)), sandboxed_(sandboxed), pumps_(std::move(pumps)),
        disk_(std::move(disk)), container_(std::move(container)), reaper_(reaper) {}
  ~PosixProcess() override {
    if (!done_) Kill();
    Release();
  }

  std::optional<ExitInfo> Poll() override {
    if (done_) return info_;
    Drain();
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == 0) {
      if (!disk_.Exceeded(pid_)) return std::nullopt;
      Kill();
      info_.disk_exceeded = true;
      return info_;
    }
    done_ = true;
    info_ = r == pid_ ? Translate(FromStatus(status)) : ExitInfo{};
    ::kill(-pid_, SIGKILL);  // whatever the tests left running in the group
    info_.disk_exceeded = disk_.Exceeded(pid_, true);
    Release();
    return info_;
  }

  ExitInfo Kill() override {
    if (done_) return info_;
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    // The engine's client is gone, not the container: the engine stops it.
    if (!container_.name.empty()) StopContainer(container_.engine, container_.name);
    done_ = true;
    info_ = Translate(FromStatus(status));
    Release();
    return info_;
  }

 private:
  // bubblewrap reports a child killed by signal N as exit status 128 + N.
  ExitInfo Translate(ExitInfo info) const {
    if (sandboxed_ && info.signal == 0 && info.code > 128 && info.code <= 128 + 64) {
      info.signal = info.code - 128;
      info.code = -1;
    }
    return info;
  }

  void Drain() {
    for (Pump& pump : pumps_) pump.Drain();
  }

  void Release() {
    ReleaseReaper(&reaper_);
    SandboxCgroups::ReadLimitsReached(cgroups_, &info_);
    SandboxCgroups::Remove(cgroups_);
    cgroups_.clear();
    Drain();
    for (Pump& pump : pumps_) {
      info_.output_cut = info_.output_cut || pump.cut;
      pump.Close();
    }
  }

  pid_t pid_;
  std::vector<std::string> cgroups_;
  bool sandboxed_;
  std::vector<Pump> pumps_;
  DiskWatch disk_;
  RunningContainer container_;  // kContainer's, else empty
  int reaper_ = -1;           // the container's watcher (StartReaper)
  bool done_ = false;
  ExitInfo info_;
};

// What a child needs, computed before the fork.
struct Prepared {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // complete environment (sandbox); empty: inherit + spec.env
  bool sandboxed = false;
  std::vector<std::string> cgroups;
  std::vector<int> channels;     // the process's ends of its channels, placed at 3, 4, ...
  std::vector<Pump> pumps;       // fbkit's ends of the channels, into their files
  int seccomp = -1;              // placed after the channels
  int stdin_fd = -1;             // spec.stdin_path, opened
  bool container = false;        // argv is a container engine's client (kContainer)
};

void SetLimit(int resource, int64_t value) {
  if (value <= 0) return;
  struct rlimit r{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  ::setrlimit(resource, &r);
}

// The last step before exec: nothing may allocate after the address-space limit is set (a
// sanitizer's runtime, for one, maps memory on demand).
void ApplyLimits(const Limits& limits, const std::vector<std::string>& cgroups) {
  std::string pid = std::to_string(::getpid());
  for (const auto& dir : cgroups) {
    int fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY);
    if (fd < 0 || ::write(fd, pid.data(), pid.size()) < 0) {
      dprintf(2, "fbkit: cannot enter the sandbox's cgroup %s\n", dir.c_str());
      ::_exit(126);
    }
    ::close(fd);
  }
  // Only root gets cgroups (and RLIMIT_NPROC does not bind root): a user's processes are
  // counted by RLIMIT_NPROC.
  if (::geteuid() != 0) SetLimit(RLIMIT_NPROC, limits.processes);
  SetLimit(RLIMIT_FSIZE, limits.file_size_mb << 20);
  SetLimit(RLIMIT_AS, limits.memory_mb << 20);
}

// Puts `fds` at 3, 4, ... (inheritable) and returns the next free number.
int PlaceDescriptors(std::vector<int> fds) {
  // First out of the way (above any target), then into place.
  for (int& fd : fds) {
    int moved = ::fcntl(fd, F_DUPFD, 100);
    if (moved < 0) ::_exit(126);
    fd = moved;
  }
  int next = 3;
  for (int fd : fds) {
    if (::dup2(fd, next) < 0) ::_exit(126);
    ::close(fd);
    ++next;
  }
  return next;
}

// Closes every descriptor from `first` up: nothing fbkit's caller left open (a task
// directory on descriptor 9, say) reaches the process, whatever its close-on-exec flag.
void CloseFrom(int first) {
  if (::syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, 0U) == 0) return;
  long max = ::sysconf(_SC_OPEN_MAX);
  for (long fd = first; fd < (max > 0 && max < (1L << 20) ? max : 65536); ++fd) ::close(static_cast<int>(fd));
}

[[noreturn]] void ExecChild(const ProcessSpec& spec, const Prepared& prepared, int out_fd, int err_fd) {
  ::setpgid(0, 0);
  int in = prepared.stdin_fd >= 0 ? prepared.stdin_fd : ::open("/dev/null", O_RDONLY);
  ::dup2(in, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd >= 0 ? err_fd : out_fd, 2);
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) {
    dprintf(2, "fbkit: cannot enter %s: %s\n", spec.cwd.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  std::vector<int> fds = prepared.channels;
  if (prepared.seccomp >= 0) fds.push_back(prepared.seccomp);
  CloseFrom(PlaceDescriptors(fds));
  std::vector<char*> args;
  for (const auto& a : prepared.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (prepared.container) {
    // The engine's client, fbkit's own tool: the container's environment is in its argv,
    // its limits the engine's.
    ::execvp(args[0], args.data());
  } else if (prepared.sandboxed) {
    std::vector<char*> env;
    for (const auto& kv : prepared.env) env.push_back(const_cast<char*>(kv.c_str()));
    env.push_back(nullptr);
    ApplyLimits(spec.sandbox.limits, prepared.cgroups);
    ::execve(args[0], args.data(), env.data());
  } else {
    for (const auto& [k, v] : spec.vars) ::setenv(k.c_str(), v.c_str(), 1);
    ::execvp(args[0], args.data());
  }
  dprintf(2, "fbkit: cannot run %s: %s\n", spec.argv[0].c_str(), std::strerror(errno));
  ::_exit(127);
}

// Opens (creating or truncating) a file fbkit writes for a process, never through a
// symlink and never a FIFO or device.
util::Expected<int> OpenOutput(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) return util::Error{path + ": cannot create: " + std::strerror(errno)};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return util::Error{path + ": not a regular file"};
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// A channel: the file `path` (created as OpenOutput does) fed through a socket pair whose
// far end the process inherits, write-only. Unlike a file descriptor, the process cannot
// seek back and rewrite what it sent, truncate it, or reopen it (through /proc/self/fd) to
// read it: what fbkit reads is what was sent, in order.
util::Status OpenChannel(const std::string& path, int64_t limit, Prepared* prepared) {
  auto file = OpenOutput(path);
  if (!file.ok()) return file.failure();
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    ::close(*file);
    return util::Error{path + ": cannot make its channel: " + std::strerror(errno)};
  }
  ::shutdown(pair[0], SHUT_WR);
  ::shutdown(pair[1], SHUT_RD);
  // Room for bursts between two drains (as root the system's cap does not apply).
  int size = 4 << 20;
  if (::setsockopt(pair[1], SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0) {
    ::setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  }
  ::fcntl(pair[0], F_SETFL, O_NONBLOCK);
  prepared->pumps.push_back(Pump{pair[0], *file, limit});
  prepared->channels.push_back(pair[1]);
  return {};
}

// The sandbox's side of a start: the container engine or bubblewrap checked, the
// environment, the seccomp filter, the disk watch over the writable trees (and the size of
// each private copy, for its tmpfs) and the cgroups. Nothing for SandboxKind::kNone.
util::Status PrepareSandbox(const ProcessSpec& spec, Prepared* prepared, HostInfo* host,
                            DiskWatch* disk, std::vector<int64_t>* copy_bytes) {
  if (spec.sandbox.kind == SandboxKind::kContainer) {
    if (util::Status s = CheckContainerEngine(spec.sandbox.container.engine); !s.ok()) return s;
    prepared->container = true;
  }
  if (spec.sandbox.kind == SandboxKind::kNone) return {};
  *host = CurrentHost();
  if (host->bwrap.empty() && !prepared->container) {
    return util::Error{"bubblewrap (bwrap) is not installed: apt-get install bubblewrap, "
                       "or pass --sandbox none to run without isolation"};
  }
  prepared->sandboxed = true;
  prepared->seccomp = SeccompFd(prepared->container);
  if (!prepared->container) prepared->env = SandboxEnvironment(environ, host->home, {});
  disk->roots = spec.sandbox.writable;
  for (const auto& b : spec.sandbox.binds) {
    if (b.writable) disk->roots.push_back(b.source);
  }
  disk->baseline = WalkWritable(disk->roots, host->root);
  for (const auto& r : disk->roots) {
    struct stat st;
    if (::stat(r.c_str(), &st) == 0) disk->devices.insert(st.st_dev);
  }
  disk->limit = spec.sandbox.limits.disk_mb << 20;
  // The first count a quarter second in, and one when it ends.
  disk->next = std::chrono::steady_clock::now() + std::chrono::milliseconds(250);
  for (const auto& c : spec.sandbox.copies) {
    int64_t bytes = WalkWritable({c.source}, host->root);
    for (const auto& f : c.built_files) {
      struct stat st;
      // Not followed: the entry's steps could have made the file a link to a host file.
      if (::lstat((c.built_dir + "/" + f).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        bytes += st.st_size;
      }
    }
    copy_bytes->push_back(bytes);
  }
  // A container's limits are the engine's: the kernel counts what a sandbox ran into in the
  // container's own cgroup, which the engine removes with it (not reported, docs/containers.md).
  if (host->root && !prepared->container) prepared->cgroups = SandboxCgroups::Create(spec.sandbox.limits);
  return {};
}

// What a sandboxed process may keep of its output and of each channel (RLIMIT_FSIZE bounds
// files it writes itself).
int64_t OutputLimit(const ProcessSpec& spec, const Prepared& prepared) {
  return prepared.sandboxed && spec.sandbox.limits.file_size_mb > 0
             ? spec.sandbox.limits.file_size_mb << 20
             : INT64_MAX;
}

// The process's inputs beside its arguments: stdin, its channels, the secret on a pipe.
util::Status OpenInputs(const ProcessSpec& spec, int64_t limit, Prepared* prepared) {
  if (!spec.stdin_path.empty()) {
    prepared->stdin_fd = ::open(spec.stdin_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (prepared->stdin_fd < 0) {
      return util::Error{spec.stdin_path + ": cannot open as input: " + std::strerror(errno)};
    }
  }
  for (const auto& path : spec.channels) {
    if (auto opened = OpenChannel(path, limit, prepared); !opened.ok()) return opened;
  }
  if (!spec.secret.empty()) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return util::Error{std::string("pipe failed: ") + std::strerror(errno)};
    bool whole = spec.secret.size() <= 4096 &&
                 ::write(pipe_fds[1], spec.secret.data(), spec.secret.size()) ==
                     static_cast<ssize_t>(spec.secret.size());
    ::close(pipe_fds[1]);
    prepared->channels.push_back(pipe_fds[0]);  // closed in the parent with the channels
    if (!whole) return util::Error{"cannot hand the process its secret"};
  }
  return {};
}

// The command line that runs spec.argv as the sandbox says: the engine's client for a
// container (named in `container`, whose name the disk watch takes), bubblewrap's otherwise.
util::Status SandboxedArgv(const ProcessSpec& spec, const HostInfo& host,
                           const std::vector<int64_t>& copy_bytes, Prepared* prepared,
                           RunningContainer* container, DiskWatch* disk) {
  if (prepared->container) {
    *container = {spec.sandbox.container.engine, ContainerName()};
    disk->container = container->name;
    // fbkit's filter as a profile the client reads from its descriptor after the channels
    // (not handed into the container).
    std::string profile = prepared->seccomp >= 0
        ? "/proc/self/fd/" + std::to_string(3 + prepared->channels.size()) : "";
    auto args = ContainerArgs(spec.sandbox, container->name, spec.cwd, spec.argv,
                              ContainerEnvironment(spec.vars),
                              static_cast<int>(prepared->channels.size()), copy_bytes, profile);
    if (!args.ok()) return args.failure();
    prepared->argv = std::move(*args);
  } else if (prepared->sandboxed) {
    int seccomp = prepared->seccomp >= 0 ? 3 + static_cast<int>(prepared->channels.size()) : -1;
    prepared->argv = BwrapArgs(spec.sandbox, host, spec.cwd,
                               SandboxedCommand(host, spec.argv, spec.vars), seccomp, copy_bytes);
  }
  return {};
}

// The output (and stderr apart when err_path says): each a file, reached by a sandboxed
// process through a pipe fbkit drains. Whatever is still held is closed with it.
struct Outputs {
  std::vector<int> files, reads, writes;
  Outputs() = default;
  Outputs(const Outputs&) = delete;
  Outputs& operator=(const Outputs&) = delete;
  ~Outputs() {
    for (auto* v : {&files, &reads, &writes}) for (int fd : *v) ::close(fd);
  }
  // The process's ends: stdout's and (or -1) stderr's.
  std::pair<int, int> ChildEnds(bool sandboxed) const {
    const std::vector<int>& ends = sandboxed ? writes : files;
    return {ends[0], ends.size() > 1 ? ends[1] : -1};
  }
};

util::Status OpenOutputs(const ProcessSpec& spec, bool sandboxed, Outputs* out) {
  std::vector<std::string> paths = {spec.log_path};
  if (!spec.err_path.empty()) paths.push_back(spec.err_path);
  for (const auto& path : paths) {
    auto file = OpenOutput(path);
    if (!file.ok()) return file.failure();
    out->files.push_back(*file);
    if (!sandboxed) continue;
    int pipe_fds[2] = {-1, -1};
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return util::Error{std::string("pipe failed: ") + std::strerror(errno)};
    out->reads.push_back(pipe_fds[0]);
    out->writes.push_back(pipe_fds[1]);
  }
  return {};
}

// After the fork, in fbkit: a sandboxed process's output pipes become pumps into their
// files (the process's ends closed here), an unsandboxed one's files are its own.
std::vector<Pump> OutputPumps(bool sandboxed, int64_t limit, Outputs* out) {
  std::vector<Pump> pumps;
  if (sandboxed) {
    for (size_t i = 0; i < out->files.size(); ++i) {
      ::close(out->writes[i]);
      ::fcntl(out->reads[i], F_SETFL, O_NONBLOCK);
      pumps.push_back(Pump{out->reads[i], out->files[i], limit});
    }
  } else {
    for (int fd : out->files) ::close(fd);
  }
  out->files.clear(), out->reads.clear(), out->writes.clear();
  return pumps;
}

// Starts a process in four phases: the sandbox prepared, the inputs opened, the command line
// made, the outputs opened; then the fork, and what fbkit keeps of the child.
class PosixLauncher : public Launcher {
 public:
  util::Expected<std::unique_ptr<Process>> Start(const ProcessSpec& spec) override {
    if (spec.argv.empty()) return util::Error{"empty command"};
    Prepared prepared{spec.argv, {}, false, {}, {}, {}, -1, -1};
    Closer closer(&prepared);
    HostInfo host;
    DiskWatch disk;  // the writable trees; copies are bounded by their tmpfs
    std::vector<int64_t> copy_bytes;
    if (auto s = PrepareSandbox(spec, &prepared, &host, &disk, &copy_bytes); !s.ok()) {
      return s.failure();
    }
    const int64_t limit = OutputLimit(spec, prepared);
    if (auto s = OpenInputs(spec, limit, &prepared); !s.ok()) return s.failure();
    RunningContainer container;  // what Kill stops
    if (auto s = SandboxedArgv(spec, host, copy_bytes, &prepared, &container, &disk); !s.ok()) {
      return s.failure();
    }
    Outputs outputs;
    if (auto s = OpenOutputs(spec, prepared.sandboxed, &outputs); !s.ok()) return s.failure();
    auto [out_fd, err_fd] = outputs.ChildEnds(prepared.sandboxed);
    pid_t pid = ::fork();
    if (pid < 0) return util::Error{std::string("fork failed: ") + std::strerror(errno)};
    if (pid == 0) ExecChild(spec, prepared, out_fd, err_fd);
    ::setpgid(pid, pid);  // also here: no race with a kill right after the fork
    std::vector<Pump> pumps = OutputPumps(prepared.sandboxed, limit, &outputs);
    pumps.insert(pumps.end(), prepared.pumps.begin(), prepared.pumps.end());
    prepared.pumps.clear();
    auto cgroups = std::move(prepared.cgroups);
    prepared.cgroups.clear();
    int reaper = prepared.container ? StartReaper(container.engine, container.name, pid) : -1;
    return std::unique_ptr<Process>(new PosixProcess(pid, std::move(cgroups), prepared.sandboxed,
                                                     std::move(pumps), std::move(disk),
                                                     std::move(container), reaper));
  }

 private:
  // Closes the parent's copies of the channel and seccomp descriptors, and removes cgroups
  // no process took over, however Start returns.
  struct Closer {
    Prepared* p;
    explicit Closer(Prepared* prepared) : p(prepared) {}
    ~Closer() {
      for (int fd : p->channels) ::close(fd);
      for (Pump& pump : p->pumps) pump.Close();
      if (p->seccomp >= 0) ::close(p->seccomp);
      if (p->stdin_fd >= 0) ::close(p->stdin_fd);
      SandboxCgroups::Remove(p->cgroups);
    }
  };
};

}  // namespace

Launcher& RealLauncher() {
  static PosixLauncher launcher;
  return launcher;
}

util::Expected<ExitInfo> RunToCompletion(Launcher& launcher, const ProcessSpec& spec,
                                         double timeout_seconds) {
  auto process = launcher.Start(spec);
  if (!process.ok()) return process.failure();
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (auto info = (*process)->Poll()) return *info;
    std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
    if (timeout_seconds > 0 && spent.count() > timeout_seconds) {
      ExitInfo info = (*process)->Kill();
      info.timed_out = true;
      return info;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace fbkit::sandbox

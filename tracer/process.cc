#include "tracer/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

extern char** environ;

namespace fbkit::tracer {
namespace {

ExitInfo FromStatus(int status) {
  ExitInfo info;
  if (WIFEXITED(status)) info.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) info.signal = WTERMSIG(status);
  return info;
}

// A pids cgroup bounding a sandbox's processes where fbkit may create one (root, where
// RLIMIT_NPROC does not apply); removed, with anything left in it, once the process ends.
class PidsCgroup {
 public:
  static std::string Create(int64_t max) {
    static std::atomic<int> counter{0};
    for (const char* base : {"/sys/fs/cgroup/pids", "/sys/fs/cgroup"}) {
      std::string dir = std::string(base) + "/fbkit-" + std::to_string(::getpid()) + "-" +
                        std::to_string(counter++);
      if (::mkdir(dir.c_str(), 0755) != 0) continue;
      std::ofstream limit(dir + "/pids.max");
      limit << max;
      limit.close();
      if (limit) return dir;
      ::rmdir(dir.c_str());
    }
    return "";
  }

  static void Remove(const std::string& dir) {
    if (dir.empty()) return;
    for (int attempt = 0; attempt < 200; ++attempt) {
      std::ifstream procs(dir + "/cgroup.procs");
      for (pid_t pid; procs >> pid;) ::kill(pid, SIGKILL);
      if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
};

class PosixProcess : public Process {
 public:
  PosixProcess(pid_t pid, std::string cgroup, bool sandboxed)
      : pid_(pid), cgroup_(std::move(cgroup)), sandboxed_(sandboxed) {}
  ~PosixProcess() override {
    if (!done_) Kill();
    PidsCgroup::Remove(cgroup_);
  }

  std::optional<ExitInfo> Poll() override {
    if (done_) return info_;
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == 0) return std::nullopt;
    done_ = true;
    info_ = r == pid_ ? Translate(FromStatus(status)) : ExitInfo{};
    ::kill(-pid_, SIGKILL);  // whatever the tests left running in the group
    PidsCgroup::Remove(cgroup_);
    cgroup_.clear();
    return info_;
  }

  ExitInfo Kill() override {
    if (done_) return info_;
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    done_ = true;
    info_ = Translate(FromStatus(status));
    PidsCgroup::Remove(cgroup_);
    cgroup_.clear();
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

  pid_t pid_;
  std::string cgroup_;
  bool sandboxed_;
  bool done_ = false;
  ExitInfo info_;
};

// What a child needs, computed before the fork.
struct Prepared {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // complete environment (sandbox); empty: inherit + spec.env
  bool sandboxed = false;
  std::string cgroup;            // "" when none
};

void SetLimit(int resource, int64_t value) {
  if (value <= 0) return;
  struct rlimit r{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  ::setrlimit(resource, &r);
}

// The last step before exec: nothing may allocate after the address-space limit is set (a
// sanitizer's runtime, for one, maps memory on demand).
void ApplyLimits(const Limits& limits, const std::string& cgroup) {
  if (!cgroup.empty()) {
    std::string pid = std::to_string(::getpid());
    int fd = ::open((cgroup + "/cgroup.procs").c_str(), O_WRONLY);
    if (fd < 0 || ::write(fd, pid.data(), pid.size()) < 0) {
      dprintf(2, "fbkit: cannot enter the process-limit cgroup %s\n", cgroup.c_str());
      ::_exit(126);
    }
    ::close(fd);
  } else if (::geteuid() != 0) {
    SetLimit(RLIMIT_NPROC, limits.processes);
  }
  SetLimit(RLIMIT_FSIZE, limits.file_size_mb << 20);
  SetLimit(RLIMIT_AS, limits.memory_mb << 20);
}

[[noreturn]] void ExecChild(const ProcessSpec& spec, const Prepared& prepared, int log_fd) {
  ::setpgid(0, 0);
  int in = ::open("/dev/null", O_RDONLY);
  ::dup2(in, 0);
  ::dup2(log_fd, 1);
  ::dup2(log_fd, 2);
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) {
    dprintf(2, "fbkit: cannot enter %s: %s\n", spec.cwd.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  std::vector<char*> args;
  for (const auto& a : prepared.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (prepared.sandboxed) {
    std::vector<char*> env;
    for (const auto& kv : prepared.env) env.push_back(const_cast<char*>(kv.c_str()));
    env.push_back(nullptr);
    ApplyLimits(spec.sandbox.limits, prepared.cgroup);
    ::execve(args[0], args.data(), env.data());
  } else {
    for (const auto& [k, v] : spec.env) ::setenv(k.c_str(), v.c_str(), 1);
    ::execvp(args[0], args.data());
  }
  dprintf(2, "fbkit: cannot run %s: %s\n", spec.argv[0].c_str(), std::strerror(errno));
  ::_exit(127);
}

class PosixLauncher : public Launcher {
 public:
  util::Expected<std::unique_ptr<Process>> Start(const ProcessSpec& spec) override {
    if (spec.argv.empty()) return util::Error{"empty command"};
    Prepared prepared{spec.argv, {}, false, ""};
    if (spec.sandbox.kind == SandboxKind::kBwrap) {
      HostInfo host = CurrentHost();
      if (host.bwrap.empty()) {
        return util::Error{"bubblewrap (bwrap) is not installed: apt-get install bubblewrap, "
                           "or pass --sandbox none to run without isolation"};
      }
      prepared.sandboxed = true;
      prepared.argv = BwrapArgs(spec.sandbox, host, spec.cwd, spec.argv);
      prepared.env = SandboxEnvironment(environ, host.home, spec.env);
      if (host.root && spec.sandbox.limits.processes > 0) {
        prepared.cgroup = PidsCgroup::Create(spec.sandbox.limits.processes + 2);
      }
    }
    int log_fd = ::open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      return util::Error{spec.log_path + ": cannot create: " + std::strerror(errno)};
    }
    pid_t pid = ::fork();
    if (pid < 0) {
      ::close(log_fd);
      PidsCgroup::Remove(prepared.cgroup);
      return util::Error{std::string("fork failed: ") + std::strerror(errno)};
    }
    if (pid == 0) ExecChild(spec, prepared, log_fd);
    ::setpgid(pid, pid);  // also here: no race with a kill right after the fork
    ::close(log_fd);
    return std::unique_ptr<Process>(new PosixProcess(pid, prepared.cgroup, prepared.sandboxed));
  }
};

}  // namespace

Launcher& RealLauncher() {
  static PosixLauncher launcher;
  return launcher;
}

util::Expected<ExitInfo> RunToCompletion(Launcher& launcher, const ProcessSpec& spec,
                                         double timeout_seconds) {
  auto process = launcher.Start(spec);
  if (!process.ok()) return util::Error{process.error()};
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

}  // namespace fbkit::tracer

#include "tracer/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
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

class PosixProcess : public Process {
 public:
  explicit PosixProcess(pid_t pid) : pid_(pid) {}
  ~PosixProcess() override {
    if (!done_) Kill();
  }

  std::optional<ExitInfo> Poll() override {
    if (done_) return info_;
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == 0) return std::nullopt;
    done_ = true;
    info_ = r == pid_ ? FromStatus(status) : ExitInfo{};
    ::kill(-pid_, SIGKILL);  // whatever the tests left running in the group
    return info_;
  }

  ExitInfo Kill() override {
    if (done_) return info_;
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    done_ = true;
    info_ = FromStatus(status);
    return info_;
  }

 private:
  pid_t pid_;
  bool done_ = false;
  ExitInfo info_;
};

[[noreturn]] void ExecChild(const ProcessSpec& spec, int log_fd) {
  ::setpgid(0, 0);
  int in = ::open("/dev/null", O_RDONLY);
  ::dup2(in, 0);
  ::dup2(log_fd, 1);
  ::dup2(log_fd, 2);
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) {
    dprintf(2, "fbkit: cannot enter %s: %s\n", spec.cwd.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  for (const auto& [k, v] : spec.env) ::setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> args;
  for (const auto& a : spec.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  dprintf(2, "fbkit: cannot run %s: %s\n", spec.argv[0].c_str(), std::strerror(errno));
  ::_exit(127);
}

class PosixLauncher : public Launcher {
 public:
  util::Expected<std::unique_ptr<Process>> Start(const ProcessSpec& spec) override {
    if (spec.argv.empty()) return util::Error{"empty command"};
    int log_fd = ::open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      return util::Error{spec.log_path + ": cannot create: " + std::strerror(errno)};
    }
    pid_t pid = ::fork();
    if (pid < 0) {
      ::close(log_fd);
      return util::Error{std::string("fork failed: ") + std::strerror(errno)};
    }
    if (pid == 0) ExecChild(spec, log_fd);
    ::setpgid(pid, pid);  // also here: no race with a kill right after the fork
    ::close(log_fd);
    return std::unique_ptr<Process>(new PosixProcess(pid));
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

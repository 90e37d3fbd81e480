#include "sandbox/process.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <filesystem>
#include <thread>

#include "tests/testing/run.h"
#include "util/env.h"

namespace fbkit::sandbox {
namespace {

using testing::ReadFileOrDie;
using testing::ScratchDir;
using testing::WriteFileOrDie;

// The sandbox's disk watch reads /proc/PID/stat of processes that may exit meanwhile; a C++
// stream's buffer threw on that read's ESRCH and aborted a whole `fb-extract all`. It reads
// with util::Env::ReadFile, whose read error is a value; reopening an open /proc file
// through /proc/self/fd reaches the same failing read after the process is gone.
TEST(ProcessTest, ReadingTheProcFileOfAProcessThatExitedIsNoException) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  int fd = ::open(("/proc/" + std::to_string(child) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  std::optional<util::Expected<std::string>> text;
  EXPECT_NO_THROW(text.emplace(util::RealEnv().ReadFile("/proc/self/fd/" + std::to_string(fd))));
  ASSERT_TRUE(text.has_value());
  EXPECT_FALSE(text->ok());
  EXPECT_NE(text->error().find("No such process"), std::string::npos) << text->error();
  ::close(fd);
  auto self = util::RealEnv().ReadFile("/proc/self/stat");
  ASSERT_TRUE(self.ok()) << self.error();
  EXPECT_TRUE(self->starts_with(std::to_string(::getpid()) + " ("));
}

TEST(ProcessTest, ExitCodeOutputEnvAndCwd) {
  ScratchDir tmp;
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "echo \"$FBKIT_X $(pwd)\"; echo err >&2; exit 3"};
  spec.vars = {{"FBKIT_X", "hello"}};
  spec.cwd = tmp.path();
  spec.log_path = tmp / "log";
  auto info = RunToCompletion(RealLauncher(), spec);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->code, 3);
  EXPECT_EQ(info->signal, 0);
  EXPECT_EQ(ReadFileOrDie(tmp / "log"), "hello " + tmp.path() + "\nerr\n");
}

TEST(ProcessTest, MissingProgramExits127WithAMessage) {
  ScratchDir tmp;
  ProcessSpec spec{{"/nonexistent/python"}, {}, "", tmp / "log", {}};
  auto info = RunToCompletion(RealLauncher(), spec);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->code, 127);
  EXPECT_NE(ReadFileOrDie(tmp / "log").find("cannot run /nonexistent/python"), std::string::npos);
}

// stdin is /dev/null unless a file is named; a link there is refused, not followed.
TEST(ProcessTest, StdinIsTheNamedFileOrNothing) {
  ScratchDir tmp;
  WriteFileOrDie(tmp / "in", "from a file\n");
  ProcessSpec spec{{"sh", "-c", "cat; echo end"}, {}, "", tmp / "log", {}};
  ASSERT_TRUE(RunToCompletion(RealLauncher(), spec).ok());
  EXPECT_EQ(ReadFileOrDie(tmp / "log"), "end\n");
  spec.stdin_path = tmp / "in";
  ASSERT_TRUE(RunToCompletion(RealLauncher(), spec).ok());
  EXPECT_EQ(ReadFileOrDie(tmp / "log"), "from a file\nend\n");
  std::filesystem::create_symlink(tmp / "in", tmp / "link");
  spec.stdin_path = tmp / "link";
  auto refused = RealLauncher().Start(spec);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("cannot open as input"), std::string::npos) << refused.error();
}

TEST(ProcessTest, SignalIsReported) {
  ScratchDir tmp;
  ProcessSpec spec{{"sh", "-c", "kill -SEGV $$"}, {}, "", tmp / "log", {}};
  auto info = RunToCompletion(RealLauncher(), spec);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->signal, SIGSEGV);
}

TEST(ProcessTest, TimeoutKillsTheProcessAndSaysSo) {
  ScratchDir tmp;
  ProcessSpec spec{{"sh", "-c", "echo started; sleep 30"}, {}, "", tmp / "log", {}};
  auto info = RunToCompletion(RealLauncher(), spec, 1.0);
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->timed_out);
  EXPECT_EQ(info->signal, SIGKILL);
  EXPECT_EQ(ReadFileOrDie(tmp / "log"), "started\n");
  spec.argv = {"true"};
  info = RunToCompletion(RealLauncher(), spec, 30);
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info->timed_out);
  EXPECT_EQ(info->code, 0);
}

TEST(ProcessTest, KillTakesTheWholeGroup) {
  ScratchDir tmp;
  // The shell starts a grandchild that would outlive it and write a file later.
  ProcessSpec spec{{"sh", "-c", "(sleep 1; touch " + (tmp / "late") + ") & sleep 30"},
                   {}, "", tmp / "log", {}};
  auto p = RealLauncher().Start(spec);
  ASSERT_TRUE(p.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto start = std::chrono::steady_clock::now();
  ExitInfo info = (*p)->Kill();
  EXPECT_EQ(info.signal, SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_FALSE(std::filesystem::exists(tmp / "late"));
}

// A sandboxed process: its exit code and signal come through bubblewrap, its environment
// is scrubbed, its working copy is writable and the rest of the system is not, and the
// limits hold.
ProcessSpec Sandboxed(const ScratchDir& tmp, const std::string& script) {
  ProcessSpec spec{{"/bin/sh", "-c", script}, {{"FBKIT_X", "kept"}}, tmp.path(), tmp / "log", {}};
  spec.sandbox.kind = SandboxKind::kBwrap;
  spec.sandbox.writable = {tmp.path()};
  // The system's interpreter, as the runs that start one name it (the allow-list has none).
  spec.sandbox.read_only = InterpreterDirs("/usr/bin/python3");
  spec.sandbox.limits.file_size_mb = 1;
  return spec;
}

// Output past limits.file_size_mb is dropped, and the exit says so: a reader of the log
// (git's listing of an agent's changes, red team round 12) must not take the start as whole.
TEST(ProcessTest, SandboxedOutputPastItsLimitIsCutAndSaidToBe) {
  ASSERT_TRUE(CheckBwrap().ok()) << CheckBwrap().error();
  ScratchDir tmp;
  auto info = RunToCompletion(RealLauncher(), Sandboxed(tmp, "head -c 3000000 /dev/zero"));
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_TRUE(info->output_cut);
  EXPECT_EQ(std::filesystem::file_size(tmp / "log"), 1u << 20);
  info = RunToCompletion(RealLauncher(), Sandboxed(tmp, "head -c 1048576 /dev/zero"));
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_FALSE(info->output_cut);  // exactly the limit is whole
}

TEST(ProcessTest, SandboxedExitSignalEnvironmentAndWrites) {
  ASSERT_TRUE(CheckBwrap().ok()) << CheckBwrap().error();
  ScratchDir tmp;
  ::setenv("FBKIT_SECRET_TOKEN", "s3cr3t", 1);
  auto info = RunToCompletion(
      RealLauncher(),
      Sandboxed(tmp, "echo \"$FBKIT_X:${FBKIT_SECRET_TOKEN:-none}:$HOME\"; touch ok; "
                     "touch /etc/fbkit-x 2>/dev/null || echo etc-ro; exit 3"));
  ::unsetenv("FBKIT_SECRET_TOKEN");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->code, 3);
  const char* home = std::getenv("HOME");
  EXPECT_EQ(ReadFileOrDie(tmp / "log"), "kept:none:" + std::string(home ? home : "/tmp") + "\netc-ro\n");
  EXPECT_TRUE(std::filesystem::exists(tmp / "ok"));
  info = RunToCompletion(RealLauncher(), Sandboxed(tmp, "kill -SEGV $$"));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->signal, SIGSEGV);
  EXPECT_EQ(info->code, -1);
}

// What is bound below the private HOME (an environment in HOME/.cache/fbkit/env/KEY) leaves
// the directories made above it writable, sticky: tools make their caches beside it
// (uv's HOME/.cache/uv), and cannot move what fbkit bound.
TEST(ProcessTest, ADirectoryBoundBelowHomeLeavesItsParentsWritableForTheSandboxsUser) {
  ASSERT_TRUE(CheckBwrap().ok()) << CheckBwrap().error();
  ScratchDir tmp;
  std::string home = tmp / "home";
  std::string env = home + "/.cache/fbkit/env/KEY";
  std::filesystem::create_directories(env);
  testing::WriteFileOrDie(env + "/marker", "env\n");
  std::string saved = std::getenv("HOME") ? std::getenv("HOME") : "";
  ::setenv("HOME", home.c_str(), 1);
  ProcessSpec spec = Sandboxed(tmp, "cat \"$HOME/.cache/fbkit/env/KEY/marker\"; "
                                    "mkdir \"$HOME/.cache/uv\" && echo cache-made; "
                                    "mv \"$HOME/.cache/fbkit\" \"$HOME/.cache/moved\" 2>/dev/null || "
                                    "echo bound-stays");
  spec.sandbox.writable.clear();
  spec.sandbox.read_only = {env};
  spec.cwd = "/tmp";
  auto info = RunToCompletion(RealLauncher(), spec);
  ::setenv("HOME", saved.c_str(), 1);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(ReadFileOrDie(tmp / "log"), "env\ncache-made\nbound-stays\n");
  EXPECT_FALSE(std::filesystem::exists(home + "/.cache/uv"));  // the sandbox's own HOME
}

TEST(ProcessTest, SandboxedFileSizeLimitHolds) {
  ScratchDir tmp;
  auto info = RunToCompletion(
      RealLauncher(), Sandboxed(tmp, "dd if=/dev/zero of=big bs=1M count=4 2>/dev/null; "
                                     "echo $?"));
  ASSERT_TRUE(info.ok());
  EXPECT_LE(std::filesystem::file_size(tmp / "big"), 1u << 20);
  EXPECT_NE(ReadFileOrDie(tmp / "log"), "0\n");
}

// What a process sent through a channel is final: it cannot seek back and rewrite it,
// truncate it, or reopen its descriptor (/proc/self/fd/3) to read it back or write past
// fbkit's end, sandboxed or not.
TEST(SandboxHostile, AChannelCannotBeRewrittenTruncatedOrReadBack) {
  for (SandboxKind kind : {SandboxKind::kBwrap, SandboxKind::kNone}) {
    ScratchDir tmp;
    ProcessSpec spec = Sandboxed(
        tmp,
        "echo '\"failed\"' >&3; "
        "/usr/bin/python3 -c 'import os; os.pwrite(3, b\"\\\"passed\\\"\", 0)' 2>/dev/null "
        "|| echo no-pwrite; "
        "truncate -s 0 /proc/self/fd/3 2>/dev/null || echo no-truncate; "
        "cat /proc/self/fd/3 2>/dev/null || echo no-read; "
        "(echo forged > /proc/self/fd/3) 2>/dev/null || echo no-reopen; "
        "echo second >&3");
    spec.sandbox.kind = kind;
    spec.channels = {tmp / "journal"};
    auto info = RunToCompletion(RealLauncher(), spec, 60);
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(ReadFileOrDie(tmp / "journal"), "\"failed\"\nsecond\n");
    EXPECT_EQ(ReadFileOrDie(tmp / "log"), "no-pwrite\nno-truncate\nno-read\nno-reopen\n");
  }
}

}  // namespace
}  // namespace fbkit::sandbox

namespace fbkit::sandbox {
namespace {

// Runs `script` in the sandbox with the scratch dir writable and `limits`; its output.
std::string InSandbox(const ScratchDir& tmp, const std::string& script, Limits limits = {}) {
  ProcessSpec spec = Sandboxed(tmp, script);
  spec.sandbox.limits = limits;
  auto info = RunToCompletion(RealLauncher(), spec, 120);
  EXPECT_TRUE(info.ok()) << info.error();
  return ReadFileOrDie(tmp / "log");
}

// A spec's variables are the command's, set inside the sandbox once root is dropped: the
// dynamic loader's (LD_DEBUG_OUTPUT here, LD_PRELOAD alike) never reach bubblewrap or
// setpriv on the host, which would write (or load) what they name there.
TEST(SandboxHostile, LoaderVariablesOfASpecNeverReachTheHost) {
  ScratchDir tmp, outside;
  ProcessSpec spec = Sandboxed(tmp, "echo \"$LD_DEBUG:$FBKIT_X\" > seen");
  spec.vars = {{"FBKIT_X", "kept"}, {"LD_DEBUG", "libs"},
               {"LD_DEBUG_OUTPUT", outside / "ld"}};
  auto info = RunToCompletion(RealLauncher(), spec, 120);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->code, 0);
  EXPECT_EQ(ReadFileOrDie(tmp / "seen"), "libs:kept\n");
  EXPECT_TRUE(std::filesystem::is_empty(outside.path())) << "the loader ran on the host";
}

TEST(SandboxHostile, NoRootInsideNoSysctlNoShadowNoHostTree) {
  ScratchDir tmp;
  std::string pattern = ReadFileOrDie("/proc/sys/kernel/core_pattern");
  // Each probe prints "ok" where the sandbox stops it. The sysctl write would write back the
  // value the host already has, so even a failure of the sandbox changes nothing.
  std::string out = InSandbox(
      tmp,
      "id -u; "
      "(cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern) 2>/dev/null || echo sysctl-ok; "
      "(cat /proc/sys/vm/overcommit_memory > /proc/sys/vm/overcommit_memory) 2>/dev/null || echo vm-ok; "
      "cat /etc/shadow >/dev/null 2>&1 || echo shadow-ok; "
      "ls " + std::string(FBKIT_SOURCE_DIR) + " >/dev/null 2>&1 || echo source-ok; "
      "ls /root /home /run /var/lib >/dev/null 2>&1 || echo dirs-ok; "
      "touch /etc/fbkit-x /usr/fbkit-x 2>/dev/null || echo system-ok");
  EXPECT_EQ(ReadFileOrDie("/proc/sys/kernel/core_pattern"), pattern);
  std::string uid = ::geteuid() == 0 ? "65534" : std::to_string(::geteuid());
  EXPECT_EQ(out, uid + "\nsysctl-ok\nvm-ok\nshadow-ok\nsource-ok\ndirs-ok\nsystem-ok\n");
}

TEST(SandboxHostile, SeccompRefusesNamespacesMountsKeyringsAndTracing) {
  ScratchDir tmp;
  // Each call through libc: its return value and errno (1 = EPERM, 38 = ENOSYS).
  std::string out = InSandbox(
      tmp,
      "/usr/bin/python3 -c '\n"
      "import ctypes, os\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "calls = [(\"unshare\", lambda: libc.unshare(0x10000000)),\n"
      "         (\"mount\", lambda: libc.mount(b\"none\", b\"/tmp\", b\"tmpfs\", 0, None)),\n"
      "         (\"keyctl\", lambda: libc.syscall(250, 0, 0, 0, 0, 0)),\n"
      "         (\"bpf\", lambda: libc.syscall(321, 0, 0, 0)),\n"
      "         (\"perf\", lambda: libc.syscall(298, 0, 0, -1, -1, 0)),\n"
      "         (\"ptrace\", lambda: libc.ptrace(0, 0, 0, 0)),\n"
      "         (\"clone3\", lambda: libc.syscall(435, 0, 0))]\n"
      "for name, call in calls:\n"
      "    r = call()\n"
      "    print(name, r, ctypes.get_errno())\n"
      "pid = os.fork()\n"
      "if pid == 0: os._exit(0)\n"
      "print(\"fork\", os.waitpid(pid, 0)[1])\n"
      "'");
  EXPECT_EQ(out,
            "unshare -1 1\nmount -1 1\nkeyctl -1 1\nbpf -1 1\nperf -1 1\nptrace -1 1\n"
            "clone3 -1 38\nfork 0\n");
}

TEST(SandboxHostile, PrivateTmpfsAreBoundedAndSeparate) {
  ScratchDir tmp;
  Limits limits;
  limits.file_size_mb = 8;  // each file, and each tmpfs, at most 8 MiB
  // Three files of 5 MiB each, every one under the file-size limit, in each private tmpfs:
  // the second does not fit.
  std::string out = InSandbox(
      tmp,
      "for d in /tmp /var/tmp /dev/shm \"$HOME\"; do n=0; for i in 1 2 3; do "
      "dd if=/dev/zero of=$d/f$i bs=1M count=5 2>/dev/null && n=$((n+1)); done; echo $d $n; done",
      limits);
  const char* home = std::getenv("HOME");
  std::string h = home && std::string(home) != "/" ? home : "/tmp";
  EXPECT_EQ(out, "/tmp 1\n/var/tmp 1\n/dev/shm 1\n" + h + " 1\n") << out;
}

TEST(SandboxHostile, MemoryBoundsTheWholeSandboxNotEachProcess) {
  if (::geteuid() != 0) GTEST_SKIP() << "cgroups are created as root";
  ScratchDir tmp;
  Limits limits;
  limits.memory_mb = 256;
  // Four children of 100 MB each: every one within the per-process limit, together over
  // the sandbox's.
  std::string out = InSandbox(
      tmp,
      "for i in 1 2 3 4; do /usr/bin/python3 -c 'import time; b = bytearray(100 << 20); "
      "time.sleep(3); print(\"held\")' & done; wait",
      limits);
  size_t held = 0;
  for (size_t p = out.find("held"); p != std::string::npos; p = out.find("held", p + 1)) ++held;
  EXPECT_LT(held, 4u) << out;
}

// The CPU quota bounds the whole sandbox: two processes spinning for a second of wall time
// get a fifth of a CPU between them (the kernel's accounting, read from inside), while the
// same spin without a quota gets its full second each.
TEST(SandboxHostile, CpuIsBoundedForTheWholeSandbox) {
  if (::geteuid() != 0) GTEST_SKIP() << "cgroups are created as root";
  ScratchDir tmp;
  const std::string spin =
      "for i in 1 2; do /usr/bin/python3 -c 'import os, time; t = time.time(); "
      "[0 for _ in iter(lambda: time.time() - t < 1.5, False)]; "
      "print(\"cpu\", os.times().user + os.times().system)' & done; wait";
  auto cpu_seconds = [](const std::string& out) {
    double total = 0;
    for (size_t p = out.find("cpu "); p != std::string::npos; p = out.find("cpu ", p + 1)) {
      total += std::atof(out.c_str() + p + 4);
    }
    return total;
  };
  Limits limited;
  limited.cpus = 0.2;
  double bounded = cpu_seconds(InSandbox(tmp, spin, limited));
  Limits unlimited;
  unlimited.cpus = -1;
  double free = cpu_seconds(InSandbox(tmp, spin, unlimited));
  EXPECT_LT(bounded, 0.6) << "the quota allows 0.3 s of CPU in 1.5 s";
  // Relative, not absolute: on a loaded machine (ctest -j 2 beside other work) two unbounded
  // spinners got 0.98 s between them, still over three times the quota's share.
  EXPECT_GT(free, 2 * std::max(bounded, 0.3)) << "without a quota the spinners get more CPU";
}

// The cgroups' event counters say which whole-sandbox limit the processes ran into (the
// grader flags it): forks refused at the process limit, a process killed at the memory limit.
TEST(SandboxHostile, TheLimitsASandboxRanIntoAreReported) {
  if (::geteuid() != 0) GTEST_SKIP() << "cgroups are created as root only";
  ScratchDir tmp;
  // Four processes of 70 MB under 128 MB; then 40 sleeps under a limit of 16 processes (the
  // shell gives up at the first fork refused).
  ProcessSpec spec = Sandboxed(
      tmp, "for i in 1 2 3 4; do /usr/bin/python3 -c 'import time; b = bytearray(70 << 20); "
           "b[::4096] = b\"x\" * len(b[::4096]); time.sleep(2)' & done; wait; echo memory; "
           "for i in $(seq 40); do sleep 1 & done; wait; echo done");
  spec.sandbox.limits.processes = 16;
  spec.sandbox.limits.memory_mb = 128;
  spec.sandbox.limits.file_size_mb = 1;
  auto info = RunToCompletion(RealLauncher(), spec, 120);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_TRUE(info->processes_limit_reached) << ReadFileOrDie(tmp / "log");
  EXPECT_TRUE(info->memory_limit_reached) << ReadFileOrDie(tmp / "log");
  ScratchDir quiet;
  auto calm = RunToCompletion(RealLauncher(), Sandboxed(quiet, "sleep 0.1; echo done"), 120);
  ASSERT_TRUE(calm.ok());
  EXPECT_FALSE(calm->processes_limit_reached);
  EXPECT_FALSE(calm->memory_limit_reached);
}

TEST(SandboxHostile, TheWorkCopyCannotGrowPastItsDiskLimit) {
  ScratchDir tmp;
  ProcessSpec spec = Sandboxed(tmp, "mkdir fill; for i in $(seq 200); do "
                                    "dd if=/dev/urandom of=fill/$i bs=1M count=1 2>/dev/null; "
                                    "sleep 0.02; done; echo wrote-all");
  spec.sandbox.limits.disk_mb = 8;
  spec.sandbox.limits.file_size_mb = 2;  // every file alone is within its limit
  auto info = RunToCompletion(RealLauncher(), spec, 120);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_TRUE(info->disk_exceeded);
  EXPECT_EQ(ReadFileOrDie(tmp / "log").find("wrote-all"), std::string::npos);
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp / "fill")) files += e.is_regular_file();
  EXPECT_LT(files, 40u);  // killed within a quarter second of passing 8 MiB
}

// Trees that outlive the process are host directories whose growth is measured: a file
// unlinked but held open counts, and so does every entry (empty files use up inodes).
TEST(SandboxHostile, TheDiskWatchCountsUnlinkedFilesAndEmptyOnes) {
  for (const char* script :
       {"exec 7>held; rm held; dd if=/dev/zero bs=1M count=40 >&7 2>/dev/null; sleep 3; echo survived",
        "mkdir many; i=0; while [ $i -lt 6000 ]; do : > many/$i; i=$((i+1)); done; sleep 3; "
        "echo survived",
        // Mapped, unlinked, its descriptor closed: alive in the mapping alone.
        "/usr/bin/python3 -c \"import mmap, os, time\n"
        "f = open('m', 'w+b'); f.truncate(40 << 20); m = mmap.mmap(f.fileno(), 40 << 20)\n"
        "m[:] = b'x' * (40 << 20); f.close(); os.unlink('m'); time.sleep(3); print('survived')\""}) {
    ScratchDir tmp;
    ProcessSpec spec = Sandboxed(tmp, script);
    spec.sandbox.limits.disk_mb = 8;
    spec.sandbox.limits.file_size_mb = 64;
    auto info = RunToCompletion(RealLauncher(), spec, 120);
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_TRUE(info->disk_exceeded) << script;
    EXPECT_EQ(ReadFileOrDie(tmp / "log").find("survived"), std::string::npos) << script;
  }
}

// A sandbox holding more descriptors than the watch can count at its pace is stopped as over
// its disk limit (red team round 13: 2.85 million descriptors slowed each count so that 19 GB
// went past 200 MB): six processes of 18,000 each, nothing written.
TEST(SandboxHostile, TooManyDescriptorsToWatchStopTheSandbox) {
  ScratchDir tmp;
  ProcessSpec spec = Sandboxed(
      tmp, "for i in 1 2 3 4 5 6; do /usr/bin/python3 -c \"import os, time\n"
           "fd = os.open('/dev/null', os.O_RDONLY)\n"
           "fds = [os.dup(fd) for _ in range(18000)]\n"
           "time.sleep(20)\" & done; wait; echo survived");
  spec.sandbox.limits.disk_mb = 100;
  spec.sandbox.limits.memory_mb = 0;
  auto info = RunToCompletion(RealLauncher(), spec, 120);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_TRUE(info->disk_exceeded);
  EXPECT_EQ(ReadFileOrDie(tmp / "log").find("survived"), std::string::npos);
}

// A private copy: the process sees the source's files at the target and may write there,
// up to the disk limit, which the kernel holds (an unlinked file still open, a directory
// made unreadable count); the source and the host see none of it, and a protected path
// stays read-only and uncopied.
TEST(SandboxHostile, APrivateCopyIsBoundedByTheKernelAndNeverReachesTheHost) {
  ScratchDir tmp;
  std::filesystem::create_directories(tmp / "src/pkg");
  std::filesystem::create_directories(tmp / "src/.git");
  testing::WriteFileOrDie(tmp / "src/pkg/mod.py", "x = 1\n");
  testing::WriteFileOrDie(tmp / "src/.git/config", "[core]\n");
  testing::WriteFileOrDie(tmp / "src/guarded.txt", "guarded\n");
  std::filesystem::create_directories(tmp / "src/tests");
  testing::WriteFileOrDie(tmp / "src/tests/test_a.py", "a\n");
  testing::WriteFileOrDie(tmp / "src/tests/helper.py", "h\n");
  std::string target = tmp / "src";
  ProcessSpec spec{{"/bin/sh", "-c",
                    "cat pkg/mod.py; echo y > pkg/new.py && echo wrote; "
                    "(echo z > guarded.txt) 2>/dev/null || echo guarded-ro; "
                    "(echo z > .git/config) 2>/dev/null || echo git-ro; "
                    "(echo z > tests/test_a.py) 2>/dev/null || echo nested-ro; "
                    "cat tests/helper.py && echo z > tests/helper.py && echo nested-rw; "
                    // 6 MiB held open, unlinked; 3 MiB in a directory made unreadable: the
                    // next 5 MiB exceed the 12 MiB limit however the host would list it.
                    "exec 7>held; rm held; dd if=/dev/zero bs=1M count=6 >&7 2>/dev/null; "
                    "mkdir -p hide && dd if=/dev/zero of=hide/f bs=1M count=3 2>/dev/null; "
                    "chmod 000 hide; "
                    "dd if=/dev/zero of=more bs=1M count=5 2>/dev/null && echo more-fit || echo full; "
                    "pwd"},
                   {}, target, tmp / "log", {}};
  spec.sandbox.kind = SandboxKind::kBwrap;
  spec.sandbox.copies = {{target, target, "", {}}};
  spec.sandbox.protect = {target + "/guarded.txt", target + "/.git", target + "/tests/test_a.py"};
  spec.sandbox.limits.disk_mb = 12;
  spec.sandbox.limits.file_size_mb = 8;
  auto info = RunToCompletion(RealLauncher(), spec, 120);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(ReadFileOrDie(tmp / "log"),
            "x = 1\nwrote\nguarded-ro\ngit-ro\nnested-ro\nh\nnested-rw\nfull\n" + target + "\n");
  EXPECT_EQ(ReadFileOrDie(tmp / "src/tests/helper.py"), "h\n");
  EXPECT_FALSE(std::filesystem::exists(tmp / "src/pkg/new.py"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "src/more"));
  EXPECT_FALSE(std::filesystem::exists(tmp / "src/hide"));
  EXPECT_EQ(ReadFileOrDie(tmp / "src/guarded.txt"), "guarded\n");
  EXPECT_EQ(ReadFileOrDie(tmp / "src/.git/config"), "[core]\n");
}

// A large tree's grader: 3,000 protected files (a large repository's test-side files) fit
// in one run, where a mount each would pass bubblewrap's 9,000 arguments and a list of them
// in one argument Linux's 128 KiB: directories all of whose files are protected are then
// bound whole, the rest file by file. Each protected file stays read-only, and a file
// beside them is copied and writable.
TEST(SandboxHostile, ThousandsOfProtectedFilesFitOneRun) {
  ScratchDir tmp;
  std::string target = tmp / "src";
  std::vector<std::string> protect;
  for (int d = 0; d < 30; ++d) {
    std::string dir = target + "/tests/data/set_" + std::to_string(d);
    std::filesystem::create_directories(dir);
    for (int i = 0; i < 100; ++i) {
      protect.push_back(dir + "/case_" + std::to_string(i) + "_with_a_descriptive_name.txt");
      testing::WriteFileOrDie(protect.back(), std::to_string(d) + "." + std::to_string(i) + "\n");
    }
  }
  testing::WriteFileOrDie(target + "/tests/data/free.txt", "free\n");
  std::string script;
  for (int d : {0, 29}) {
    std::string f = "tests/data/set_" + std::to_string(d) + "/case_7_with_a_descriptive_name.txt";
    script += "cat " + f + "; (echo z > " + f + ") 2>/dev/null || echo ro; ";
  }
  script += "cat tests/data/free.txt && echo z > tests/data/free.txt && echo rw; "
            "cat tests/data/*/* | wc -l";
  ProcessSpec spec{{"/bin/sh", "-c", script}, {}, target, tmp / "log", {}};
  spec.sandbox.kind = SandboxKind::kBwrap;
  spec.sandbox.copies = {{target, target, "", {}}};
  spec.sandbox.protect = protect;
  auto info = RunToCompletion(RealLauncher(), spec, 120);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(info->code, 0) << ReadFileOrDie(tmp / "log");
  EXPECT_EQ(ReadFileOrDie(tmp / "log"), "0.7\nro\n29.7\nro\nfree\nrw\n3000\n");
  EXPECT_EQ(ReadFileOrDie(tmp / "src/tests/data/free.txt"), "free\n");
}

TEST(SandboxHostile, TheProcessCannotTruncateOrReplaceItsLog) {
  ScratchDir tmp;
  std::string out = InSandbox(tmp,
                              "echo first; truncate -s 0 /proc/self/fd/1 2>/dev/null; "
                              "(: > /proc/self/fd/1) 2>/dev/null; echo second");
  EXPECT_EQ(out, "first\nsecond\n");
}

TEST(SandboxHostile, ChannelsAreDescriptorsAndLogsAreNeverFollowed) {
  ScratchDir tmp;
  ProcessSpec spec = Sandboxed(tmp, "echo record >&3; ls /proc/self/fd/3 >/dev/null && echo fd3");
  spec.channels = {tmp / "journal"};
  auto info = RunToCompletion(RealLauncher(), spec, 60);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(ReadFileOrDie(tmp / "journal"), "record\n");
  EXPECT_EQ(ReadFileOrDie(tmp / "log"), "fd3\n");
  // A log path that is a symlink (planted where fbkit writes) is refused, never truncated.
  testing::WriteFileOrDie(tmp / "victim", "precious");
  std::filesystem::create_symlink(tmp / "victim", tmp / "link.log");
  spec.log_path = tmp / "link.log";
  EXPECT_FALSE(RealLauncher().Start(spec).ok());
  EXPECT_EQ(ReadFileOrDie(tmp / "victim"), "precious");
}

// Nothing fbkit's caller left open reaches the sandbox, close-on-exec or not (red team: with
// `9<TASKS` on fbkit's command line an agent read /proc/self/fd/9/<id>/patch.diff).
TEST(SandboxHostile, DescriptorsTheCallerLeftOpenAreClosed) {
  ScratchDir tmp;
  testing::WriteFileOrDie(tmp / "gold.diff", "the answer");
  int fd = ::open((tmp / "gold.diff").c_str(), O_RDONLY);  // inheritable, as a shell's 9<
  ASSERT_GE(fd, 0);
  int at9 = ::dup2(fd, 9);
  ASSERT_EQ(at9, 9);
  std::string out = InSandbox(tmp, "cat /proc/self/fd/9 2>/dev/null || echo closed; "
                                   "(cat <&9) 2>/dev/null || echo closed");
  ProcessSpec plain{{"/bin/sh", "-c", "(cat <&9) 2>/dev/null || echo closed"}, {}, tmp.path(), tmp / "plain.log", {}};
  auto info = RunToCompletion(RealLauncher(), plain, 60);
  ::close(9);
  ::close(fd);
  EXPECT_EQ(out, "closed\nclosed\n");
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(ReadFileOrDie(tmp / "plain.log"), "closed\n") << "unsandboxed processes too";
}

// The system is shown by an allow-list: programs, shared libraries and what they read, no
// other part of /usr (where vendored copies of a repository's packages live), no /opt; an
// interpreter's own directories only when the run names it.
TEST(SandboxHostile, TheSystemIsAnAllowList) {
  ScratchDir tmp;
  ProcessSpec spec = Sandboxed(tmp, "for d in /opt /usr/share/doc /usr/src /usr/include "
                                    "/usr/lib/python3 /usr/lib/python3.11; do "
                                    "test -e $d && echo \"$d seen\"; done; "
                                    "git --version >/dev/null && echo git; echo end");
  spec.sandbox.read_only.clear();
  auto info = RunToCompletion(RealLauncher(), spec, 60);
  ASSERT_TRUE(info.ok()) << info.error();
  EXPECT_EQ(ReadFileOrDie(tmp / "log"), "git\nend\n");
  HostInfo host = CurrentHost();
  for (const auto& s : host.system) {
    EXPECT_NE(s.path, "/usr");
    EXPECT_NE(s.path, "/opt");
  }
}

}  // namespace
}  // namespace fbkit::sandbox

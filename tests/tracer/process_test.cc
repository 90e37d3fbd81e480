#include "tracer/process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "tests/testing/run.h"

namespace fbkit::tracer {
namespace {

using testing::ReadFileOrDie;
using testing::ScratchDir;

TEST(ProcessTest, ExitCodeOutputEnvAndCwd) {
  ScratchDir tmp;
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "echo \"$FBKIT_X $(pwd)\"; echo err >&2; exit 3"};
  spec.env = {{"FBKIT_X", "hello"}};
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
  spec.sandbox.limits.file_size_mb = 1;
  return spec;
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

TEST(ProcessTest, SandboxedFileSizeLimitHolds) {
  ScratchDir tmp;
  auto info = RunToCompletion(
      RealLauncher(), Sandboxed(tmp, "dd if=/dev/zero of=big bs=1M count=4 2>/dev/null; "
                                     "echo $?"));
  ASSERT_TRUE(info.ok());
  EXPECT_LE(std::filesystem::file_size(tmp / "big"), 1u << 20);
  EXPECT_NE(ReadFileOrDie(tmp / "log"), "0\n");
}

}  // namespace
}  // namespace fbkit::tracer

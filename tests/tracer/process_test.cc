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

}  // namespace
}  // namespace fbkit::tracer

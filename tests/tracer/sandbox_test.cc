#include "tracer/sandbox.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fbkit::tracer {
namespace {

// The index of the first `a b c` run in args, or -1.
int Find(const std::vector<std::string>& args, const std::vector<std::string>& run) {
  auto it = std::search(args.begin(), args.end(), run.begin(), run.end());
  return it == args.end() ? -1 : static_cast<int>(it - args.begin());
}

HostInfo Host(bool root) {
  HostInfo h;
  h.bwrap = "/usr/bin/bwrap";
  h.home = "/home/ada";
  h.root = root;
  h.existing = {"/home", "/root", "/run", "/tmp"};
  return h;
}

TEST(SandboxTest, SystemReadOnlyHomesHiddenWorkWritableNoNetwork) {
  Sandbox s;
  s.kind = SandboxKind::kBwrap;
  s.read_only = {"/home/ada/repo", "/usr/lib/python3"};
  s.writable = {"/tmp/out/work"};
  auto args = BwrapArgs(s, Host(false), "/home/ada/repo", {"python3", "-m", "pytest"});
  EXPECT_EQ(args.front(), "/usr/bin/bwrap");
  EXPECT_GE(Find(args, {"--ro-bind", "/", "/"}), 0);
  EXPECT_GE(Find(args, {"--unshare-all"}), 0);
  EXPECT_EQ(Find(args, {"--share-net"}), -1);
  EXPECT_GE(Find(args, {"--die-with-parent"}), 0);
  EXPECT_EQ(Find(args, {"--cap-drop", "ALL"}), -1);  // not root: nothing to drop
  int home = Find(args, {"--tmpfs", "/home"});
  int repo = Find(args, {"--ro-bind-try", "/home/ada/repo", "/home/ada/repo"});
  int tmp = Find(args, {"--tmpfs", "/tmp"});
  int work = Find(args, {"--bind", "/tmp/out/work", "/tmp/out/work"});
  ASSERT_GE(home, 0);
  EXPECT_GT(repo, home);  // bound back after its parent was hidden
  EXPECT_GT(work, tmp);
  EXPECT_EQ(Find(args, {"--ro-bind-try", "/usr/lib/python3"}), -1);  // visible anyway
  EXPECT_EQ(Find(args, {"--size", std::to_string(1024LL << 20), "--tmpfs", "/tmp"}), tmp - 2);
  EXPECT_EQ(Find(args, {"--chdir", "/home/ada/repo", "--", "python3", "-m", "pytest"}),
            static_cast<int>(args.size()) - 6);
}

TEST(SandboxTest, NetworkWhenAllowedAndCapabilitiesDroppedForRoot) {
  Sandbox s;
  s.kind = SandboxKind::kBwrap;
  s.network = true;
  auto args = BwrapArgs(s, Host(true), "", {"true"});
  EXPECT_GE(Find(args, {"--share-net"}), 0);
  EXPECT_GE(Find(args, {"--cap-drop", "ALL"}), 0);
  EXPECT_EQ(Find(args, {"--chdir"}), -1);
}

TEST(SandboxTest, APrivateCopyTakesTheRepositorysPlace) {
  Sandbox s;
  s.kind = SandboxKind::kBwrap;
  s.binds = {{"/tmp/work/root", "/srv/repo", true}, {"/srv/repo/.git", "/srv/repo/.git", false}};
  s.read_only = {"/srv/repo", "/srv/repo/.venv", "/srv"};
  s.writable = {"/tmp/work"};
  auto args = BwrapArgs(s, Host(false), "/srv/repo", {"pytest"});
  int copy = Find(args, {"--bind", "/tmp/work/root", "/srv/repo"});
  int git = Find(args, {"--ro-bind", "/srv/repo/.git", "/srv/repo/.git"});
  int venv = Find(args, {"--ro-bind-try", "/srv/repo/.venv", "/srv/repo/.venv"});
  ASSERT_GE(copy, 0);
  EXPECT_GT(git, copy);
  EXPECT_GT(venv, git);  // what the run needs from inside the original stays visible
  // The original itself (or a parent of it) is never bound over the copy.
  EXPECT_EQ(Find(args, {"--ro-bind-try", "/srv/repo", "/srv/repo"}), -1);
  EXPECT_EQ(Find(args, {"--ro-bind-try", "/srv", "/srv"}), -1);
  EXPECT_GT(Find(args, {"--bind", "/tmp/work", "/tmp/work"}), venv);
}

TEST(SandboxTest, HiddenDirsCoverTheUsersHome) {
  EXPECT_EQ(HiddenDirs("/home/ada").size(), 5u);  // under /home already
  auto dirs = HiddenDirs("/srv/users/ada");
  EXPECT_EQ(dirs.back(), "/srv/users/ada");
}

TEST(SandboxTest, EnvironmentIsScrubbed) {
  const char* parent[] = {"PATH=/usr/bin", "AWS_SECRET_ACCESS_KEY=x", "GITHUB_TOKEN=y",
                          "SSH_AUTH_SOCK=/run/ssh", "LANG=C.UTF-8", "LC_ALL=C", "HOME=/root",
                          "PYTHONPATH=/evil", nullptr};
  auto env = SandboxEnvironment(parent, "/root", {{"PYTHONPATH", "/agent"}, {"LANG", "en"}});
  std::sort(env.begin(), env.end());
  EXPECT_EQ(env, (std::vector<std::string>{"HOME=/root", "LANG=en", "LC_ALL=C", "PATH=/usr/bin",
                                           "PYTHONPATH=/agent", "TMPDIR=/tmp"}));
}

TEST(SandboxTest, KindNames) {
  EXPECT_EQ(*ParseSandboxKind("bwrap"), SandboxKind::kBwrap);
  EXPECT_EQ(*ParseSandboxKind("none"), SandboxKind::kNone);
  EXPECT_FALSE(ParseSandboxKind("docker").ok());
  EXPECT_STREQ(SandboxKindName(SandboxKind::kBwrap), "bwrap");
}

}  // namespace
}  // namespace fbkit::tracer

#include "sandbox/sandbox.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "sandbox/seccomp.h"
#include "tests/testing/run.h"

namespace fbkit::sandbox {
namespace {

// The index of the first `a b c` run in args, or -1.
int Find(const std::vector<std::string>& args, const std::vector<std::string>& run) {
  auto it = std::search(args.begin(), args.end(), run.begin(), run.end());
  return it == args.end() ? -1 : static_cast<int>(it - args.begin());
}

HostInfo Host(bool root) {
  HostInfo h;
  h.bwrap = "/usr/bin/bwrap";
  h.setpriv = "/usr/bin/setpriv";
  h.home = "/home/ada";
  h.root = root;
  h.system = {{"/usr", ""}, {"/etc", ""}, {"/bin", "usr/bin"}, {"/lib64", "usr/lib64"}};
  return h;
}

TEST(SandboxTest, SystemByAllowListHomesPrivateWorkWritableNoNetwork) {
  Sandbox s;
  s.kind = SandboxKind::kBwrap;
  s.read_only = {"/home/ada/repo", "/usr/lib/python3"};
  s.writable = {"/srv/out/work"};
  auto args = BwrapArgs(s, Host(false), "/home/ada/repo", {"python3", "-m", "pytest"});
  EXPECT_EQ(args.front(), "/usr/bin/bwrap");
  EXPECT_EQ(Find(args, {"--ro-bind", "/", "/"}), -1);  // never the whole system
  EXPECT_GE(Find(args, {"--ro-bind", "/usr", "/usr"}), 0);
  EXPECT_GE(Find(args, {"--ro-bind", "/etc", "/etc"}), 0);
  EXPECT_GE(Find(args, {"--symlink", "usr/bin", "/bin"}), 0);
  EXPECT_GE(Find(args, {"--unshare-all", "--unshare-user", "--disable-userns"}), 0);
  EXPECT_EQ(Find(args, {"--share-net"}), -1);
  EXPECT_GE(Find(args, {"--die-with-parent"}), 0);
  EXPECT_EQ(Find(args, {"--cap-drop", "ALL"}), -1);  // not root: nothing to drop
  EXPECT_EQ(Find(args, {"/usr/bin/setpriv"}), -1);
  EXPECT_GE(Find(args, {"--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"}), 0);
  std::string size = std::to_string(1024LL << 20);
  for (const char* dir : {"/tmp", "/var/tmp", "/dev/shm", "/home/ada"}) {
    EXPECT_GE(Find(args, {"--perms", "1777", "--size", size, "--tmpfs", dir}), 0) << dir;
  }
  int home = Find(args, {"--tmpfs", "/home/ada"});
  int repo = Find(args, {"--ro-bind-try", "/home/ada/repo", "/home/ada/repo"});
  int work = Find(args, {"--bind", "/srv/out/work", "/srv/out/work"});
  ASSERT_GE(home, 0);
  EXPECT_GT(repo, home);  // bound after the private home
  EXPECT_GT(work, 0);
  EXPECT_EQ(Find(args, {"--ro-bind-try", "/usr/lib/python3"}), -1);  // visible anyway
  EXPECT_EQ(Find(args, {"--chdir", "/home/ada/repo", "--", "python3", "-m", "pytest"}),
            static_cast<int>(args.size()) - 6);
}

TEST(SandboxTest, RootRunsTheCommandAsNobodyWithoutCapabilities) {
  Sandbox s;
  s.kind = SandboxKind::kBwrap;
  s.network = true;
  auto args = BwrapArgs(s, Host(true), "", {"true"}, 5);
  EXPECT_EQ(Find(args, {"--unshare-all"}), -1);
  EXPECT_EQ(Find(args, {"--unshare-net"}), -1);  // network allowed
  EXPECT_GE(Find(args, {"--unshare-pid"}), 0);
  EXPECT_GE(Find(args, {"--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"}), 0);
  EXPECT_GE(Find(args, {"--seccomp", "5"}), 0);
  EXPECT_EQ(Find(args, {"--chdir"}), -1);
  EXPECT_EQ(Find(args, {"--", "/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                        "--clear-groups", "--inh-caps=-all", "--", "true"}),
            static_cast<int>(args.size()) - 8);
  s.network = false;
  EXPECT_GE(Find(BwrapArgs(s, Host(true), "", {"true"}), {"--unshare-net"}), 0);
}

TEST(SandboxTest, APrivateCopyTakesTheRepositorysPlaceAndItsGitStaysReadOnly) {
  Sandbox s;
  s.kind = SandboxKind::kBwrap;
  s.binds = {{"/tmp/work/root", "/srv/repo", true}, {"/srv/repo/.git", "/srv/repo/.git", false}};
  s.read_only = {"/srv/repo", "/srv/repo/.venv", "/srv"};
  s.writable = {"/tmp/work", "/tmp/copy"};
  s.protect = {"/tmp/copy/.git"};
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
  // Protected paths come last, over the writable tree they lie in.
  EXPECT_GT(Find(args, {"--ro-bind-try", "/tmp/copy/.git", "/tmp/copy/.git"}),
            Find(args, {"--bind", "/tmp/copy", "/tmp/copy"}));
}

TEST(SandboxTest, SystemPathsAreAnAllowList) {
  const auto& paths = SystemPaths();
  for (const char* never : {"/", "/home", "/root", "/run", "/tmp", "/var", "/srv", "/mnt", "/work"}) {
    EXPECT_EQ(std::count(paths.begin(), paths.end(), never), 0) << never;
  }
  EXPECT_EQ(std::count(paths.begin(), paths.end(), "/usr"), 1);
}

// A hidden directory is an empty tmpfs no one may write and a page large (red team: 2 GB
// written into an unbounded one as an ordinary user); the system is the view's entries, each
// bound with its parents made readable, never /usr whole unless the sandbox asks for it.
TEST(SandboxTest, HiddenDirectoriesAreEmptyReadOnlyAndSized) {
  Sandbox s;
  s.kind = SandboxKind::kBwrap;
  s.hidden = {"/srv/tasks"};
  HostInfo h = Host(true);
  h.system = {{"/usr/bin", ""}, {"/etc", ""}};
  h.whole = {{"/usr", ""}, {"/etc", ""}};
  auto args = BwrapArgs(s, h, "", {"true"});
  EXPECT_GE(Find(args, {"--perms", "0555", "--size", "4096", "--tmpfs", "/srv/tasks"}), 0);
  EXPECT_GE(Find(args, {"--ro-bind", "/usr/bin", "/usr/bin"}), 0);
  EXPECT_EQ(Find(args, {"--ro-bind", "/usr", "/usr"}), -1);
  s.whole_system = true;
  args = BwrapArgs(s, h, "", {"true"});
  EXPECT_GE(Find(args, {"--ro-bind", "/usr", "/usr"}), 0);
  EXPECT_EQ(Find(args, {"--ro-bind", "/usr/bin", "/usr/bin"}), -1);
}

TEST(SandboxTest, EnvironmentIsScrubbed) {
  const char* parent[] = {"PATH=/usr/bin", "AWS_SECRET_ACCESS_KEY=x", "GITHUB_TOKEN=y",
                          "SSH_AUTH_SOCK=/run/ssh", "LANG=C.UTF-8", "LC_ALL=C", "HOME=/root",
                          "PYTHONPATH=/evil", "SSL_CERT_FILE=/etc/ssl/certs/ca.crt",
                          "HTTPS_PROXY=http://user:pw@proxy:3128", nullptr};
  auto env = SandboxEnvironment(parent, "/root", {{"PYTHONPATH", "/agent"}, {"LANG", "en"}});
  std::sort(env.begin(), env.end());
  EXPECT_EQ(env, (std::vector<std::string>{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory",
                                           "GIT_CONFIG_VALUE_0=*", "HOME=/root", "LANG=en",
                                           "LC_ALL=C", "PATH=/usr/bin", "PYTHONPATH=/agent",
                                           "SSL_CERT_FILE=/etc/ssl/certs/ca.crt", "TMPDIR=/tmp"}));
}

TEST(SandboxTest, TheSpecsVariablesAreSetForTheCommandAlone) {
  HostInfo h = Host(true);
  h.env = "/usr/bin/env";
  EXPECT_EQ(SandboxedCommand(h, {"python3", "-m", "pytest"}, {}),
            (std::vector<std::string>{"python3", "-m", "pytest"}));
  EXPECT_EQ(SandboxedCommand(h, {"python3"}, {{"A", "1"}, {"LD_PRELOAD", "./x.so"}}),
            (std::vector<std::string>{"/usr/bin/env", "A=1", "LD_PRELOAD=./x.so", "python3"}));
}

// bubblewrap follows links in a bind's source: a protected path that is a link (a
// repository's `.git -> /`), or lies behind a linked directory leaving the copy, is not
// bound.
TEST(SandboxTest, AProtectedPathThatIsALinkIsNotBound) {
  testing::ScratchDir tmp;
  const std::string repo = tmp.path() + "/repo";
  std::filesystem::create_directories(repo + "/tests");
  std::filesystem::create_directories(tmp.path() + "/outside");
  std::ofstream(tmp.path() + "/outside/t.py") << "x";
  std::ofstream(repo + "/tests/ok.py") << "x";
  std::filesystem::create_symlink("/", repo + "/.git");
  std::filesystem::create_symlink(tmp.path() + "/outside", repo + "/linked");
  Sandbox s;
  s.kind = SandboxKind::kBwrap;
  s.copies = {{repo, repo, "", {}}};
  s.protect = {repo + "/.git", repo + "/linked/t.py", repo + "/tests/ok.py"};
  auto args = BwrapArgs(s, Host(true), repo, {"true"});
  EXPECT_EQ(Find(args, {"--ro-bind-try", repo + "/.git"}), -1);
  EXPECT_EQ(Find(args, {"--ro-bind-try", repo + "/linked/t.py"}), -1);
  EXPECT_GE(Find(args, {"--ro-bind-try", repo + "/tests/ok.py"}), 0);
}

TEST(SandboxTest, KindNames) {
  EXPECT_EQ(*ParseSandboxKind("bwrap"), SandboxKind::kBwrap);
  EXPECT_EQ(*ParseSandboxKind("none"), SandboxKind::kNone);
  EXPECT_EQ(*ParseSandboxKind("container"), SandboxKind::kContainer);
  EXPECT_STREQ(SandboxKindName(SandboxKind::kContainer), "container");
  EXPECT_FALSE(ParseSandboxKind("docker").ok());
  EXPECT_STREQ(SandboxKindName(SandboxKind::kBwrap), "bwrap");
}

// The argument after `flag` in args ("" when absent).
std::string After(const std::vector<std::string>& args, const std::string& flag) {
  auto it = std::find(args.begin(), args.end(), flag);
  return it == args.end() || it + 1 == args.end() ? "" : *(it + 1);
}

Sandbox ContainerSandbox(const std::string& dir) {
  Sandbox s;
  s.kind = SandboxKind::kContainer;
  s.container = {"podman", "localhost/fbkit/env-demo:0123"};
  s.read_only = {dir + "/agent", "/nonexistent-fbkit-path"};
  s.writable = {dir + "/scratch"};
  return s;
}

TEST(ContainerArgsTest, TheImageInPlaceOfTheHostAndEveryIsolationFlag) {
  testing::ScratchDir dir;
  for (const char* d : {"agent", "scratch"}) std::filesystem::create_directories(dir.path() + "/" + d);
  auto args = ContainerArgs(ContainerSandbox(dir.path()), "fbkit-1", dir.path() + "/agent",
                            {"/fbkit/python", "-m", "pytest"}, ContainerEnvironment({{"K", "v"}}), 2);
  ASSERT_TRUE(args.ok()) << args.error();
  const auto& a = *args;
  EXPECT_EQ(std::vector<std::string>(a.begin(), a.begin() + 3),
            (std::vector<std::string>{"podman", "run", "--rm"}));
  EXPECT_EQ(After(a, "--name"), "fbkit-1");
  EXPECT_EQ(After(a, "--network"), "none");
  EXPECT_EQ(After(a, "--user"), "65534:65534");
  for (const char* flag : {"--cap-drop=all", "--security-opt=no-new-privileges", "--read-only",
                           "--pull=never", "--memory=4096m", "--memory-swap=4096m",
                           "--pids-limit=512", "--preserve-fds=2", "--shm-size=1024m", "--log-driver=none"}) {
    EXPECT_NE(std::find(a.begin(), a.end(), flag), a.end()) << flag;
  }
  EXPECT_GE(Find(a, {"-v", dir.path() + "/agent:" + dir.path() + "/agent:ro"}), 0);
  EXPECT_GE(Find(a, {"-v", dir.path() + "/scratch:" + dir.path() + "/scratch:rw"}), 0);
  // A path the host does not have is no mount (bubblewrap's --ro-bind-try).
  EXPECT_EQ(std::find_if(a.begin(), a.end(),
                         [](const std::string& x) { return x.find("nonexistent-fbkit") != std::string::npos; }),
            a.end());
  EXPECT_GE(Find(a, {"--tmpfs", "/tmp:rw,notmpcopyup,size=1048576k,mode=1777"}), 0);
  EXPECT_GE(Find(a, {"--tmpfs", std::string(kContainerHome) + ":rw,notmpcopyup,size=1048576k,mode=1777"}), 0);
  EXPECT_GE(Find(a, {"--env", "K=v"}), 0);
  EXPECT_GE(Find(a, {"--workdir", dir.path() + "/agent"}), 0);
  // The image, the prelude (the file size limit: 1 GiB in 512-byte blocks), the command.
  EXPECT_EQ(std::vector<std::string>(a.end() - 8, a.end()),
            (std::vector<std::string>{"localhost/fbkit/env-demo:0123", "/bin/sh", "-c",
                                      "ulimit -f 2097152 || exit 125\nulimit -v 4194304 || exit 125\n\"$@\"\nexit $?\n",
                                      "fbkit-sandbox",
                                      "/fbkit/python", "-m", "pytest"}));
  EXPECT_EQ(std::find_if(a.begin(), a.end(), [](const std::string& x) { return x.starts_with("--ulimit"); }),
            a.end());  // the engine's configured limits stay
  Sandbox net = ContainerSandbox(dir.path());
  net.network = true;
  EXPECT_EQ(After(*ContainerArgs(net, "n", "", {"true"}, {}, 0), "--network"), "host");
}

TEST(ContainerArgsTest, APrivateCopyIsFilledInsideFromTheImagesBuiltFiles) {
  testing::ScratchDir dir;
  for (const char* d : {"agent", "scratch", "work/.git"}) {
    std::filesystem::create_directories(dir.path() + "/" + d);
  }
  Sandbox s = ContainerSandbox(dir.path());
  s.copies.push_back({dir.path() + "/work", "/testbed-copy", kImageSource, {}, kImageBuiltList});
  s.protect = {dir.path() + "/work/.git"};
  auto args = ContainerArgs(s, "c", "/testbed-copy", {"pytest"}, {}, 0, {1 << 20});
  ASSERT_TRUE(args.ok()) << args.error();
  const auto& a = *args;
  EXPECT_GE(Find(a, {"-v", dir.path() + "/work:/.fbkit-copy/0:ro"}), 0);
  EXPECT_GE(Find(a, {"-v", dir.path() + "/work/.git:" + dir.path() + "/work/.git:ro"}), 0);
  auto tmpfs = std::find(a.begin(), a.end(), "/testbed-copy:rw,notmpcopyup,size=10487936k,mode=1777");
  EXPECT_NE(tmpfs, a.end());
  auto image = std::find(a.begin(), a.end(), "localhost/fbkit/env-demo:0123");
  ASSERT_NE(image, a.end());
  ASSERT_GE(a.end() - image, 4);
  EXPECT_EQ(*(image + 1), "/bin/sh");
  EXPECT_NE((image + 3)->find("--verbatim-files-from -T '/fbkit/built-files.txt'"), std::string::npos);
  EXPECT_NE((image + 3)->find("cd '/testbed-copy'"), std::string::npos);
  EXPECT_TRUE((image + 3)->ends_with("\"$@\"\nexit $?\n"));  // the shell stays pid 1 and reaps
  EXPECT_EQ(a.back(), "pytest");
  EXPECT_EQ(std::find(a.begin(), a.end(), "--workdir"), a.end());  // the prelude enters it
}

TEST(ContainerArgsTest, APathTheEnginesSyntaxCannotCarryIsRefused) {
  testing::ScratchDir dir;
  std::filesystem::create_directories(dir.path() + "/a:b");
  Sandbox s = ContainerSandbox(dir.path());
  s.writable.push_back(dir.path() + "/a:b");
  auto args = ContainerArgs(s, "c", "", {"true"}, {}, 0);
  ASSERT_FALSE(args.ok());
  EXPECT_NE(args.error().find("a:b"), std::string::npos);
  Sandbox no_image = ContainerSandbox(dir.path());
  no_image.container.image.clear();
  EXPECT_FALSE(ContainerArgs(no_image, "c", "", {"true"}, {}, 0).ok());
}

TEST(ContainerArgsTest, TheEnvironmentHoldsNothingOfTheHosts) {
  ::setenv("FBKIT_TEST_TOKEN", "secret", 1);
  auto env = ContainerEnvironment({{"TZ", "UTC"}, {"HOME", "/elsewhere"}});
  ::unsetenv("FBKIT_TEST_TOKEN");
  for (const auto& kv : env) EXPECT_EQ(kv.find("secret"), std::string::npos) << kv;
  EXPECT_NE(std::find(env.begin(), env.end(), "TZ=UTC"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "HOME=/elsewhere"), env.end());
  EXPECT_EQ(std::count_if(env.begin(), env.end(), [](const std::string& kv) { return kv.starts_with("HOME="); }), 1);
  EXPECT_NE(std::find(env.begin(), env.end(), "GIT_CONFIG_VALUE_0=*"), env.end());
}

TEST(ContainerArgsTest, FbkitsSeccompFilterAsTheEnginesProfile) {
  testing::ScratchDir dir;
  for (const char* d : {"agent", "scratch"}) std::filesystem::create_directories(dir.path() + "/" + d);
  auto args = ContainerArgs(ContainerSandbox(dir.path()), "c", "", {"true"}, {}, 1, {}, "/proc/self/fd/4");
  ASSERT_TRUE(args.ok());
  EXPECT_NE(std::find(args->begin(), args->end(), "--security-opt=seccomp=/proc/self/fd/4"), args->end());
  std::string profile = SeccompProfileJson();
  if (profile.empty()) GTEST_SKIP() << "no filter for this architecture";
  auto j = nlohmann::json::parse(profile);
  EXPECT_EQ(j["defaultAction"], "SCMP_ACT_ALLOW");
  std::set<std::string> refused;
  for (const auto& rule : j["syscalls"]) {
    for (const auto& n : rule["names"]) {
      if (!rule.contains("args")) refused.insert(n.get<std::string>());
    }
  }
  for (const char* call : {"unshare", "setns", "mount", "ptrace", "process_vm_readv", "keyctl", "bpf", "clone3"}) {
    EXPECT_TRUE(refused.contains(call)) << call;
  }
  size_t clone_rules = 0;
  for (const auto& rule : j["syscalls"]) clone_rules += rule["names"][0] == "clone" && rule.contains("args");
  EXPECT_EQ(clone_rules, 7u);  // one per namespace flag
}

TEST(ContainerArgsTest, OnlyPodmanCanHandInTheChannels) {
  EXPECT_FALSE(CheckContainerEngine("fbkit-no-such-engine").ok());
  EXPECT_NE(CheckContainerEngine("true").error().find("podman"), std::string::npos);
}

}  // namespace
}  // namespace fbkit::sandbox

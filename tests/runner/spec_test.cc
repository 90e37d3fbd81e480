#include "runner/spec.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>

#include "tests/testing/run.h"
#include "util/env.h"

namespace fbkit::runner {
namespace {

TEST(RepoSpecTest, ReadsEveryField) {
  auto spec = ParseRepoSpec(R"(
repo = "pallets/click"
python = "/usr/bin/python3"
pythonpath = ["src", "/opt/meta"]
pytest_args = ["-m", "not stress"]
tests = ["tests"]
exclude = ["docs", "examples"]
timeout = 120.5
total_timeout = 3600
install = ["$PYTHON -m venv $FBKIT_ENV"]
install_inputs = ["requirements/tests.txt"]
network = true
sandbox = "none"
image_name = "fbkit/click:latest"

[env]
ZED = "1"
ALPHA = "two words"

[limits]
memory_mb = 2048
processes = 100
file_size_mb = 10
)",
                            "fbkit.toml");
  ASSERT_TRUE(spec.ok()) << spec.error();
  EXPECT_EQ(spec->repo, "pallets/click");
  EXPECT_EQ(spec->python, "/usr/bin/python3");
  EXPECT_EQ(spec->pythonpath, (std::vector<std::string>{"src", "/opt/meta"}));
  EXPECT_EQ(spec->pytest_args, (std::vector<std::string>{"-m", "not stress"}));
  EXPECT_EQ(spec->exclude.size(), 2u);
  EXPECT_DOUBLE_EQ(spec->timeout, 120.5);
  EXPECT_DOUBLE_EQ(spec->total_timeout, 3600);
  EXPECT_TRUE(spec->network);
  EXPECT_EQ(spec->sandbox, sandbox::SandboxKind::kNone);
  EXPECT_EQ(spec->vars, (std::vector<std::pair<std::string, std::string>>{{"ALPHA", "two words"},
                                                                         {"ZED", "1"}}));
  EXPECT_EQ(spec->limits.memory_mb, 2048);
  EXPECT_EQ(spec->limits.processes, 100);
  EXPECT_EQ(spec->limits.file_size_mb, 10);
  EXPECT_EQ(spec->image_name, "fbkit/click:latest");
}

TEST(RepoSpecTest, EmptyFileGivesTheDefaults) {
  auto spec = ParseRepoSpec("", "f.toml");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->python, "python3");
  EXPECT_EQ(spec->sandbox, sandbox::SandboxKind::kBwrap);
  EXPECT_FALSE(spec->network);
  EXPECT_DOUBLE_EQ(spec->timeout, 600);
  EXPECT_EQ(spec->limits.processes, 512);
}

TEST(RepoSpecTest, ErrorsNameFileLineAndKey) {
  auto unknown = ParseRepoSpec("repo = \"a/b\"\n\npythn = \"x\"\n", "s.toml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().substr(0, 29), "s.toml:3: unknown key 'pythn'");
  auto type = ParseRepoSpec("[limits]\nmemory_mb = 1.5\n", "s.toml");
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(type.error(), "s.toml:2: key 'limits.memory_mb' must be a whole number");
  for (const char* name : {"\"-S\"", "\"A=B\"", "\"1X\"", "\"A B\""}) {
    auto bad = ParseRepoSpec(std::string("[env]\nOK = \"1\"\n") + name + " = \"x\"\n", "s.toml");
    ASSERT_FALSE(bad.ok()) << name;
    EXPECT_EQ(bad.error().substr(0, 9), "s.toml:3:") << bad.error();
    EXPECT_NE(bad.error().find("not a variable name"), std::string::npos) << bad.error();
  }
  EXPECT_TRUE(ParseRepoSpec("[env]\n_A1 = \"x\"\nLD_LIBRARY_PATH = \"/x\"\n", "s.toml").ok());
  // Task directories are named from `repo` (red team round 3: "a/../../../tmp/x" wrote a
  // task outside -o).
  for (const char* repo : {"a/../../../tmp/x", "a", "a/b/c", "./b", "a/..", "a/ b"}) {
    auto bad = ParseRepoSpec("\nrepo = \"" + std::string(repo) + "\"\n", "s.toml");
    ASSERT_FALSE(bad.ok()) << repo;
    EXPECT_EQ(bad.error().substr(0, 31), "s.toml:2: key 'repo': not owner") << bad.error();
  }
  EXPECT_FALSE(RepoSpecFromJson(R"({"repo": "../../x"})").ok());
  EXPECT_TRUE(ParseRepoSpec("repo = \"sphinx-doc/sphinx.py_2\"\n", "s.toml").ok());
  auto syntax = ParseRepoSpec("repo = \n", "s.toml");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.error().substr(0, 9), "s.toml:1:");
}

// The variables that tell fbkit's plugin what to check and where to write are fbkit's: a spec
// naming one is an error naming the key (file and line); a task's spec read back drops it.
TEST(RepoSpecTest, ASpecCannotSetTheGradersOwnVariables) {
  for (const char* name : {"FBKIT_TRACE_CHECKS", "FBKIT_TRACE_ROOT", "FBKIT_PROBE_OUT"}) {
    auto bad = ParseRepoSpec(std::string("[env]\nA = \"1\"\n") + name + " = \"0\"\n", "s.toml");
    ASSERT_FALSE(bad.ok()) << name;
    EXPECT_EQ(bad.error().substr(0, 9), "s.toml:3:") << bad.error();
    EXPECT_NE(bad.error().find(std::string("key 'env.") + name + "'"), std::string::npos)
        << bad.error();
    EXPECT_NE(bad.error().find("fbkit's own"), std::string::npos) << bad.error();
  }
  EXPECT_TRUE(ParseRepoSpec("[env]\nFBKIT_OTHER = \"1\"\n", "s.toml").ok());
  auto back = RepoSpecFromJson(
      R"({"python":"py","env":{"A":"1","FBKIT_TRACE_CHECKS":"0","FBKIT_PROBE_X":"y"}})");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->vars, (std::vector<std::pair<std::string, std::string>>{{"A", "1"}}));
}

TEST(RepoSpecTest, JsonRoundTripKeepsWhatTasksNeedAndLeavesOutTheSandbox) {
  auto spec = ParseRepoSpec(
      "python = \"py\"\npythonpath = [\"src\"]\ninstall = [\"x\"]\nnetwork = true\n"
      "sandbox = \"none\"\n[env]\nA = \"b\"\n[limits]\nprocesses = 7\n",
      "s.toml");
  ASSERT_TRUE(spec.ok());
  std::string text = RepoSpecJson(*spec);
  EXPECT_EQ(text.find("sandbox"), std::string::npos);
  auto back = RepoSpecFromJson(text);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(RepoSpecJson(*back), text);
  EXPECT_EQ(back->sandbox, sandbox::SandboxKind::kBwrap);  // the runner's choice, not the task's
  EXPECT_EQ(back->limits.processes, 7);
  // Older tasks recorded four fields; the rest take their defaults.
  auto old = RepoSpecFromJson(R"({"pytest_args":[],"python":"/usr/bin/python3","pythonpath":["src"],"timeout":600})");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->python, "/usr/bin/python3");
  EXPECT_TRUE(old->install.empty());
}

}  // namespace
}  // namespace fbkit::runner

namespace fbkit::runner {
namespace {

// A spec inside the repository is the repository's: it may not widen what the repository's
// own code reaches. The same text outside the repository is the user's.
TEST(RepoSpecTest, ASpecInsideTheRepositoryMayNotWidenTheSandbox) {
  testing::ScratchDir scratch;
  const std::string& dir = scratch.path();
  util::Env& env = util::RealEnv();
  ASSERT_TRUE(env.MakeDirs(dir + "/repo").ok());
  const std::string wide =
      "python = \"/home/ada/bin/python3\"\npythonpath = [\"src\", \"/home\"]\nnetwork = true\n"
      "sandbox = \"none\"\n[limits]\nmemory_mb = 999999\n";
  ASSERT_TRUE(env.WriteFileAtomic(dir + "/repo/fbkit.toml", wide).ok());
  auto inside = LoadRepoSpec(env, "", dir + "/repo");
  ASSERT_FALSE(inside.ok());
  EXPECT_NE(inside.error().find("fbkit.toml: a spec inside the repository may not set python, "
                                "absolute pythonpath entries, network, sandbox, limits above "
                                "the defaults"),
            std::string::npos) << inside.error();
  EXPECT_FALSE(LoadRepoSpec(env, dir + "/repo/fbkit.toml", dir + "/repo").ok());  // named too
  ASSERT_TRUE(env.WriteFileAtomic(dir + "/user.toml", wide).ok());
  auto outside = LoadRepoSpec(env, dir + "/user.toml", dir + "/repo");
  EXPECT_TRUE(outside.ok()) << outside.error();
  // What stays within the repository's own reach is allowed inside it.
  ASSERT_TRUE(env.WriteFileAtomic(dir + "/repo/fbkit.toml",
                                  "pythonpath = [\"src\"]\n[limits]\nmemory_mb = 1024\n").ok());
  EXPECT_TRUE(LoadRepoSpec(env, "", dir + "/repo").ok());
  // The repository's fbkit.toml linking to a file outside it (red team round 4: another
  // repository's install steps wrote it into the cache) is the repository's all the same.
  std::filesystem::remove(dir + "/repo/fbkit.toml");
  std::filesystem::create_symlink(dir + "/user.toml", dir + "/repo/fbkit.toml");
  EXPECT_FALSE(LoadRepoSpec(env, "", dir + "/repo").ok());
  // Unless the user says the spec is theirs (--trust-spec).
  std::filesystem::remove(dir + "/repo/fbkit.toml");
  ASSERT_TRUE(env.WriteFileAtomic(dir + "/repo/fbkit.toml", wide).ok());
  auto trusted = LoadRepoSpec(env, "", dir + "/repo", true);
  ASSERT_TRUE(trusted.ok()) << trusted.error();
  EXPECT_TRUE(trusted->network);
}

// Installing from PyPI needs the network, the tests rarely do: each has its own switch. The
// install steps' network widens a repository's own spec, not a task's recorded settings
// (the environment is built from the task's tree, never from code under evaluation).
TEST(RepoSpecTest, InstallStepsHaveTheirOwnNetworkSwitch) {
  auto spec = ParseRepoSpec("install = ['pip install x']\ninstall_network = true\n", "s.toml");
  ASSERT_TRUE(spec.ok()) << spec.error();
  EXPECT_TRUE(spec->install_network);
  EXPECT_FALSE(spec->network);
  EXPECT_TRUE(InstallNetwork(*spec));
  EXPECT_EQ(Widening(*spec), "install_network");
  EXPECT_EQ(Widening(*spec, WideningRules::kTaskSettings), "");
  auto back = RepoSpecFromJson(RepoSpecJson(*spec));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_TRUE(back->install_network);
  EXPECT_FALSE(back->network);
  // The tests' network implies the install steps', and is widening everywhere.
  spec->network = true;
  EXPECT_EQ(Widening(*spec, WideningRules::kTaskSettings), "network");
  EXPECT_EQ(Widening(*spec), "network");
  // A spec without it writes what it wrote before (tasks stay byte-identical).
  EXPECT_EQ(RepoSpecJson(RepoSpec{}).find("install_network"), std::string::npos);
  auto bad = ParseRepoSpec("install_network = 1\n", "s.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "s.toml:1: key 'install_network' must be true or false");
}

// The repository's spec is read as a file of its tree (red team round 5, H6): a link to
// /dev/zero would have fbkit read until the host's memory ran out, and a FIFO would block it.
TEST(RepoSpecTest, TheRepositorysSpecIsReadAsAFileOfItsTreeNeverADeviceOrPipe) {
  testing::ScratchDir scratch;
  const std::string repo = scratch.path() + "/repo";
  std::filesystem::create_directories(repo);
  util::Env& env = util::RealEnv();
  std::filesystem::create_symlink("/dev/zero", repo + "/fbkit.toml");
  auto zero = LoadRepoSpec(env, "", repo);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().find(repo + "/fbkit.toml: cannot open"), std::string::npos)
      << zero.error();
  EXPECT_FALSE(LoadRepoSpec(env, repo + "/fbkit.toml", repo).ok());  // named, the same
  std::filesystem::remove(repo + "/fbkit.toml");
  ASSERT_EQ(::mkfifo((repo + "/fbkit.toml").c_str(), 0600), 0);
  auto fifo = LoadRepoSpec(env, "", repo);  // returns: nothing writes the FIFO
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.error().find("not a regular file"), std::string::npos) << fifo.error();
}

}  // namespace
}  // namespace fbkit::runner

namespace fbkit::runner {
namespace {

// What widens the sandbox is judged as the sandbox will see it (red team round 5): an
// interpreter path through '..' leaves the system's directories whatever its text starts
// with, and a limit of 0 is no limit.
TEST(RepoSpecTest, WideningSeesThroughDotsAndZeroLimits) {
  RepoSpec s;
  s.python = "/usr/bin/python3";
  EXPECT_EQ(Widening(s, WideningRules::kTaskSettings), "");
  EXPECT_EQ(Widening(s), "python");
  s.python = "/bin/../../home/someone/bin/python";
  EXPECT_EQ(Widening(s, WideningRules::kTaskSettings), "python");
  s.python = "python3";
  s.limits.processes = 0;
  EXPECT_EQ(Widening(s, WideningRules::kTaskSettings), "limits above the defaults");
  s.limits = sandbox::Limits{};
  s.timeout = 0;
  EXPECT_EQ(Widening(s, WideningRules::kTaskSettings), "no timeout");
}

}  // namespace
}  // namespace fbkit::runner

// The environment cache (runner/environment.h) over a FakeLauncher: what its key depends on,
// that an environment is built once and reused, and that a failing install step is named
// with its output.
#include "runner/environment.h"

#include "runner/confine.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "tests/testing/fake_launcher.h"
#include "tests/testing/run.h"

namespace fbkit::runner {
namespace {

using testing::FakeLauncher;
using testing::ScratchDir;
using testing::ReadFileOrDie;
using testing::WriteFileOrDie;

class EnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() + "/repo";
    std::filesystem::create_directories(root_ + "/deps");
    WriteFileOrDie(root_ + "/pyproject.toml", "[project]\nname = 'x'\n");
    WriteFileOrDie(root_ + "/README.md", "x\n");
    WriteFileOrDie(root_ + "/deps/pins.txt", "a==1\n");
    spec_.python = "/usr/bin/python3";
    spec_.install = {"$PYTHON -m venv $FBKIT_ENV", "pip install -e ."};
  }

  std::string Key() {
    auto key = EnvironmentKey(util::RealEnv(), spec_, root_);
    EXPECT_TRUE(key.ok()) << key.error();
    return key.ok() ? *key : "";
  }

  ScratchDir tmp_;
  std::string root_;
  RepoSpec spec_;
};

TEST_F(EnvironmentTest, TheKeyFollowsWhatTheEnvironmentIsBuiltFrom) {
  std::string k0 = Key();
  EXPECT_EQ(k0.size(), 16u);
  EXPECT_EQ(Key(), k0);
  WriteFileOrDie(root_ + "/deps/pins.txt", "a==2\n");
  std::string k1 = Key();
  EXPECT_NE(k1, k0) << "a file the install steps see";
  spec_.install_inputs = {"deps"};
  std::string k2 = Key();
  EXPECT_NE(k2, k1) << "an install input";
  WriteFileOrDie(root_ + "/requirements-dev.txt", "pytest\n");
  std::string k3 = Key();
  EXPECT_NE(k3, k2) << "a requirements file";
  WriteFileOrDie(root_ + "/pyproject.toml", "[project]\nname = 'y'\n");
  std::string k4 = Key();
  EXPECT_NE(k4, k3) << "pyproject.toml";
  spec_.install.push_back("pip install pytest");
  std::string k5 = Key();
  EXPECT_NE(k5, k4) << "the install steps";
  spec_.network = true;
  EXPECT_NE(Key(), k5) << "network";
}

// The install steps run the repository's code with the entry writable: two repositories
// that share a spec and every dependency file still never share an entry (red team round
// 4: one's version module left a .pth in the venv that the other's tests then imported).
// The caches a test run leaves are not part of what the steps see.
TEST_F(EnvironmentTest, AnEntryIsReusedOnlyByTheTreeItWasBuiltFrom) {
  std::string other = tmp_.path() + "/other";
  std::filesystem::copy(root_, other, std::filesystem::copy_options::recursive);
  std::string mine = Key();
  auto theirs = EnvironmentKey(util::RealEnv(), spec_, other);
  ASSERT_TRUE(theirs.ok()) << theirs.error();
  EXPECT_EQ(*theirs, mine) << "the same files";
  std::filesystem::create_directories(other + "/x");
  WriteFileOrDie(other + "/x/_version.py", "open('poison.pth', 'w')\n");
  theirs = EnvironmentKey(util::RealEnv(), spec_, other);
  ASSERT_TRUE(theirs.ok()) << theirs.error();
  EXPECT_NE(*theirs, mine) << "a module no dependency file names";
  auto same = SameDependencies(util::RealEnv(), spec_, root_, other);
  ASSERT_TRUE(same.ok()) << same.error();
  EXPECT_TRUE(*same) << "they declare the same dependencies";
  WriteFileOrDie(other + "/requirements.txt", "b\n");
  same = SameDependencies(util::RealEnv(), spec_, root_, other);
  ASSERT_TRUE(same.ok()) << same.error();
  EXPECT_FALSE(*same);
  std::filesystem::create_directories(root_ + "/x/__pycache__");
  std::filesystem::create_directories(root_ + "/.pytest_cache/v/cache");
  WriteFileOrDie(root_ + "/x/__pycache__/m.cpython-311.pyc", "cache");
  WriteFileOrDie(root_ + "/.pytest_cache/v/cache/lastfailed", "{}");
  EXPECT_EQ(Key(), mine) << "what a test run leaves";
}

// An install input reached through a link (a directory linked into the tree) names its
// files where they resolve: keying reads them (a read through the link would be refused) and
// follows their contents.
TEST_F(EnvironmentTest, AnInstallInputThroughALinkKeysByItsTarget) {
  std::filesystem::create_directory_symlink("deps", root_ + "/pins");
  spec_.install_inputs = {"pins"};
  auto linked = EnvironmentKey(util::RealEnv(), spec_, root_);
  ASSERT_TRUE(linked.ok()) << linked.error();
  WriteFileOrDie(root_ + "/deps/pins.txt", "a==3\n");
  auto changed = EnvironmentKey(util::RealEnv(), spec_, root_);
  ASSERT_TRUE(changed.ok()) << changed.error();
  EXPECT_NE(*changed, *linked) << "the target's contents key it";
  spec_.install_inputs = {"./deps"};
  auto dotted = EnvironmentKey(util::RealEnv(), spec_, root_);
  ASSERT_TRUE(dotted.ok()) << dotted.error();
}

// Dependency files are the repository's: a link to a device that never ends or a FIFO that
// never opens keys the environment by what it is, without reading it.
TEST_F(EnvironmentTest, TheKeyReadsNoLinkNorFifo) {
  std::filesystem::create_symlink("/dev/zero", root_ + "/setup.cfg");
  ASSERT_EQ(::mkfifo((root_ + "/requirements-dev.txt").c_str(), 0644), 0);
  std::string key = Key();
  EXPECT_EQ(key.size(), 16u);
  std::filesystem::remove(root_ + "/setup.cfg");
  EXPECT_NE(Key(), key);
}

TEST_F(EnvironmentTest, BuiltOnceThenReusedFromTheCache) {
  FakeLauncher launcher([](const sandbox::ProcessSpec& p) -> std::optional<FakeLauncher::Outcome> {
    bool check = p.argv.size() > 2 && p.argv[1] == "-m" && p.argv[2] == "pytest";
    return FakeLauncher::Exit(0, check ? "t.py::a\n\n3 tests collected in 0.1s\n" : "");
  });
  std::string cache = tmp_.path() + "/cache";
  auto first = EnsureEnvironment(util::RealEnv(), launcher, {spec_, root_, cache, nullptr});
  ASSERT_TRUE(first.ok()) << first.error();
  EXPECT_FALSE(first->reused);
  EXPECT_EQ(first->key, Key());
  EXPECT_EQ(first->dir, cache + "/" + Key());
  EXPECT_EQ(first->collected, "3 tests collected in 0.1s");
  EXPECT_EQ(first->python, "/usr/bin/python3") << "no venv was made: the spec's interpreter";
  auto specs = launcher.answered();
  ASSERT_EQ(specs.size(), 3u);  // two steps, the pytest check
  EXPECT_EQ(specs[0].argv, (std::vector<std::string>{"/bin/sh", "-c", spec_.install[0]}));
  EXPECT_EQ(specs[0].cwd, first->dir + "/src");
  EXPECT_EQ(specs[0].sandbox.writable, (std::vector<std::string>{first->dir}));
  // The check runs the repository's conftest files, which no key covers: the environment is
  // read-only to it (red team round 3: a conftest's .pth reached every repository of the
  // key), and what it writes into its tree goes to a private copy of src/.
  EXPECT_TRUE(specs[2].sandbox.writable.empty());
  EXPECT_NE(std::find(specs[2].sandbox.read_only.begin(), specs[2].sandbox.read_only.end(),
                      first->dir + "/env"),
            specs[2].sandbox.read_only.end());
  ASSERT_EQ(specs[2].sandbox.copies.size(), 1u);
  EXPECT_EQ(specs[2].sandbox.copies[0].source, first->dir + "/src");
  EXPECT_EQ(specs[2].sandbox.copies[0].target, first->dir + "/src");
  EXPECT_EQ(ReadFileOrDie(first->dir + "/src/deps/pins.txt"), "a==1\n");
  auto again = EnsureEnvironment(util::RealEnv(), launcher, {spec_, root_, cache, nullptr});
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_TRUE(again->reused);
  EXPECT_EQ(again->collected, first->collected);
  EXPECT_EQ(launcher.answered().size(), 3u) << "the cached environment was built again";
}

// A built environment's bin/python is a link its install steps wrote: what it resolves to on
// the host is never bound into the sandbox (red team round 3: a link through /proc/2/cwd
// bound the host's /home read-only into every later run).
TEST_F(EnvironmentTest, NothingTheBuiltInterpreterLinksToIsBound) {
  std::string elsewhere = tmp_.path() + "/elsewhere";
  std::filesystem::create_directories(elsewhere + "/bin");
  WriteFileOrDie(elsewhere + "/bin/python", "#!/bin/sh\n");
  ::chmod((elsewhere + "/bin/python").c_str(), 0755);
  const std::string step = spec_.install[0];
  FakeLauncher launcher([&](const sandbox::ProcessSpec& p) -> std::optional<FakeLauncher::Outcome> {
    if (p.argv.size() == 3 && p.argv[2] == step) {
      std::string bin = p.cwd.substr(0, p.cwd.rfind('/')) + "/env/bin";
      std::filesystem::create_directories(bin);
      std::filesystem::create_symlink(elsewhere + "/bin/python", bin + "/python");
    }
    bool check = p.argv.size() > 2 && p.argv[1] == "-m" && p.argv[2] == "pytest";
    return FakeLauncher::Exit(0, check ? "t.py::a\n\n1 test collected in 0.1s\n" : "");
  });
  spec_.sandbox = sandbox::SandboxKind::kNone;
  spec_.environment_cache = tmp_.path() + "/cache";
  auto c = Confine(util::RealEnv(), launcher, spec_, {root_, "", tmp_.path() + "/work", "", ""});
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->python, spec_.environment_cache + "/" + Key() + "/env/bin/python");
  for (const auto& dir : c->sandbox.read_only) {
    EXPECT_FALSE(dir.starts_with(elsewhere)) << dir << " is bound";
  }
}

// An evaluation's environment comes from the task's tree, not the patched copy the tests run
// in: a patch adding a requirements file chooses nothing the grader installs.
TEST_F(EnvironmentTest, TheEnvironmentComesFromTheTreeItIsAskedFrom) {
  FakeLauncher launcher([](const sandbox::ProcessSpec& p) -> std::optional<FakeLauncher::Outcome> {
    bool check = p.argv.size() > 2 && p.argv[1] == "-m" && p.argv[2] == "pytest";
    return FakeLauncher::Exit(0, check ? "t.py::a\n\n1 test collected in 0.1s\n" : "");
  });
  std::string patched = tmp_.path() + "/patched";
  std::filesystem::copy(root_, patched, std::filesystem::copy_options::recursive);
  WriteFileOrDie(patched + "/requirements-more.txt", "pytest-always-passes\n");
  spec_.sandbox = sandbox::SandboxKind::kNone;
  spec_.environment_cache = tmp_.path() + "/cache";
  auto c = Confine(util::RealEnv(), launcher, spec_,
                   {patched, "", tmp_.path() + "/work", "", root_});
  ASSERT_TRUE(c.ok()) << c.error();
  auto steps = launcher.answered();
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps[0].cwd, spec_.environment_cache + "/" + Key() + "/src");
  EXPECT_FALSE(std::filesystem::exists(steps[0].cwd + "/requirements-more.txt"));
}

// The copy the install steps work in is made on the host: a hard link a repository handed
// over as a directory holds (to any file of the host's) and a FIFO are left out, a link
// stays a link, .git is not copied: the copy's .git is a file naming ROOT's (git answers
// there as in the user's checkout, read-only).
TEST_F(EnvironmentTest, TheCopyTakesNoHardLinkNorFifo) {
  WriteFileOrDie(tmp_.path() + "/host-secret", "secret\n");
  std::filesystem::create_hard_link(tmp_.path() + "/host-secret", root_ + "/stolen");
  ASSERT_EQ(::mkfifo((root_ + "/fifo").c_str(), 0600), 0);
  std::filesystem::create_symlink("README.md", root_ + "/link");
  std::filesystem::create_directories(root_ + "/.git");
  WriteFileOrDie(root_ + "/.git/config", "[core]\n");
  FakeLauncher launcher([](const sandbox::ProcessSpec& p) -> std::optional<FakeLauncher::Outcome> {
    bool check = p.argv.size() > 2 && p.argv[1] == "-m" && p.argv[2] == "pytest";
    return FakeLauncher::Exit(0, check ? "t.py::a\n\n1 test collected in 0.1s\n" : "");
  });
  auto built = EnsureEnvironment(util::RealEnv(), launcher, {spec_, root_, tmp_.path() + "/c", nullptr});
  ASSERT_TRUE(built.ok()) << built.error();
  const std::string src = built->dir + "/src";
  EXPECT_TRUE(std::filesystem::exists(src + "/README.md"));
  EXPECT_TRUE(std::filesystem::is_symlink(src + "/link"));
  EXPECT_FALSE(std::filesystem::exists(src + "/stolen"));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(src + "/fifo")));
  EXPECT_FALSE(std::filesystem::exists(src + "/.git/config"));
  EXPECT_EQ(ReadFileOrDie(src + "/.git"), "gitdir: " + root_ + "/.git\n");
}

TEST_F(EnvironmentTest, AFailingStepIsNamedWithItsOutput) {
  FakeLauncher launcher([](const sandbox::ProcessSpec& p) -> std::optional<FakeLauncher::Outcome> {
    bool pip = p.argv.size() == 3 && p.argv[2] == "pip install -e .";
    return FakeLauncher::Exit(pip ? 1 : 0, pip ? "ERROR: No matching distribution for x\n" : "");
  });
  auto built = EnsureEnvironment(util::RealEnv(), launcher,
                                 {spec_, root_, tmp_.path() + "/cache", nullptr});
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.error().find("install step 2 (pip install -e .) exited with 1"),
            std::string::npos)
      << built.error();
  EXPECT_NE(built.error().find("No matching distribution for x"), std::string::npos)
      << built.error();
  EXPECT_EQ(launcher.answered().size(), 2u) << "the check ran after a failed step";
}

// A failed build keeps what its finished steps made: the next build of the same key goes on
// after them and says so; --rebuild starts from nothing.
TEST_F(EnvironmentTest, AFailedBuildGoesOnAfterTheStepsItFinished) {
  bool fail = true;
  FakeLauncher launcher([&](const sandbox::ProcessSpec& p) -> std::optional<FakeLauncher::Outcome> {
    bool pip = p.argv.size() == 3 && p.argv[2] == "pip install -e .";
    return FakeLauncher::Exit(pip && fail ? 1 : 0, "");
  });
  std::vector<std::string> said;
  EnvRequest request{spec_, root_, tmp_.path() + "/cache",
                     [&](const std::string& line) { said.push_back(line); }};
  ASSERT_FALSE(EnsureEnvironment(util::RealEnv(), launcher, request).ok());
  fail = false;
  said.clear();
  auto built = EnsureEnvironment(util::RealEnv(), launcher, request);
  ASSERT_TRUE(built.ok()) << built.error();
  auto argv = [&](size_t i) { return launcher.answered().at(i).argv; };
  ASSERT_EQ(launcher.answered().size(), 4u);  // step 1, step 2 failing, step 2, the check
  EXPECT_EQ(argv(2).back(), "pip install -e .");
  EXPECT_EQ(argv(3).at(1), "-m");
  ASSERT_FALSE(said.empty());
  EXPECT_NE(said[0].find("install steps 1-1 reused from an earlier build that failed"),
            std::string::npos) << said[0];
  request.rebuild = true;
  ASSERT_TRUE(EnsureEnvironment(util::RealEnv(), launcher, request).ok());
  ASSERT_EQ(launcher.answered().size(), 7u) << "a rebuild runs every step again";
  EXPECT_EQ(argv(4).back(), "$PYTHON -m venv $FBKIT_ENV");
}

// A test file that fails to collect is left out, named; the rest of the suite goes on. A
// collection that finds nothing at all still fails the check.
TEST_F(EnvironmentTest, AFileThatFailsToCollectIsListedNotFatal) {
  std::string summary = "1 test collected, 1 error in 0.02s";
  FakeLauncher launcher([&](const sandbox::ProcessSpec& p) -> std::optional<FakeLauncher::Outcome> {
    if (std::find(p.argv.begin(), p.argv.end(), "--collect-only") == p.argv.end()) {
      return FakeLauncher::Exit(0, "");
    }
    return FakeLauncher::Exit(1, "tests/test_a.py::test_a\n\n= short test summary info =\n"
                                 "ERROR tests/test_c.py - ImportError: x\nERROR tests/test_b.py\n" +
                                     summary + "\n");
  });
  EnvRequest request{spec_, root_, tmp_.path() + "/cache", nullptr};
  auto built = EnsureEnvironment(util::RealEnv(), launcher, request);
  ASSERT_TRUE(built.ok()) << built.error();
  EXPECT_EQ(built->collect_errors, (std::vector<std::string>{"tests/test_b.py", "tests/test_c.py"}));
  auto again = EnsureEnvironment(util::RealEnv(), launcher, request);  // from the cache
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_TRUE(again->reused);
  EXPECT_EQ(again->collect_errors, built->collect_errors);
  summary = "no tests collected, 2 errors in 0.02s";
  request.rebuild = true;
  auto none = EnsureEnvironment(util::RealEnv(), launcher, request);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("the pytest check (collect-only) exited with 1"), std::string::npos)
      << none.error();
}

}  // namespace
}  // namespace fbkit::runner

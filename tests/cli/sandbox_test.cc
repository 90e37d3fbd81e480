// End-to-end: the sandbox around repository and agent code, the repo spec and the
// environments its install steps build, with the real binaries. A hostile test suite
// (fixtures/sandbox_hostile) and hostile agent patches (tests/cli/hostile_patches.py) attack
// the host; each attack must fail inside and leave no trace outside.
#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "tests/testing/e2e.h"
#include "tests/testing/run.h"

namespace fbkit::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;


// Every file and directory below `root` with its size, mode and contents: equal before and
// after means nothing was written, removed or added.
std::string TreeState(const std::string& root) {
  std::map<std::string, std::string> entries;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::end(it); ++it) {
    std::string rel = fs::relative(it->path(), root);
    auto status = fs::symlink_status(it->path());
    std::string what = std::to_string(static_cast<int>(status.permissions()));
    if (fs::is_regular_file(status)) what += ":" + ReadFileOrDie(it->path());
    entries[rel] = what;
  }
  std::string out;
  for (const auto& [k, v] : entries) out += k + "\n" + v + "\n";
  return out;
}

// A TCP listener of the host on loopback; Accepted() tells whether anything connected.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len);
    ::listen(fd_, 16);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { ::close(fd_); }
  int port() const { return port_; }
  bool Accepted() const {
    int c = ::accept(fd_, nullptr, nullptr);
    if (c >= 0) ::close(c);
    return c >= 0;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// The host side every attack targets: a directory outside the run, a home with a secret.
struct Host {
  ScratchDir dir;
  std::string outside = dir / "outside";
  std::string home = dir / "home";
  Host() {
    fs::create_directories(outside);
    fs::create_directories(home);
    WriteFileOrDie(home + "/secret.txt", "TOP-SECRET-fbkit");
  }
  // argv run with HOME pointing at the planted home and a credential in the environment.
  std::vector<std::string> Env(std::vector<std::string> argv) const {
    std::vector<std::string> out = {"/usr/bin/env", "HOME=" + home, "XDG_CACHE_HOME=" + dir / "cache",
                                    "FBKIT_HOSTILE_TOKEN=tok-123"};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }
  void ExpectUntouched() const {
    EXPECT_TRUE(fs::is_empty(outside)) << "something escaped into " << outside;
    EXPECT_FALSE(fs::exists("/etc/fbkit-escaped.txt"));
  }
};

// Processes of this machine whose command line is `command` (arguments joined by spaces).
int ProcessesRunning(const std::string& command) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "cmdline");
    std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(line.begin(), line.end(), '\0', ' ');
    n += line == command + " ";
  }
  return n;
}

const json* File(const json& trace, const std::string& name) {
  for (const auto& f : trace["files"]) {
    if (f["file"] == name) return &f;
  }
  return nullptr;
}

// The hostile suite traced by fbkit running as root (as in most containers), or, with
// `as_user`, as an ordinary user (nobody, through setpriv), to whom the host directories it
// attacks are writable and readable: only the sandbox stands in the way.
void TraceHostileSuite(bool as_user) {
  NobodyLock lock;
  Host host;
  ScratchDir tmp;
  std::string root = tmp / "repo";
  fs::copy(Fixture("sandbox_hostile"), root, fs::copy_options::recursive);
  std::vector<std::string> prefix;
  if (as_user) {
    for (const std::string& d : {tmp.path(), host.dir.path(), host.outside, host.home}) {
      fs::permissions(d, fs::perms::all);
    }
    fs::create_directories(host.dir / "cache");
    fs::permissions(host.dir / "cache", fs::perms::all);
    prefix = kAsNobody;
  }
  std::string before = TreeState(root);
  Listener listener;
  std::vector<std::string> argv = host.Env(
      {kBinary, "trace", root, "--python", kPython, "--details", "-q", "-o", tmp / "trace.json",
       "--env", "FBKIT_HOSTILE_OUT=" + host.outside, "--env", "FBKIT_HOSTILE_HOME=" + host.home,
       "--env", "FBKIT_HOSTILE_PORT=" + std::to_string(listener.port())});
  argv.insert(argv.begin(), prefix.begin(), prefix.end());
  RunResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 3) << r.err;  // the hang timed out: a problem file, named
  json trace = json::parse(ReadFileOrDie(tmp / "trace.json"));
  const json* escape = File(trace, "tests/test_escape.py");
  ASSERT_NE(escape, nullptr);
  ASSERT_EQ(escape->at("tests").size(), 8u);
  for (const auto& t : escape->at("tests")) {
    EXPECT_EQ(t["outcome"], "passed") << t["nodeid"] << ": " << t["message"];
  }
  const json* hang = File(trace, "tests/test_hang.py");
  const json* ok = File(trace, "tests/test_ok.py");
  ASSERT_TRUE(hang && ok) << trace.dump(1);
  EXPECT_EQ(hang->at("status"), "timeout");
  // kill(-1) and killing its own group end that session only; the last file still runs.
  ASSERT_EQ(ok->at("tests").size(), 1u) << ok->dump(1);
  EXPECT_EQ(ok->at("tests")[0]["outcome"], "passed");
  EXPECT_EQ(TreeState(root), before) << "the tests changed the repository";
  EXPECT_FALSE(listener.Accepted());
  host.ExpectUntouched();
}

TEST(SandboxE2E, HostileTestSuiteIsContainedAndTheCheckoutUntouched) { TraceHostileSuite(false); }

TEST(SandboxE2E, AsAnOrdinaryUserTheHostileSuiteIsContainedToo) {
  if (::geteuid() != 0) GTEST_SKIP() << "becoming another user takes root";
  TraceHostileSuite(true);
}

// A suite whose first test kills its session and whose conftest ends at once (on import)
// every session named the remaining file: fbkit restarts a session to run the remaining
// files, but not for ever.
TEST(SandboxE2E, SessionsThatDieBeforeAnyTestAreNotRestartedForEver) {
  ScratchDir tmp;
  std::string root = tmp / "repo";
  fs::create_directories(root + "/tests");
  WriteFileOrDie(root + "/tests/conftest.py",
                 "import os, sys\n\nif any(a.endswith('test_b.py') for a in sys.argv):\n"
                 "    os._exit(0)\n");
  WriteFileOrDie(root + "/tests/test_a.py", "import os\n\ndef test_a():\n    os._exit(1)\n");
  WriteFileOrDie(root + "/tests/test_b.py", "def test_b():\n    pass\n");
  RunResult r = RunCommand({kBinary, "trace", root, "--python", kPython, "--details", "-q", "-o",
                            tmp / "trace.json", "--work-dir", tmp / "work"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  json trace = json::parse(ReadFileOrDie(tmp / "trace.json"));
  for (const char* name : {"tests/test_a.py", "tests/test_b.py"}) {
    const json* f = File(trace, name);
    ASSERT_NE(f, nullptr) << trace.dump(1);
    EXPECT_EQ(f->at("status"), "crashed") << name;
  }
  int sessions = 0;
  for (const auto& e : fs::directory_iterator(tmp / "work")) {
    sessions += e.path().filename().string().starts_with("session-") && e.path().extension() == ".log";
  }
  EXPECT_EQ(sessions, 4);  // the first, then three that ran nothing
}

// Hostile agent patches evaluated by fbkit running as root, or, with `as_user`, as an
// ordinary user (nobody) who owns the tasks and may write the attacked host directories.
void EvalHostilePatches(bool as_user) {
  NobodyLock lock;
  Host host;
  ScratchDir tmp;
  std::string root = tmp / "repo";
  fs::copy(Fixture("extract_features"), root, fs::copy_options::recursive);
  ASSERT_EQ(RunCommand({kBinary, "trace", root, "--python", kPython, "-q", "-o", tmp / "trace.json"})
                .exit_code, 0);
  ASSERT_EQ(RunCommand({kBinary, "build", root, "--trace", tmp / "trace.json", "-q", "-o",
                        tmp / "graph.json", "--no-cache"}).exit_code, 0);
  RunResult task = RunCommand({kExtract, "task", root, "--graph", tmp / "graph.json", "--trace",
                               tmp / "trace.json", "-o", tmp / "tasks", "--python", kPython,
                               "--min-lines", "5", "--p2p", "2", "-q", "--no-l2", "--f2p",
                               "tests/test_stats.py"});
  ASSERT_EQ(task.exit_code, 0) << task.err;
  std::string l1 = fs::directory_iterator(tmp / "tasks")->path();
  for (const auto& e : fs::directory_iterator(tmp / "tasks")) {
    if (e.path().string().ends_with(".lv1")) l1 = e.path();
  }
  Listener listener;
  RunResult made = RunCommand({kPython, kSource + "/tests/cli/hostile_patches.py", l1, tmp / "hostile",
                               host.outside, host.home, std::to_string(listener.port()), root});
  std::string core_pattern = ReadFileOrDie("/proc/sys/kernel/core_pattern");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::vector<std::string> prefix;
  if (as_user) {
    GiveToNobody(tmp.path());
    GiveToNobody(host.dir.path());
    prefix = kAsNobody;
  }
  std::map<std::string, json> reports;
  for (const auto& e : fs::directory_iterator(tmp / "hostile")) {
    std::string name = e.path().stem();
    std::string run = tmp / ("runs/" + name);
    std::vector<std::string> argv = host.Env({kExtract, "eval", tmp / "tasks", "--predictions",
                                              e.path(), "-o", run, "-q", "--timeout", "60"});
    argv.insert(argv.begin(), prefix.begin(), prefix.end());
    RunResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    for (const auto& d : fs::directory_iterator(run)) {
      if (fs::exists(d.path() / "report.json")) {
        reports[name] = json::parse(ReadFileOrDie(d.path() / "report.json"));
      }
    }
  }
  ASSERT_EQ(reports.size(), 12u);
  // Each attack raises where it succeeds, so the gold feature resolves exactly when the
  // sandbox stopped it. Attempts the grader sees being made (writes to the system, /proc/sys,
  // .git or fbkit's files, reads of /etc/shadow, links where fbkit reads, kill -1) are flagged
  // as well, hence not resolved; killing everything ends the tests, never the eval. As root,
  // the fork bomb runs into the sandbox's pids cgroup, whose counter flags it. The rest (a
  // secret or token that is not there, a connection or memory refused, a file size limit)
  // leave nothing the grader can tell from an ordinary failure: stopped, not flagged. Links
  // where fbkit reads cannot even be tried: outcome runs give the tests no directory of
  // fbkit's (plant_links finds none), and their work copy is a private copy.
  std::set<std::string> flagged = {"write_outside", "sysctl", "read_private", "git_config", "kill_all"};
  if (!as_user) flagged.insert("fork_bomb");
  for (const auto& [name, report] : reports) {
    EXPECT_EQ(report["sandbox"], "bwrap") << name;
    EXPECT_TRUE(report["applied"]) << name;
    if (flagged.contains(name)) {
      EXPECT_FALSE(report["resolved"]) << name;
      EXPECT_TRUE(report["suspicious"]) << name << ": " << report.dump(1);
      std::string reasons = report["suspicious_reasons"].dump();
      EXPECT_TRUE(reasons.find("escape attempt") != std::string::npos ||
                  reasons.find("sandbox's limit on processes") != std::string::npos)
          << name << ": " << report.dump(1);
    } else {
      EXPECT_TRUE(report["resolved"]) << name << " got out: " << report.dump(1);
    }
  }
  EXPECT_FALSE(listener.Accepted());
  host.ExpectUntouched();
  EXPECT_EQ(ProcessesRunning("sleep " + std::to_string(listener.port())), 0)
      << "the fork bomb's processes live on";
  EXPECT_EQ(ReadFileOrDie("/proc/sys/kernel/core_pattern"), core_pattern);
  EXPECT_FALSE(fs::exists(host.outside + "/filter-ran"));
  EXPECT_FALSE(fs::exists(host.outside + "/victim"));

  if (as_user) return;
  // Without the sandbox (only when asked for) the same patch does get out, and the report
  // says how it ran.
  RunResult open = RunCommand(host.Env({kExtract, "eval", tmp / "tasks", "--predictions",
                                        tmp / "hostile/write_outside.jsonl", "-o", tmp / "open",
                                        "-q", "--sandbox", "none"}));
  EXPECT_EQ(open.exit_code, 3) << open.err;  // its instance errors: the conftest is broken
  EXPECT_TRUE(fs::exists(host.outside + "/escaped.txt"));
}

TEST(SandboxE2E, HostilePatchesAreScoredWithoutHarmToTheHost) { EvalHostilePatches(false); }

TEST(SandboxE2E, AsAnOrdinaryUserHostilePatchesAreScoredWithoutHarmToo) {
  if (::geteuid() != 0) GTEST_SKIP() << "becoming another user takes root";
  EvalHostilePatches(true);
}

// Two repositories with one spec and the same dependency files (none): A's install step
// runs a module of A's that leaves a .pth in the environment. B never gets A's entry (red
// team round 4: the key covered only the dependency files, and B's tests ran A's code).
TEST(SandboxE2E, AnotherRepositorysInstallStepsNeverReachThisOnesRuns) {
  Host host;
  ScratchDir tmp;
  WriteFileOrDie(tmp / "shared.toml",
                 "python = \"" + std::string(kPython) + "\"\ntests = [\"tests\"]\ninstall = [\n"
                 "  \"$PYTHON -m venv --without-pip --system-site-packages \\\"$FBKIT_ENV\\\"\",\n"
                 "  \"\\\"$FBKIT_ENV/bin/python\\\" hook.py\",\n]\n");
  for (const std::string name : {"A", "B"}) {
    fs::create_directories(tmp / (name + "/tests"));
    WriteFileOrDie(tmp / (name + "/tests/test_clean.py"),
                   "import os\n\ndef test_clean():\n"
                   "    assert 'FBKIT_POISON' not in os.environ, 'code of repository A runs'\n");
  }
  WriteFileOrDie(tmp / "A/hook.py",
                 "import os, sysconfig\n"
                 "site = sysconfig.get_paths()['purelib']\n"
                 "with open(os.path.join(site, 'zz_poison.pth'), 'w') as f:\n"
                 "    f.write('import os; os.environ[\"FBKIT_POISON\"] = \"A\"\\n')\n");
  WriteFileOrDie(tmp / "B/hook.py", "print('nothing to do')\n");
  RunResult a =
      RunCommand(host.Env({kBinary, "env", tmp / "A", "--spec", tmp / "shared.toml", "-q"}));
  ASSERT_EQ(a.exit_code, 0) << a.err << a.out;
  RunResult trace = RunCommand(host.Env({kBinary, "trace", tmp / "B", "--spec", tmp / "shared.toml",
                                         "-q", "-o", tmp / "B.json"}));
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  EXPECT_EQ(json::parse(ReadFileOrDie(tmp / "B.json"))["counts"], json({{"passed", 1}}))
      << ReadFileOrDie(tmp / "B.json");
  // A's own runs do see what its steps did: the environment was poisoned, only not B's.
  RunResult own = RunCommand(host.Env({kBinary, "trace", tmp / "A", "--spec", tmp / "shared.toml",
                                       "-q", "-o", tmp / "A.json"}));
  ASSERT_EQ(own.exit_code, 0) << own.err;
  EXPECT_EQ(json::parse(ReadFileOrDie(tmp / "A.json"))["counts"], json({{"failed", 1}}));
  host.ExpectUntouched();
}

TEST(SandboxE2E, InstallStepsBuildTheEnvironmentOnceAndTheTestsUseIt) {
  Host host;
  ScratchDir tmp;
  std::string root = tmp / "repo";
  fs::copy(Fixture("env_install"), root, fs::copy_options::recursive);
  std::string before = TreeState(root);
  RunResult first = RunCommand(host.Env({kBinary, "env", root, "--python", kPython, "-q"}));
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;
  EXPECT_NE(first.out.find("(built)"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("1 test collected"), std::string::npos) << first.out;
  RunResult again = RunCommand(host.Env({kBinary, "env", root, "--python", kPython, "-q"}));
  EXPECT_NE(again.out.find("(reused from the cache)"), std::string::npos) << again.out;
  EXPECT_EQ(first.out.substr(0, first.out.find(' ', 12)), again.out.substr(0, again.out.find(' ', 12)));
  // The tests only pass with the environment's colorlib, and the spec's [env].
  RunResult trace = RunCommand(host.Env({kBinary, "trace", root, "--python", kPython, "-q", "-o",
                                         tmp / "trace.json"}));
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  json doc = json::parse(ReadFileOrDie(tmp / "trace.json"));
  EXPECT_EQ(doc["counts"], json({{"passed", 1}}));
  EXPECT_EQ(TreeState(root), before) << "building the environment wrote into the repository";
  // A changed install input is a new environment.
  WriteFileOrDie(root + "/vendor/colorlib/colorlib/extra.py", "X = 1\n");
  RunResult changed = RunCommand(host.Env({kBinary, "env", root, "--python", kPython, "-q"}));
  EXPECT_NE(changed.out.find("(built)"), std::string::npos) << changed.out;
  // A failing step is named, with its output.
  WriteFileOrDie(tmp / "bad.toml", "install = [\"echo step-output; exit 7\"]\n");
  RunResult bad = RunCommand(host.Env({kBinary, "env", root, "--spec", tmp / "bad.toml", "-q"}));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("install step 1 (echo step-output; exit 7) exited with 7"), std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find("step-output"), std::string::npos);
  host.ExpectUntouched();
}

// fixtures/env_hostile: an interpreter the install steps made names headers they planted;
// the host compiler does not read them (the accelerator is not built, the test still runs).
TEST(SandboxE2E, HeadersTheInstallStepsPlantedNeverReachTheHostCompiler) {
  Host host;
  ScratchDir tmp;
  std::string root = tmp / "repo";
  fs::copy(Fixture("env_hostile"), root, fs::copy_options::recursive);
  RunResult trace = RunCommand(host.Env({kBinary, "trace", root, "--python", kPython, "-o",
                                         tmp / "trace.json"}));
  ASSERT_EQ(trace.exit_code, 0) << trace.err;
  json doc = json::parse(ReadFileOrDie(tmp / "trace.json"));
  EXPECT_FALSE(doc["accelerated"]);
  EXPECT_NE(doc["accel_error"].get<std::string>().find(
                "lie outside the system's and the interpreter's own directories"),
            std::string::npos) << doc["accel_error"];
  EXPECT_EQ(doc["counts"], json({{"passed", 1}}));
  host.ExpectUntouched();
}

TEST(SandboxE2E, BadSpecsNameFileLineAndKeyAndExitNonZero) {
  ScratchDir tmp;
  std::string root = tmp / "repo";
  fs::copy(Fixture("env_install"), root, fs::copy_options::recursive);
  struct Case {
    std::string text;
    std::string message;
  };
  std::vector<Case> cases = {
      {"python = \"/usr/bin/python3\"\npytohn = \"x\"\n", ":2: unknown key 'pytohn'"},
      {"\ntimeout = \"ten\"\n", ":2: key 'timeout' must be a number of seconds"},
      {"pythonpath = \"src\"\n", ":1: key 'pythonpath' must be an array of strings"},
      {"pythonpath = [\"src\", 3]\n", ":1: key 'pythonpath' must be an array of strings"},
      {"[limits]\nmemory_mb = 1\nswap_mb = 2\n", ":3: unknown key 'limits.swap_mb'"},
      {"[limits]\nprocesses = -1\n", ":2: key 'limits.processes' must be >= 0"},
      {"[env]\nA = 1\n", ":2: key 'env.A' must be a string"},
      {"sandbox = \"docker\"\n", ":1: key 'sandbox': unknown sandbox 'docker'"},
      {"network = \"yes\"\n", ":1: key 'network' must be true or false"},
      {"repo = \"a/b\"\ninstall = [\n", ":2: "},  // a syntax error, at the line TOML sees it
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string spec = tmp / ("bad" + std::to_string(i) + ".toml");
    WriteFileOrDie(spec, cases[i].text);
    for (const auto& argv : std::vector<std::vector<std::string>>{
             {kBinary, "trace", root, "--spec", spec, "-q"},
             {kBinary, "env", root, "--spec", spec, "-q"},
             {kRace, "validate", tmp / "none.jsonl", "--spec", spec, "-q"}}) {
      RunResult r = RunCommand(argv);
      EXPECT_EQ(r.exit_code, 2) << argv[0] << " " << argv[1] << ": " << cases[i].text;
      EXPECT_NE(r.err.find(spec + cases[i].message), std::string::npos)
          << argv[1] << " said: " << r.err << "wanted: " << spec + cases[i].message;
    }
  }
  // fb-extract reads the spec before its other inputs: the same message, exit 1.
  WriteFileOrDie(tmp / "graph.json", "{}");
  RunResult r = RunCommand({kExtract, "all", root, "--graph", tmp / "graph.json", "--trace",
                            tmp / "graph.json", "-o", tmp / "out", "--spec", tmp / "bad1.toml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad1.toml:2: key 'timeout'"), std::string::npos) << r.err;
  RunResult missing = RunCommand({kBinary, "trace", root, "--spec", tmp / "nope.toml", "-q"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.toml"), std::string::npos) << missing.err;
  RunResult sandbox = RunCommand({kBinary, "trace", root, "--sandbox", "chroot", "-q"});
  EXPECT_EQ(sandbox.exit_code, 2);
}

TEST(SandboxE2E, WithoutBubblewrapTheErrorSaysHowToProceed) {
  ScratchDir tmp;
  std::string root = tmp / "repo";
  fs::copy(Fixture("env_install"), root, fs::copy_options::recursive);
  fs::create_directories(tmp / "bin");  // a PATH without bwrap
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {kBinary, "trace", root, "--python", kPython, "-q"},
           {kExtract, "eval", root, "--gold", "-q"}}) {
    std::vector<std::string> full = {"/usr/bin/env", "PATH=" + tmp / "bin"};
    full.insert(full.end(), argv.begin(), argv.end());
    RunResult r = RunCommand(full);
    EXPECT_EQ(r.exit_code, 1) << argv[1];
    EXPECT_NE(r.err.find("bubblewrap"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--sandbox none"), std::string::npos) << r.err;
  }
}

TEST(SandboxE2E, CgroupsOfAKilledFbkitAreRemovedByTheNext) {
  if (::geteuid() != 0) GTEST_SKIP() << "cgroups are created as root";
  std::string stale;
  for (const char* base : {"/sys/fs/cgroup/pids", "/sys/fs/cgroup"}) {
    std::string dir = std::string(base) + "/fbkit-999999999-0";
    if (std::filesystem::exists(std::string(base) + "/cgroup.procs") && ::mkdir(dir.c_str(), 0755) == 0) {
      stale = dir;
      break;
    }
  }
  if (stale.empty()) GTEST_SKIP() << "no cgroup hierarchy to write";
  // A new fbkit process sweeps the cgroups of fbkit processes that no longer exist.
  ScratchDir tmp;
  auto r = RunCommand({kBinary, "trace", tmp.path(), "--python", "/bin/false", "-q"});
  (void)r;
  EXPECT_FALSE(std::filesystem::exists(stale)) << stale << " was left behind";
  ::rmdir(stale.c_str());
}

}  // namespace
}  // namespace fbkit::testing

namespace fbkit::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// fixtures/git_in_copies: git answers where the install steps, the environment's check and
// the tests run, as in the user's checkout (a version from `git describe --tags`, an
// import-time `git rev-parse HEAD`); a conftest writes into the tree while pytest collects;
// a test file that fails to collect is listed and left out, the rest goes on; a top object
// that the package's __init__.py defines is cut out, and its gold patches resolve: the
// task's one-commit repository carries the original's tag, never its history.
TEST(SandboxE2E, GitAnswersInEveryCopyAndAFileThatFailsToCollectIsLeftOut) {
  Host host;
  ScratchDir tmp;
  std::string root = tmp / "repo";
  fs::copy(Fixture("git_in_copies"), root, fs::copy_options::recursive);
  for (const std::vector<std::string>& git :
       {std::vector<std::string>{"init", "-q"}, {"add", "-A"},
        {"-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "one"},
        {"tag", "v1.0"}}) {
    std::vector<std::string> argv = {"/usr/bin/git", "-C", root};
    argv.insert(argv.end(), git.begin(), git.end());
    ASSERT_EQ(RunCommand(argv).exit_code, 0);
  }
  auto py = std::vector<std::string>{"--python", kPython};
  auto run = [&](std::vector<std::string> argv, bool with_python = true) {
    if (with_python) argv.insert(argv.end(), py.begin(), py.end());
    return RunCommand(host.Env(argv));
  };
  RunResult env = run({kBinary, "env", root, "-q"});
  ASSERT_EQ(env.exit_code, 0) << env.err << env.out;
  EXPECT_NE(env.out.find("left out   1 test file that fails to collect"), std::string::npos) << env.out;
  EXPECT_NE(env.out.find("tests/test_needs_missing.py"), std::string::npos) << env.out;
  for (bool isolate : {false, true}) {
    std::vector<std::string> argv = {kBinary, "trace", root, "-q", "-o", tmp / "trace.json"};
    if (isolate) argv.push_back("--isolate");
    RunResult trace = run(argv);
    EXPECT_EQ(trace.exit_code, 3) << trace.err;  // written, with a file that did not collect
    json doc = json::parse(ReadFileOrDie(tmp / "trace.json"));
    EXPECT_EQ(doc["counts"], json({{"error", 1}, {"passed", 3}})) << "isolate " << isolate;
  }
  ASSERT_EQ(run({kBinary, "build", root, "--trace", tmp / "trace.json", "-o", tmp / "graph.json"},
                false).exit_code, 0);
  RunResult all = run({kExtract, "all", root, "--graph", tmp / "graph.json", "--trace",
                       tmp / "trace.json", "--min-points", "1", "--min-lines", "1", "-o",
                       tmp / "tasks"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE((all.out + all.err).find("emitted (F2P files with a task)                     1"),
            std::string::npos) << all.out << all.err;
  RunResult eval = run({kExtract, "eval", tmp / "tasks", "--gold", "-o", tmp / "eval"}, false);
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  json summary = json::parse(ReadFileOrDie(tmp / "eval/summary.json"));
  EXPECT_EQ(summary["instances"], 2);
  EXPECT_EQ(summary["resolved"], 2) << summary.dump(1);
  // The agent's workspace: one commit, with the original's tag as eval's copy has it.
  RunResult infer = run({kExtract, "infer", tmp / "tasks", "--agent-cmd",
                         "sh -c 'git describe --tags > described.txt'", "-q", "-o", tmp / "run"},
                        false);
  ASSERT_EQ(infer.exit_code, 0) << infer.err;
  std::string predictions = ReadFileOrDie(tmp / "run/predictions.jsonl");
  EXPECT_NE(predictions.find("+v1.0\\n"), std::string::npos) << predictions;
  host.ExpectUntouched();
}

}  // namespace
}  // namespace fbkit::testing

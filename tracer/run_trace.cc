#include "tracer/run_trace.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <random>
#include <thread>

#include <unistd.h>

#include <cstdio>

#include "runner/confine.h"
#include "runner/environment.h"
#include "runner/git.h"
#include "runner/repo_files.h"
#include "tracer/agent_files.h"
#include "tracer/journal.h"
#include "util/hash.h"
#include "util/strings.h"

namespace fbkit::tracer {
namespace {

// What a sandboxed process printed is as large as its file size limit lets it be: its log
// is read back from the last kLogTail bytes (errors and pytest's summary end it).
constexpr uint64_t kLogTail = 8u << 20;

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// One pytest process: its journal, its log, and how it ended.
struct SessionResult {
  bool finished = false;  // the agent wrote its "finish" record
  bool timed_out = false;
  bool total_timeout = false;
  sandbox::ExitInfo exit;
  std::optional<std::string> last_file;  // the test file running when it ended
  std::optional<std::pair<std::string, std::string>> last_test;  // (file, test) started last
  std::vector<std::string> collected;
  std::vector<std::string> selected;
  std::set<std::string> begun;
  std::string log;
  TraceSet trace;  // what this process recorded
};

class Runner {
 public:
  Runner(util::Env& env, sandbox::Launcher& launcher, const TraceOptions& options,
         const TraceProgressFn& progress)
      : env_(env), launcher_(launcher), options_(options), progress_(progress),
        start_(Clock::now()) {}

  util::Expected<TraceSet> Run() {
    util::Status s = Prepare();
    if (!s.ok()) return s.failure();
    trace_.root = options_.root;
    trace_.mode = options_.isolate ? TraceMode::kIsolate : TraceMode::kSession;
    trace_.accel_error = accel_error_;
    s = options_.isolate ? RunIsolated() : RunSessions();
    if (!s.ok()) return s.failure();
    MergeChildJournals();
    return std::move(trace_);
  }

 private:
  util::Status Prepare() {
    util::Status s = env_.MakeDirs(AgentDir());
    if (!s.ok()) return s;
    s = PrepareSandbox();
    if (!s.ok()) return s;
    for (const auto& file : AgentFiles()) {
      s = env_.WriteFileAtomic(util::JoinPath(AgentDir(), std::string(file.name)), file.content);
      if (!s.ok()) return s;
    }
    s = CheckInterpreter();
    if (!s.ok()) return s;
    if (options_.accelerate && options_.record) {
      auto built = BuildAccelerator();
      if (built.ok()) {
        accel_path_ = *built;
        sandbox_.read_only.push_back(accel_path_);
      } else {
        accel_error_ = built.error();
      }
    }
    return util::Status::Ok();
  }

  // The interpreter (the spec's, or the one its install steps built) and the sandbox every
  // pytest process of this run starts in. Under bwrap the tests see ROOT as a private copy
  // (Sandbox::copies): of the work copy itself in outcome runs, else of git's view of the
  // user's checkout (PrivateCopy). Only traces give child processes a directory for their
  // journals: outcome runs read nothing the tests can write.
  util::Status PrepareSandbox() {
    std::string copy_of;
    if (options_.spec.sandbox != sandbox::SandboxKind::kNone) {
      auto copy = options_.root_is_work_copy ? util::Expected<std::string>(options_.root) : PrivateCopy();
      if (!copy.ok()) return copy.failure();
      copy_of = *copy;
    }
    std::string scratch = options_.record ? Scratch() : "";
    if (!scratch.empty()) {
      if (auto s = env_.MakeDirs(util::JoinPath(scratch, "children")); !s.ok()) return s;
    }
    auto c = runner::Confine(env_, launcher_, options_.spec,
                             {options_.root, copy_of, options_.work_dir, scratch,
                              options_.env_root});
    if (!c.ok()) return c.failure();
    python_ = c->python;
    sandbox_ = c->sandbox;
    sandbox_.read_only.push_back(AgentDir());
    if (!options_.guard_packages.empty()) {
      auto copies = sandbox::GuardCopies(env_, &sandbox_, sandbox::CurrentHost(),
                                        options_.guard_packages, {options_.root, copy_of},
                                        options_.spec.exposed_copies, "the tests", &launcher_,
                                        options_.work_dir);
      if (!copies.ok()) return copies.failure();
    }
    std::string list;
    for (const auto& rel : options_.protect) {
      std::string path = util::JoinPath(options_.root, rel);
      if (!env_.Stat(path, false).ok()) continue;
      sandbox_.protect.push_back(path);
      if (rel.find_first_of("\t\n") != std::string::npos) continue;  // bound, not listable
      std::string digest = "-";
      if (rel.ends_with(".py")) {
        // The code the plugin checks the file against while the tests run (read as tested
        // code may have left it: no link followed, bounded).
        auto bytes = env_.ReadUntrusted(options_.root, rel, 64u << 20);
        if (!bytes.ok()) return util::Error{"the grader's file " + rel + ": " + bytes.error()};
        digest = util::Sha256Hex(*bytes);
      }
      list += rel + "\t" + digest + "\n";
    }
    // In a file, not a variable: a large tree's list passes the 128 KiB one argument of
    // the sandbox's command line may hold. The agent's directory is read-only inside.
    if (list.empty()) return util::Status::Ok();
    protected_file_ = util::JoinPath(AgentDir(), "protected.tsv");
    return env_.WriteFileAtomic(protected_file_, list);
  }

  // A copy of the repository's files (git's view) under the work dir, the source of what the
  // tests see at ROOT: the user's checkout itself is not even visible, and a suite that
  // writes into its directory (caches, example databases) behaves as in the verification
  // and evaluation copies.
  util::Expected<std::string> PrivateCopy() {
    std::string copy = util::JoinPath(options_.work_dir, "root");
    runner::GitProgram git(env_, launcher_, util::JoinPath(options_.work_dir, "git"));
    auto files = runner::ListRepoFiles(env_, git, options_.root, options_.work_dir);
    if (!files.ok()) return files.failure();
    (void)env_.RemoveAll(copy);
    if (auto s = env_.MakeDirs(copy); !s.ok()) return s.failure();
    if (auto s = runner::CopyRepoFiles(env_, options_.root, *files, copy); !s.ok()) return s.failure();
    return copy;
  }

  // Compiles tracer/agent/_fbkit_accel.c against the target interpreter's headers into the
  // cache (keyed by source, interpreter version, ABI and headers), unless already there.
  util::Expected<std::string> BuildAccelerator() {
    std::string source;
    for (const auto& file : AgentFiles()) {
      if (file.name == "_fbkit_accel.c") source = std::string(file.content);
    }
    const std::string* info = &interpreter_info_;
    std::vector<std::string> lines;
    for (size_t b = 0, e; b < info->size(); b = e + 1) {
      e = info->find('\n', b);
      if (e == std::string::npos) e = info->size();
      lines.push_back(info->substr(b, e - b));
    }
    if (lines.size() < 3) return util::Error{"unexpected sysconfig output: " + *info};
    // The interpreter's answer is the sandboxed code's word (a repository's sysconfig.py can
    // give any directory): the host compiler reads only headers under the system's
    // directories or the spec's own interpreter's prefix, which no code under test writes.
    const std::string& include = lines[0];
    auto real = env_.RealPath(include);
    if (!real.ok() || !include.starts_with("/")) return util::Error{"no interpreter headers at " + include};
    std::vector<std::string> trusted = sandbox::SystemPaths();
    for (const auto& d : sandbox::InterpreterDirs(options_.spec.python)) trusted.push_back(d);
    bool allowed = false;
    for (const auto& dir : trusted) {
      auto resolved = env_.RealPath(dir);
      if (!resolved.ok() || *resolved == "/") continue;
      allowed = allowed || real->starts_with(*resolved + "/");
    }
    if (!allowed) {
      return util::Error{"the interpreter's headers (" + include + ") lie outside the system's "
                         "and the interpreter's own directories: not compiled against"};
    }
    if (lines[1].empty() || lines[1].find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string::npos) {
      return util::Error{"unexpected extension suffix: " + lines[1]};
    }
    if (!env_.Stat(util::JoinPath(include, "Python.h"), true).ok()) {
      return util::Error{include + "/Python.h not found (install the interpreter's headers, "
                         "e.g. python3-dev)"};
    }
    std::string key = util::Sha256Hex(source + "\0" + *info).substr(0, 16);
    std::string dir = options_.accel_cache_dir.empty()
                          ? util::JoinPath(options_.work_dir, "accel")
                          : options_.accel_cache_dir;
    std::string so = util::JoinPath(dir, "_fbkit_accel-" + key + lines[1]);
    if (env_.Stat(so, true).ok()) return so;
    util::Status s = env_.MakeDirs(dir);
    if (!s.ok()) return s.failure();
    std::string c_file = util::JoinPath(AgentDir(), "_fbkit_accel.c");
    std::string tmp = so + ".tmp" + std::to_string(::getpid());
    sandbox::ProcessSpec cc;
    cc.argv = {options_.compiler, "-shared", "-fPIC", "-O2", "-I" + include, "-o", tmp, c_file};
    cc.log_path = util::JoinPath(options_.work_dir, "accel-build.log");
    auto built = sandbox::RunToCompletion(launcher_, cc, 300);
    if (!built.ok() || built->code != 0) {
      auto log = env_.ReadTail(cc.log_path, kLogTail);
      return util::Error{"compiling the accelerator failed: " + (log.ok() ? util::Tail(*log, 1000) : "")};
    }
    if (auto moved = env_.Rename(tmp, so); !moved.ok()) return util::Error{"cannot move " + tmp + ": " + moved.error()};
    return so;
  }

  // Edges of Python child processes (each wrote its own journal, in the sandbox's scratch):
  // merged, never overwritten; read without following anything planted there. Only edges:
  // the directory is the tests' to write, so what it says of outcomes is not evidence.
  void MergeChildJournals() {
    if (!options_.record) return;
    auto entries = env_.ListDir(util::JoinPath(Scratch(), "children"));
    if (!entries.ok()) return;
    for (const auto& e : *entries) {
      if (e.type != util::FileType::kRegular) continue;
      auto data = env_.ReadUntrusted(Scratch(), "children/" + e.name, kMaxJournalBytes);
      if (!data.ok()) continue;
      TraceSet child;
      JournalReader reader(&child);
      reader.Feed(*data);
      reader.Feed("\n");
      child.exitstatus.reset();
      child.process_exit.reset();
      bool outcomes = false;
      for (auto& [name, f] : child.files) {
        outcomes |= !f.tests.empty() || !f.nodeids.empty();
        f.status = runner::FileStatus::kOk;
        f.error.reset();
        f.nodeids.clear();
        f.tests.clear();
      }
      if (outcomes) {
        // A child's agent records calls only: test outcomes there were written by the tests.
        child.integrity.push_back("a child process's journal (" + e.name +
                                  ") holds test outcomes: written by the tested code");
      }
      MergeTrace(child, &trace_);
    }
  }

  std::string AgentDir() const { return util::JoinPath(options_.work_dir, "agent"); }
  // The one directory of the work dir the tests may write (children's journals, pytest's
  // cache); the agent, journals and logs beside it are out of their reach.
  std::string Scratch() const { return util::JoinPath(options_.work_dir, "sandbox"); }
  static constexpr uint64_t kMaxJournalBytes = 1ull << 30;

  util::Status CheckInterpreter() {
    sandbox::ProcessSpec spec;
    // One start of the interpreter: is pytest importable, and what the accelerator needs.
    spec.argv = {python_, "-c",
                 "import sys, sysconfig\n"
                 "print(sysconfig.get_paths()['include'])\n"
                 "print(sysconfig.get_config_var('EXT_SUFFIX') or '.so')\n"
                 "print(sys.implementation.cache_tag, sys.version.replace('\\n', ' '))\n"
                 "import importlib.util\n"
                 "if importlib.util.find_spec('pytest') is None: sys.exit('No module named pytest')\n"
                 "print('xdist' if importlib.util.find_spec('xdist') else 'no-xdist')\n"};
    spec.cwd = options_.root;
    spec.vars = BaseEnv("");
    // Its answers on stdout alone: a warning the interpreter prints as it starts (stderr)
    // would otherwise fall between their lines.
    spec.log_path = util::JoinPath(options_.work_dir, "check.log");
    spec.err_path = util::JoinPath(options_.work_dir, "check.err");
    spec.sandbox = sandbox_;
    auto info = sandbox::RunToCompletion(launcher_, spec);
    if (!info.ok()) return info.failure();
    auto log = env_.ReadTail(spec.log_path, kLogTail);
    std::string text = log.ok() ? *log : "";
    if (info->code != 0) {
      auto err = env_.ReadTail(spec.err_path, kLogTail);
      if (err.ok()) text += *err;
    }
    if (info->code == 0 && std::count(text.begin(), text.end(), '\n') >= 4) {
      interpreter_info_ = text;
      xdist_ = text.find("\nxdist\n") != std::string::npos;
      return util::Status::Ok();
    }
    if (info->code == 0) {
      return util::Error{"'" + python_ + "' does not behave like a Python interpreter"};
    }
    if (info->code == 127 && text.find("cannot run") != std::string::npos) {
      return util::Error{"the interpreter '" + python_ +
                         "' cannot be run (--python): " + util::Tail(text, 500)};
    }
    std::string last = text.substr(0, text.find_last_not_of("\n") + 1);
    last = last.substr(last.find_last_of('\n') + 1);
    if (last == "No module named pytest") {
      return util::Error{"pytest is not importable with '" + python_ +
                         "' (install it, or pass --python)"};
    }
    return util::Error{"'" + python_ + "' failed: " + util::Tail(text, 1500)};
  }

  std::vector<std::pair<std::string, std::string>> BaseEnv(const std::string& journal) const {
    std::string pythonpath = AgentDir();
    for (const auto& p : options_.spec.pythonpath) {
      pythonpath += ":" + (p.starts_with("/") ? p : util::JoinPath(options_.root, p));
    }
    if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
    std::string excludes;
    for (const auto& e : options_.spec.exclude) {
      excludes += (excludes.empty() ? "" : ":") + util::JoinPath(options_.root, e);
    }
    std::vector<std::pair<std::string, std::string>> env = {
        {"PYTHONPATH", pythonpath},
        // No .pyc files written into the repository; existing ones (the stdlib's) still
        // serve. (PYTHONPYCACHEPREFIX would hide those and recompile everything.)
        {"PYTHONDONTWRITEBYTECODE", "1"},
        // One string hash seed for every run: the order of sets and dicts of strings (and
        // so which calls code makes, and how often) is the same from run to run. The
        // spec's env may set another.
        {"PYTHONHASHSEED", "0"},
        {"FBKIT_TRACE_ROOT", options_.root},
        {"FBKIT_TRACE_JOURNAL", journal},
        {"FBKIT_TRACE_EXCLUDE", excludes},
        {"FBKIT_TRACE_ACCEL", accel_path_},
        {"FBKIT_TRACE_ROLE", "main"},
        {"FBKIT_TRACE_RECORD", options_.record ? "1" : "0"},
        // Outcome runs (verification, evaluation, RACE) check that the outcomes are pytest's.
        {"FBKIT_TRACE_CHECKS", options_.record ? "0" : "1"},
    };
    if (options_.record) env.push_back({"FBKIT_TRACE_CHILD_DIR", util::JoinPath(Scratch(), "children")});
    if (!protected_file_.empty()) env.push_back({"FBKIT_TRACE_PROTECTED_FILE", protected_file_});
    if (!options_.l2_site.empty()) {
      std::string originals;
      for (const auto& d : options_.l2_originals) originals += (originals.empty() ? "" : ":") + d;
      env.push_back({"FBKIT_TRACE_L2_SITE", options_.l2_site});
      env.push_back({"FBKIT_TRACE_L2_ORIGINALS", originals});
    }
    for (const auto& kv : options_.spec.vars) {
      if (!runner::IsFbkitVariable(kv.first)) env.push_back(kv);
    }
    // Outcome runs read no bytecode the work copy holds (a planted unchecked-hash .pyc runs
    // without its .py): only the interpreter's library and installed packages keep theirs
    // (agent/sitecustomize.py).
    if (!options_.record && options_.spec.sandbox != sandbox::SandboxKind::kNone) {
      env.push_back({"FBKIT_TRACE_OWN_BYTECODE_ONLY", "1"});
    }
    return env;
  }

  // One pytest process to start: its command and the journal its agent writes.
  struct PytestRun {
    sandbox::ProcessSpec spec;
    std::string journal;
  };

  PytestRun PytestSpec(const std::string& name, const std::vector<std::string>& paths,
                       bool collect_only) {
    PytestRun run;
    sandbox::ProcessSpec& spec = run.spec;
    run.journal = util::JoinPath(options_.work_dir, name + ".jsonl");
    // No `-o cache_dir=`: with the cache provider blocked the option is unknown, and pytest 8
    // warns about it (an error under `filterwarnings = error`, as pytest's own suite sets).
    // Started through fbkit_boot.py (by absolute path): pytest as `python -m pytest` runs it,
    // with fbkit's plugin bound to its own files before any repository module can shadow it.
    spec.argv = {python_, util::JoinPath(AgentDir(), "fbkit_boot.py"), "-p", "no:cacheprovider"};
    // One process per run, whatever the configuration asks: where pytest-xdist is installed
    // (a configuration may force it, `addopts = -n auto`) it loads as usual, its options
    // and `worker_id` fixture known, and runs no workers (the last -n wins over addopts).
    if (xdist_) spec.argv.insert(spec.argv.end(), {"-n", "0"});
    if (collect_only) spec.argv.push_back("--collect-only");
    spec.argv.insert(spec.argv.end(), options_.spec.pytest_args.begin(), options_.spec.pytest_args.end());
    // A test file that fails to collect is reported (collect_error) and left out; the others
    // run (pytest would otherwise stop the session before its first test).
    spec.argv.push_back("--continue-on-collection-errors");
    spec.argv.insert(spec.argv.end(), paths.begin(), paths.end());
    spec.cwd = options_.root;
    // The journal is written through descriptor 3: no path inside the sandbox to replace;
    // each record signed with a key of this process's own, handed over on descriptor 4 and
    // closed before repository code runs (JournalReader takes only records signed in order).
    spec.vars = BaseEnv("fd:3");
    spec.channels = {run.journal};
    spec.secret = SessionKey();
    spec.vars.push_back({"FBKIT_TRACE_KEY_FD", "4"});
    spec.log_path = util::JoinPath(options_.work_dir, name + ".log");
    spec.sandbox = sandbox_;
    return run;
  }

  // A fresh random key for one pytest process's journal (64 hex digits).
  static std::string SessionKey() {
    std::random_device random;
    std::string key;
    static const char* kHex = "0123456789abcdef";
    for (int i = 0; i < 64; ++i) key += kHex[random() % 16];
    return key;
  }

  // Whether a journal naming `file` may start its clock: when the run names its test files
  // (outcome runs do), only one of them; else any.
  bool Startable(const std::string& file) const {
    const auto& tests = options_.spec.tests;
    bool all_files = !tests.empty() && std::all_of(tests.begin(), tests.end(), [](const std::string& t) {
      return t.ends_with(".py");
    });
    return !all_files || std::find(tests.begin(), tests.end(), file) != tests.end();
  }

  // A run with no total timeout of its own still ends: kDefaultTotalTimeout.
  static constexpr double kDefaultTotalTimeout = 12 * 3600;
  bool TotalExpired() const {
    double limit = options_.spec.total_timeout > 0 ? options_.spec.total_timeout : kDefaultTotalTimeout;
    return Seconds(Clock::now() - start_) > limit;
  }

  // Runs one pytest process to its end, feeding its journal to a reader as it grows and
  // killing it when the current test file or the whole run exceeds its time.
  util::Expected<SessionResult> RunSession(const PytestRun& run, double file_timeout) {
    const sandbox::ProcessSpec& spec = run.spec;
    const std::string& journal = run.journal;
    auto process = launcher_.Start(spec);
    if (!process.ok()) return process.failure();
    SessionResult result;
    JournalReader reader(&result.trace, spec.secret);
    uint64_t offset = 0;
    std::optional<std::string> file;
    std::optional<std::string> timed_file;  // the file whose clock runs
    size_t begun_seen = 0;
    Clock::time_point file_start = Clock::now();
    for (;;) {
      std::optional<sandbox::ExitInfo> exit = (*process)->Poll();
      offset += FeedJournal(journal, offset, &reader);
      if (reader.begun().size() != begun_seen) {
        // The journal is the tested process's to write: a file's clock starts once, when
        // its tests begin, so records naming files over and over cannot restart it.
        begun_seen = reader.begun().size();
        for (const auto& f : reader.begun()) {
          if (started_files_.count(f) || !Startable(f)) continue;
          started_files_.insert(f);
          file_start = Clock::now();
          // several began since the last poll: the one the journal is in runs now
          if (!timed_file || timed_file != reader.current_file()) timed_file = f;
        }
      }
      if (reader.current_file() != file) {
        file = reader.current_file();
        ReportProgress(reader, file);
      }
      if (exit) {
        result.exit = *exit;
        break;
      }
      bool file_expired = file_timeout > 0 && Seconds(Clock::now() - file_start) > file_timeout;
      if (file_expired || TotalExpired()) {
        result.exit = (*process)->Kill();
        result.timed_out = true;
        result.total_timeout = !file_expired;
        FeedJournal(journal, offset, &reader);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    reader.Feed("\n");  // a last line the agent could not finish is simply malformed
    NoteLimits(result.exit, &result.trace);
    result.finished = reader.finished();
    // A file killed at its time is the one whose clock ran out, whatever the journal named last.
    result.last_file = result.timed_out && timed_file ? timed_file : reader.current_file();
    result.last_test = reader.current_test();
    result.collected = reader.collected();
    result.selected = reader.selected();
    result.begun = reader.begun();
    auto log = env_.ReadTail(spec.log_path, kLogTail);
    result.log = log.ok() ? *log : "";
    return result;
  }

  // In outcome runs, a whole-sandbox limit the tests ran into is an integrity finding: a
  // fork bomb, a memory hog or a disk filler is an attack; a suite's own tests need none.
  void NoteLimits(const sandbox::ExitInfo& exit, TraceSet* trace) const {
    if (options_.record) return;
    if (exit.disk_exceeded) {
      trace->integrity.push_back("the tests wrote more than the sandbox's disk limit ([limits] "
                                 "disk_mb = " + std::to_string(options_.spec.limits.disk_mb) + ")");
    }
    if (exit.processes_limit_reached) {
      trace->integrity.push_back("the tests reached the sandbox's limit on processes ([limits] "
                                 "processes = " + std::to_string(options_.spec.limits.processes) + ")");
    }
    if (exit.memory_limit_reached) {
      trace->integrity.push_back("a process of the tests was killed at the sandbox's memory limit "
                                 "([limits] memory_mb = " +
                                 std::to_string(options_.spec.limits.memory_mb) + ")");
    }
  }

  uint64_t FeedJournal(const std::string& path, uint64_t offset, JournalReader* reader) {
    auto data = env_.ReadFileFrom(path, offset);
    if (!data.ok()) return 0;
    reader->Feed(*data);
    return data->size();
  }

  void ReportProgress(const JournalReader& reader, const std::optional<std::string>& file) {
    if (!progress_) return;
    TraceProgress p;
    p.files_total = std::max(reader.collected().size(), collected_.size());
    p.files_done = done_before_ + (reader.begun().empty() ? 0 : reader.begun().size() - 1);
    p.current = file.value_or("collecting");
    progress_(p);
  }

  // Marks the file that was running when a session died; returns the files still to run.
  std::vector<std::string> AfterAbort(const SessionResult& r, std::set<std::string>* done) {
    for (const auto& f : r.begun) done->insert(f);
    if (r.last_file) MarkAborted(*r.last_file, r, &trace_);
    std::vector<std::string> remaining;
    for (const auto& f : collected_) {
      if (!done->count(f)) remaining.push_back(f);
    }
    return remaining;
  }

  void MarkAborted(const std::string& file, const SessionResult& r, TraceSet* trace) const {
    FileTrace& f = trace->files[file];
    f.file = file;
    f.status = r.timed_out ? runner::FileStatus::kTimeout : runner::FileStatus::kCrashed;
    f.error = DescribeAbort(r) + RunningTest(r, file) + "\n" + util::Tail(r.log, 3000);
  }

  // " in TEST": the test of `file` that started last in the session, when it had not ended
  // (no teardown reported); "" when none was under way.
  static std::string RunningTest(const SessionResult& r, const std::string& file) {
    if (!r.last_test || r.last_test->first != file) return "";
    const std::string& id = r.last_test->second;
    auto f = r.trace.files.find(file);
    if (f != r.trace.files.end()) {
      auto t = f->second.tests.find(id);
      if (t != f->second.tests.end() && t->second.phases.count("teardown")) return "";
    }
    return " in " + id;
  }

  std::string DescribeAbort(const SessionResult& r) const {
    if (r.total_timeout) return "the whole run exceeded --total-timeout";
    if (r.timed_out) {
      return "the test file exceeded --timeout " + std::to_string(options_.spec.timeout) + " s";
    }
    if (r.exit.disk_exceeded) {
      return "the tests wrote more than [limits] disk_mb = " +
             std::to_string(options_.spec.limits.disk_mb) + " MiB into fbkit's scratch directory";
    }
    if (r.exit.signal) return "the interpreter was killed by signal " + std::to_string(r.exit.signal);
    return "the interpreter exited with status " + std::to_string(r.exit.code) +
           " before pytest finished";
  }

  util::Status RunSessions() {
    std::vector<std::string> paths = options_.spec.tests;
    std::set<std::string> done;
    int fruitless = 0;  // sessions in a row that ended before starting a test file
    for (int n = 1;; ++n) {
      auto r = RunSession(PytestSpec("session-" + std::to_string(n), paths, false),
                          options_.spec.timeout);
      if (!r.ok()) return r.failure();
      MergeTrace(r->trace, &trace_);
      if (collected_.empty()) collected_ = r->selected.empty() ? r->collected : r->selected;
      if (r->finished) {
        trace_.process_exit = r->exit.code;
        MarkUnrun(*r, done);
        return CheckCollected(*r);
      }
      if (!r->last_file && collected_.empty()) {
        std::string why = "pytest ended before collecting any test (" + DescribeAbort(*r) +
                          "):\n" + util::Tail(r->log, 3000);
        if (trace_.integrity.empty()) return util::Error{why};
        if (options_.record) return util::Error{why + WithFindings()};
        // The tested code stopped pytest after an integrity finding (an escape attempt
        // while importing): the finding reaches the grader, every file counts as crashed.
        for (const auto& path : paths) {
          FileTrace& f = trace_.files[path];
          f.file = path;
          f.status = runner::FileStatus::kCrashed;
          f.error = why;
        }
        return util::Status::Ok();
      }
      fruitless = r->begun.empty() ? fruitless + 1 : 0;
      paths = AfterAbort(*r, &done);
      done_before_ = done.size();
      if (paths.empty() || r->total_timeout) return MarkNotRun(paths);
      if (fruitless >= kMaxFruitlessSessions) return MarkGivenUp(paths, *r);
    }
  }

  // Selected files a finished session never started (pytest stopped early: an internal
  // error, -x, a KeyboardInterrupt in a test) are reported, not silently missing.
  void MarkUnrun(const SessionResult& r, const std::set<std::string>& done) {
    for (const auto& name : r.selected) {
      if (r.begun.count(name) || done.count(name)) continue;
      FileTrace& f = trace_.files[name];
      f.file = name;
      f.status = runner::FileStatus::kNotRun;
      f.error = "pytest ended (exit status " + std::to_string(trace_.exitstatus.value_or(-1)) +
                ") before running this file\n" + util::Tail(r.log, 3000);
    }
  }

  // The plugin's integrity findings, for an error that would otherwise hide why pytest
  // stopped (an honest run whose records the plugin refused says so here).
  std::string WithFindings() const {
    std::string out = "\nthe plugin's integrity findings:";
    for (size_t i = 0; i < trace_.integrity.size() && i < 5; ++i) out += "\n  " + trace_.integrity[i];
    if (trace_.integrity.size() > 5) out += "\n  (" + std::to_string(trace_.integrity.size() - 5) + " more)";
    return out;
  }

  util::Status CheckCollected(const SessionResult& r) {
    if (!collected_.empty() || !trace_.files.empty()) return util::Status::Ok();
    if (!trace_.integrity.empty()) {
      // The plugin reported tampering: the run is returned with its findings (no test
      // outcome), so that a grader flags it rather than calling it an error of its own.
      trace_.notes.push_back("pytest collected nothing (exit status " +
                             std::to_string(trace_.exitstatus.value_or(-1)) + ")");
      return util::Status::Ok();
    }
    if (trace_.exitstatus && *trace_.exitstatus == 5) {
      return util::Error{"pytest collected no tests in " + options_.root +
                         " (check --tests, --pytest-arg and the project's pytest configuration)"};
    }
    return util::Error{"pytest collected nothing (exit status " +
                       std::to_string(trace_.exitstatus.value_or(-1)) + "):\n" +
                       util::Tail(r.log, 3000)};
  }

  // Sessions that keep ending before any test file starts are not restarted for ever.
  static constexpr int kMaxFruitlessSessions = 3;
  util::Status MarkGivenUp(const std::vector<std::string>& files, const SessionResult& r) {
    for (const auto& name : files) {
      FileTrace& f = trace_.files[name];
      f.file = name;
      f.status = runner::FileStatus::kCrashed;
      f.error = std::to_string(kMaxFruitlessSessions) + " sessions in a row ended before running "
                "a test file (" + DescribeAbort(r) + "); not restarted again\n" + util::Tail(r.log, 3000);
    }
    return util::Status::Ok();
  }

  util::Status MarkNotRun(const std::vector<std::string>& files) {
    for (const auto& name : files) {
      FileTrace& f = trace_.files[name];
      f.file = name;
      f.status = runner::FileStatus::kNotRun;
    }
    return util::Status::Ok();
  }

  // Isolate mode: collect once, then one process per test file, `jobs` at a time; each has
  // its own journal and TraceSet, merged in file order so the result does not depend on
  // scheduling.
  util::Status RunIsolated() {
    auto c = RunSession(PytestSpec("collect", options_.spec.tests, true), options_.spec.total_timeout);
    if (!c.ok()) return c.failure();
    const TraceSet& collection = c->trace;
    trace_.python = collection.python;
    trace_.integrity = collection.integrity;
    trace_.notes = collection.notes;
    collected_ = c->selected.empty() ? c->collected : c->selected;
    for (const auto& [name, f] : collection.files) {
      if (f.status == runner::FileStatus::kCollectError) trace_.files[name] = f;
    }
    if (collection.counts.count("error")) trace_.counts["error"] = collection.counts.at("error");
    if (collected_.empty()) return CheckCollected(*c);
    std::vector<std::string> files;
    for (const auto& f : collected_) {
      if (!trace_.files.count(f)) files.push_back(f);
    }
    if (options_.shard.count > 1) files = ShardOf(files);
    std::vector<TraceSet> results(files.size());
    util::Status s = RunPool(files, &results);
    if (!s.ok()) return s;
    for (size_t i = 0; i < files.size(); ++i) {
      // What importing took in this file's own process: "<import>FILE" (the per-file truth
      // that one session's static-closure attribution is checked against).
      auto& contexts = results[i].contexts;
      if (auto it = contexts.find("<import>"); it != contexts.end()) {
        contexts["<import>" + files[i]] = std::move(it->second);
        contexts.erase(it);
      }
      MergeTrace(results[i], &trace_);
    }
    return util::Status::Ok();
  }

  // This run's part of the runnable files; records the split in the trace. Only shard 1
  // keeps what the collection found (files that failed to collect), so merging adds it once.
  std::vector<std::string> ShardOf(const std::vector<std::string>& files) {
    double known = 0;
    for (const auto& [f, w] : options_.shard_weights) known += w;
    double mean = options_.shard_weights.empty() ? 1 : known / options_.shard_weights.size();
    std::vector<double> weights;
    for (const auto& f : files) {
      if (!options_.shard_weights.empty()) {
        auto it = options_.shard_weights.find(f);
        weights.push_back(it != options_.shard_weights.end() ? it->second : mean);
      } else {
        auto info = env_.Stat(util::JoinPath(options_.root, f), true);
        weights.push_back(info.ok() ? static_cast<double>(info->size) : 0);
      }
    }
    std::vector<size_t> bounds = ShardBounds(weights, options_.shard.count);
    int k = options_.shard.index;
    std::vector<std::string> mine(files.begin() + static_cast<std::ptrdiff_t>(bounds[k - 1]),
                                  files.begin() + static_cast<std::ptrdiff_t>(bounds[k]));
    trace_.shard = ShardInfo{k, options_.shard.count, files, mine};
    if (k != 1) {
      trace_.files.clear();
      trace_.counts.erase("error");
    }
    return mine;
  }

  struct Job {
    size_t index;
    std::unique_ptr<sandbox::Process> process;
    Clock::time_point start;
    std::unique_ptr<JournalReader> reader;
    uint64_t offset = 0;
    PytestRun run;
  };

  util::Status RunPool(const std::vector<std::string>& files, std::vector<TraceSet>* results) {
    std::vector<std::unique_ptr<Job>> running;
    size_t next = 0, done = 0;
    int jobs = std::max(1, options_.jobs);
    while (done < files.size()) {
      while (next < files.size() && static_cast<int>(running.size()) < jobs && !TotalExpired()) {
        auto job = std::make_unique<Job>();
        job->index = next;
        job->run = PytestSpec("file-" + std::to_string(next + 1), {files[next]}, false);
        auto p = launcher_.Start(job->run.spec);
        if (!p.ok()) return p.failure();
        job->process = std::move(*p);
        job->start = Clock::now();
        job->reader = std::make_unique<JournalReader>(&(*results)[next], job->run.spec.secret);
        running.push_back(std::move(job));
        ++next;
      }
      if (running.empty()) {  // the whole run's time is up
        return MarkNotRun({files.begin() + static_cast<long>(next), files.end()});
      }
      for (size_t k = 0; k < running.size();) {
        if (PollJob(*running[k], files)) {
          running.erase(running.begin() + static_cast<long>(k));
          ++done;
          TraceProgress p{done, files.size(), files[std::min(done, files.size() - 1)]};
          if (progress_) progress_(p);
        } else {
          ++k;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return util::Status::Ok();
  }

  // Advances one isolate job; true when it has ended (its file is then marked if it died).
  bool PollJob(Job& job, const std::vector<std::string>& files) {
    const std::string& journal = job.run.journal;
    std::optional<sandbox::ExitInfo> exit = job.process->Poll();
    job.offset += FeedJournal(journal, job.offset, job.reader.get());
    bool timed_out = false;
    if (!exit && ((options_.spec.timeout > 0 &&
                   Seconds(Clock::now() - job.start) > options_.spec.timeout) ||
                  TotalExpired())) {
      exit = job.process->Kill();
      timed_out = true;
      job.offset += FeedJournal(journal, job.offset, job.reader.get());
    }
    if (!exit) return false;
    job.reader->Feed("\n");
    NoteLimits(*exit, job.reader->trace());
    if (!job.reader->finished()) {
      auto log = env_.ReadTail(job.run.spec.log_path, kLogTail);
      SessionResult r;
      r.exit = *exit;
      r.timed_out = timed_out;
      r.total_timeout = timed_out && TotalExpired();
      r.log = log.ok() ? *log : "";
      MarkAborted(files[job.index], r, job.reader->trace());
    }
    return true;
  }

  util::Env& env_;
  sandbox::Launcher& launcher_;
  const TraceOptions& options_;
  const TraceProgressFn& progress_;
  Clock::time_point start_;
  std::set<std::string> started_files_;  // files whose per-file clock has started
  TraceSet trace_;
  std::string python_;   // the interpreter the tests run with
  sandbox::Sandbox sandbox_;      // where they run
  std::string interpreter_info_;  // include dir, EXT_SUFFIX, cache tag and version
  bool xdist_ = false;            // pytest-xdist is importable
  // The grader's files, a "REL\tSHA256\n" line each ("-" for data: only code is hashed);
  // FBKIT_TRACE_PROTECTED_FILE.
  std::string protected_file_;
  std::string accel_path_;
  std::optional<std::string> accel_error_;
  std::vector<std::string> collected_;
  size_t done_before_ = 0;
};

}  // namespace

util::Expected<TraceSet> RunTrace(util::Env& env, sandbox::Launcher& launcher,
                                  const TraceOptions& options,
                                  const TraceProgressFn& progress) {
  if (options.shard.count < 1 || options.shard.index < 1 ||
      options.shard.index > options.shard.count) {
    return util::Error{"shard " + std::to_string(options.shard.index) + "/" +
                       std::to_string(options.shard.count) + " does not exist"};
  }
  if (options.shard.count > 1 && !options.isolate) {
    return util::Error{"sharding needs --isolate (one process per test file)"};
  }
  Runner runner(env, launcher, options, progress);
  return runner.Run();
}

runner::TestRun TestRunOf(const TraceSet& trace) {
  runner::TestRun run;
  run.exitstatus = trace.exitstatus;
  run.process_exit = trace.process_exit;
  run.hooks = trace.hooks;
  run.integrity = trace.integrity;
  run.notes = trace.notes;
  for (const auto& [path, f] : trace.files) run.files[path] = f;
  return run;
}

util::Expected<runner::TestRun> AgentTestRunner::Run(const runner::TestRunRequest& request) {
  TraceOptions o;
  o.protect = request.protect;
  o.root = request.root;
  o.spec = request.spec;
  o.spec.pythonpath.insert(o.spec.pythonpath.end(), request.extra_pythonpath.begin(),
                           request.extra_pythonpath.end());
  o.spec.tests = request.files;
  if (request.total_timeout > 0) o.spec.total_timeout = request.total_timeout;
  o.root_is_work_copy = true;
  o.env_root = request.env_root;
  o.record = false;
  o.accelerate = false;
  o.work_dir = request.work_dir;
  o.l2_site = request.l2_site;
  o.l2_originals = request.l2_originals;
  o.guard_packages = request.guard_packages;
  auto trace = RunTrace(env_, launcher_, o, nullptr);
  if (!trace.ok()) return trace.failure();
  return TestRunOf(*trace);
}

}  // namespace fbkit::tracer

#include "tracer/runner.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <unistd.h>

#include <cstdio>

#include "tracer/agent_files.h"
#include "tracer/journal.h"
#include "util/hash.h"

namespace fbkit::tracer {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string Tail(const std::string& text, size_t n) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

// One pytest process: its journal, its log, and how it ended.
struct SessionResult {
  bool finished = false;  // the agent wrote its "finish" record
  bool timed_out = false;
  bool total_timeout = false;
  ExitInfo exit;
  std::optional<std::string> last_file;  // the test file running when it ended
  std::vector<std::string> collected;
  std::vector<std::string> selected;
  std::set<std::string> begun;
  std::string log;
};

class Runner {
 public:
  Runner(util::Env& env, Launcher& launcher, const TraceOptions& options,
         const TraceProgressFn& progress)
      : env_(env), launcher_(launcher), options_(options), progress_(progress),
        start_(Clock::now()) {}

  util::Expected<TraceSet> Run() {
    util::Status s = Prepare();
    if (!s.ok()) return util::Error{s.error()};
    trace_.root = options_.root;
    trace_.mode = options_.isolate ? "isolate" : "session";
    trace_.accel_error = accel_error_;
    s = options_.isolate ? RunIsolated() : RunSessions();
    if (!s.ok()) return util::Error{s.error()};
    MergeChildJournals();
    return std::move(trace_);
  }

 private:
  util::Status Prepare() {
    util::Status s = env_.MakeDirs(AgentDir());
    if (!s.ok()) return s;
    for (const auto& file : AgentFiles()) {
      s = env_.WriteFileAtomic(util::JoinPath(AgentDir(), std::string(file.name)), file.content);
      if (!s.ok()) return s;
    }
    s = CheckInterpreter();
    if (!s.ok()) return s;
    if (options_.accelerate) {
      auto built = BuildAccelerator();
      if (built.ok()) {
        accel_path_ = *built;
      } else {
        accel_error_ = built.error();
      }
    }
    return util::Status::Ok();
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
    const std::string& include = lines[0];
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
    if (!s.ok()) return util::Error{s.error()};
    std::string c_file = util::JoinPath(AgentDir(), "_fbkit_accel.c");
    std::string tmp = so + ".tmp" + std::to_string(::getpid());
    ProcessSpec cc;
    cc.argv = {options_.compiler, "-shared", "-fPIC", "-O2", "-I" + include, "-o", tmp, c_file};
    cc.log_path = util::JoinPath(options_.work_dir, "accel-build.log");
    auto built = RunToCompletion(launcher_, cc);
    if (!built.ok() || built->code != 0) {
      auto log = env_.ReadFile(cc.log_path);
      return util::Error{"compiling the accelerator failed: " + (log.ok() ? Tail(*log, 1000) : "")};
    }
    if (std::rename(tmp.c_str(), so.c_str()) != 0) return util::Error{"cannot move " + tmp};
    return so;
  }

  // Edges of Python child processes (each wrote its own journal): merged, never overwritten.
  void MergeChildJournals() {
    std::string dir = util::JoinPath(options_.work_dir, "children");
    auto entries = env_.ListDir(dir);
    if (!entries.ok()) return;
    TraceSet children;
    for (const auto& e : *entries) {
      auto data = env_.ReadFile(util::JoinPath(dir, e.name));
      if (!data.ok()) continue;
      JournalReader reader(&children);
      reader.Feed(*data);
      reader.Feed("\n");
    }
    for (auto& [name, f] : children.files) {
      for (const auto& [key, n] : f.edges) trace_.files[name].edges[key] += n;
      trace_.files[name].file = name;
    }
    for (auto& [name, edges] : children.contexts) {
      for (const auto& [key, n] : edges) trace_.contexts[name][key] += n;
    }
  }

  std::string AgentDir() const { return util::JoinPath(options_.work_dir, "agent"); }

  util::Status CheckInterpreter() {
    ProcessSpec spec;
    // One start of the interpreter: is pytest importable, and what the accelerator needs.
    spec.argv = {options_.python, "-c",
                 "import sys, sysconfig\n"
                 "print(sysconfig.get_paths()['include'])\n"
                 "print(sysconfig.get_config_var('EXT_SUFFIX') or '.so')\n"
                 "print(sys.implementation.cache_tag, sys.version.replace('\\n', ' '))\n"
                 "import pytest\n"};
    spec.cwd = options_.root;
    spec.env = BaseEnv("");
    spec.log_path = util::JoinPath(options_.work_dir, "check.log");
    auto info = RunToCompletion(launcher_, spec);
    if (!info.ok()) return util::Error{info.error()};
    auto log = env_.ReadFile(spec.log_path);
    std::string text = log.ok() ? *log : "";
    if (info->code == 0 && std::count(text.begin(), text.end(), '\n') >= 3) {
      interpreter_info_ = text;
      return util::Status::Ok();
    }
    if (info->code == 0) {
      return util::Error{"'" + options_.python + "' does not behave like a Python interpreter"};
    }
    if (info->code == 127 && text.find("cannot run") != std::string::npos) {
      return util::Error{"the interpreter '" + options_.python +
                         "' cannot be run (--python): " + Tail(text, 500)};
    }
    return util::Error{"pytest is not importable with '" + options_.python +
                       "' (install it, or pass --python): " + Tail(text, 1500)};
  }

  std::vector<std::pair<std::string, std::string>> BaseEnv(const std::string& journal) const {
    std::string pythonpath = AgentDir();
    for (const auto& p : options_.pythonpath) {
      pythonpath += ":" + (p.starts_with("/") ? p : util::JoinPath(options_.root, p));
    }
    if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += std::string(":") + old;
    std::string excludes;
    for (const auto& e : options_.excludes) {
      excludes += (excludes.empty() ? "" : ":") + util::JoinPath(options_.root, e);
    }
    std::vector<std::pair<std::string, std::string>> env = {
        {"PYTHONPATH", pythonpath},
        // No .pyc files written into the repository; existing ones (the stdlib's) still
        // serve. (PYTHONPYCACHEPREFIX would hide those and recompile everything.)
        {"PYTHONDONTWRITEBYTECODE", "1"},
        {"FBKIT_TRACE_ROOT", options_.root},
        {"FBKIT_TRACE_JOURNAL", journal},
        {"FBKIT_TRACE_EXCLUDE", excludes},
        {"FBKIT_TRACE_CHILD_DIR", util::JoinPath(options_.work_dir, "children")},
        {"FBKIT_TRACE_ACCEL", accel_path_},
        {"FBKIT_TRACE_ROLE", "main"},
    };
    for (const auto& kv : options_.env) env.push_back(kv);
    return env;
  }

  ProcessSpec PytestSpec(const std::string& name, const std::vector<std::string>& paths,
                         bool collect_only) {
    ProcessSpec spec;
    std::string journal = util::JoinPath(options_.work_dir, name + ".jsonl");
    spec.argv = {options_.python, "-m", "pytest", "-p", "fbkit_agent", "-p", "no:cacheprovider",
                 "-p", "no:xdist", "-o", "cache_dir=" + util::JoinPath(options_.work_dir, "cache")};
    if (collect_only) spec.argv.push_back("--collect-only");
    spec.argv.insert(spec.argv.end(), options_.pytest_args.begin(), options_.pytest_args.end());
    spec.argv.insert(spec.argv.end(), paths.begin(), paths.end());
    spec.cwd = options_.root;
    spec.env = BaseEnv(journal);
    spec.log_path = util::JoinPath(options_.work_dir, name + ".log");
    return spec;
  }

  bool TotalExpired() const {
    return options_.total_timeout > 0 && Seconds(Clock::now() - start_) > options_.total_timeout;
  }

  // Runs one pytest process to its end, feeding its journal to a reader as it grows and
  // killing it when the current test file or the whole run exceeds its time.
  util::Expected<SessionResult> RunSession(const ProcessSpec& spec, double file_timeout) {
    std::string journal;
    for (const auto& [k, v] : spec.env) {
      if (k == "FBKIT_TRACE_JOURNAL") journal = v;
    }
    auto process = launcher_.Start(spec);
    if (!process.ok()) return util::Error{process.error()};
    JournalReader reader(&trace_);
    SessionResult result;
    uint64_t offset = 0;
    std::optional<std::string> file;
    Clock::time_point file_start = Clock::now();
    for (;;) {
      std::optional<ExitInfo> exit = (*process)->Poll();
      offset += FeedJournal(journal, offset, &reader);
      if (reader.current_file() != file) {
        file = reader.current_file();
        file_start = Clock::now();
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
    result.finished = reader.finished();
    result.last_file = reader.current_file();
    result.collected = reader.collected();
    result.selected = reader.selected();
    result.begun = reader.begun();
    auto log = env_.ReadFile(spec.log_path);
    result.log = log.ok() ? *log : "";
    return result;
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
    if (r.last_file) {
      FileTrace& f = trace_.files[*r.last_file];
      f.file = *r.last_file;
      f.status = r.timed_out ? FileStatus::kTimeout : FileStatus::kCrashed;
      f.error = DescribeAbort(r) + "\n" + Tail(r.log, 3000);
    }
    std::vector<std::string> remaining;
    for (const auto& f : collected_) {
      if (!done->count(f)) remaining.push_back(f);
    }
    return remaining;
  }

  std::string DescribeAbort(const SessionResult& r) const {
    if (r.total_timeout) return "the whole run exceeded --total-timeout";
    if (r.timed_out) {
      return "the test file exceeded --timeout " + std::to_string(options_.file_timeout) + " s";
    }
    if (r.exit.signal) return "the interpreter was killed by signal " + std::to_string(r.exit.signal);
    return "the interpreter exited with status " + std::to_string(r.exit.code) +
           " before pytest finished";
  }

  util::Status RunSessions() {
    std::vector<std::string> paths = options_.tests;
    std::set<std::string> done;
    for (int n = 1;; ++n) {
      auto r = RunSession(PytestSpec("session-" + std::to_string(n), paths, false),
                          options_.file_timeout);
      if (!r.ok()) return util::Error{r.error()};
      if (collected_.empty()) collected_ = r->selected.empty() ? r->collected : r->selected;
      if (r->finished) {
        MarkUnrun(*r, done);
        return CheckCollected(*r);
      }
      if (!r->last_file && collected_.empty()) {
        return util::Error{"pytest ended before collecting any test (" + DescribeAbort(*r) +
                           "):\n" + Tail(r->log, 3000)};
      }
      paths = AfterAbort(*r, &done);
      done_before_ = done.size();
      if (paths.empty() || r->total_timeout) return MarkNotRun(paths);
    }
  }

  // Selected files a finished session never started (pytest stopped early: an internal
  // error, -x, a KeyboardInterrupt in a test) are reported, not silently missing.
  void MarkUnrun(const SessionResult& r, const std::set<std::string>& done) {
    for (const auto& name : r.selected) {
      if (r.begun.count(name) || done.count(name)) continue;
      FileTrace& f = trace_.files[name];
      f.file = name;
      f.status = FileStatus::kNotRun;
      f.error = "pytest ended (exit status " + std::to_string(trace_.exitstatus.value_or(-1)) +
                ") before running this file\n" + Tail(r.log, 3000);
    }
  }

  util::Status CheckCollected(const SessionResult& r) {
    if (!collected_.empty() || !trace_.files.empty()) return util::Status::Ok();
    if (trace_.exitstatus && *trace_.exitstatus == 5) return util::Status::Ok();  // no tests
    return util::Error{"pytest collected nothing (exit status " +
                       std::to_string(trace_.exitstatus.value_or(-1)) + "):\n" +
                       Tail(r.log, 3000)};
  }

  util::Status MarkNotRun(const std::vector<std::string>& files) {
    for (const auto& name : files) {
      FileTrace& f = trace_.files[name];
      f.file = name;
      f.status = FileStatus::kNotRun;
    }
    return util::Status::Ok();
  }

  // Isolate mode: collect once, then one process per test file, `jobs` at a time; the
  // journals are read in file order so the result does not depend on scheduling.
  util::Status RunIsolated() {
    TraceSet collection;
    std::swap(trace_, collection);
    auto c = RunSession(PytestSpec("collect", options_.tests, true), options_.total_timeout);
    std::swap(trace_, collection);
    if (!c.ok()) return util::Error{c.error()};
    collected_ = c->collected;
    if (collected_.empty()) return CheckCollected(*c);
    for (const auto& [name, f] : collection.files) {
      if (f.status == FileStatus::kCollectError) trace_.files[name] = f;
    }
    trace_.counts["error"] += collection.counts["error"];
    if (trace_.counts["error"] == 0) trace_.counts.erase("error");
    for (size_t i = 0; i < collected_.size(); ++i) {
      const std::string& file = collected_[i];
      if (trace_.files.count(file) && trace_.files[file].status == FileStatus::kCollectError) continue;
      if (TotalExpired()) return MarkNotRun({collected_.begin() + static_cast<long>(i), collected_.end()});
      auto r = RunSession(PytestSpec("file-" + std::to_string(i + 1), {file}, false),
                          options_.file_timeout);
      if (!r.ok()) return util::Error{r.error()};
      done_before_ = i + 1;
      if (!r->finished) {
        std::set<std::string> done;
        SessionResult aborted = *r;
        aborted.last_file = file;
        AfterAbort(aborted, &done);
      }
    }
    return util::Status::Ok();
  }

  util::Env& env_;
  Launcher& launcher_;
  const TraceOptions& options_;
  const TraceProgressFn& progress_;
  Clock::time_point start_;
  TraceSet trace_;
  std::string interpreter_info_;  // include dir, EXT_SUFFIX, cache tag and version
  std::string accel_path_;
  std::optional<std::string> accel_error_;
  std::vector<std::string> collected_;
  size_t done_before_ = 0;
};

}  // namespace

util::Expected<TraceSet> RunTrace(util::Env& env, Launcher& launcher, const TraceOptions& options,
                                  const TraceProgressFn& progress) {
  Runner runner(env, launcher, options, progress);
  return runner.Run();
}

}  // namespace fbkit::tracer

// What a traced pytest run produced: per test file its tests' outcomes and the call edges
// recorded in its context, plus the shared contexts (import time, session fixtures).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "runner/test_run.h"
#include "util/expected.h"

namespace fbkit::tracer {

// A code object's identity: (root-relative path, co_firstlineno, co_name).
struct CodeId {
  std::string path;
  int line = 0;
  std::string name;
  auto operator<=>(const CodeId&) const = default;
};

// caller is nullopt when the callee was entered from outside the repository.
using EdgeKey = std::pair<std::optional<CodeId>, CodeId>;
using EdgeCounts = std::map<EdgeKey, int64_t>;

// The types the agent observed in a code object's sampled calls (the first few calls of each
// edge): per parameter the type names of its arguments ("*args" and "**kwargs" parameters,
// named with their stars, by their elements), and the type names of its results (none when
// every sampled call raised or suspended); names as "int", "NoneType", "pkg.mod.Cache".
struct ObservedTypes {
  std::map<std::string, std::set<std::string>> params;
  std::set<std::string> returns;
  bool operator==(const ObservedTypes&) const = default;
};
using TypeMap = std::map<CodeId, ObservedTypes>;

// Adds `src`'s names to `dst`'s (a union per code and parameter).
void AddTypes(const TypeMap& src, TypeMap* dst);

// A test file's outcomes (runner::FileRun) and the call edges recorded while it ran.
struct FileTrace : runner::FileRun {
  std::string file;
  std::set<std::string> fixture_contexts;  // session/package fixture contexts it uses
  EdgeCounts edges;          // recorded while its tests ran
  EdgeCounts collect_edges;  // recorded while pytest imported it (collection)
  TypeMap types;             // observed while its tests ran (empty in older traces)
};

// Whether pytest collected the file only for the doctests in its docstrings
// (--doctest-modules, pytest-doctestplus): a module not named as a test module (test*.py,
// *_test.py, conftest.py) nor in a tests/ or test/ directory, whose every test id (none at all: a module without doctests)
// names the module or an object in it ("pkg/mod.py::pkg.mod.func", "src/pkg/mod.py::pkg.mod")
// rather than a test function or class. Such a file is library code, not a test file.
bool DoctestsOnly(const FileTrace& f);

struct TraceWarning {
  std::string nodeid;
  std::string message;
};

// A trace of one shard of an isolated run: the runnable test files (collected, in order,
// without those that failed to collect) cut into `count` contiguous parts of about equal
// weight; this trace ran part `index` (1-based), `files`. Shard 1 also carries what the
// collection found (files that failed to collect, the "error" count).
struct ShardInfo {
  int index = 1;
  int count = 1;
  std::vector<std::string> all;    // every runnable file, in collection order
  std::vector<std::string> files;  // this shard's
};

// How a trace ran: one pytest session for every file, or a process per file.
enum class TraceMode { kSession, kIsolate };
const char* TraceModeName(TraceMode mode);  // "session", "isolate"
std::optional<TraceMode> TraceModeFromName(std::string_view name);

struct TraceSet {
  std::string root;
  std::string python;
  TraceMode mode = TraceMode::kSession;
  bool accelerated = false;
  std::optional<std::string> accel_error;  // why the C accelerator is not in use
  std::optional<int> exitstatus;  // of the (last) pytest session, as pytest's hooks saw it
  std::optional<int> process_exit;  // the exit code of the last finished pytest process
  // (root-relative file, hook name): repository code implementing pytest hooks that shape
  // collection or reported outcomes (conftests, plugins). Not part of the trace file.
  std::set<std::pair<std::string, std::string>> hooks;
  std::set<std::string> preloaded;  // repo files imported before the agent started
  // Signs that the outcomes were tampered with by code of the tested process (records after
  // pytest finished, two reports of one phase, pytest's report machinery replaced, a test's
  // code that differs from its file, hooks of unknown origin). Not part of the trace file.
  std::vector<std::string> integrity;
  // Observations for review that honest code can make too (a copy of a test's function given
  // other defaults, a wrapper the test file chose): reported, never deciding. Not part of the
  // trace file.
  std::vector<std::string> notes;
  std::map<std::string, FileTrace> files;
  std::map<std::string, EdgeCounts> contexts;  // "<import>", "<fixture>...", "<session>"
  std::vector<TraceWarning> warnings;
  std::map<std::string, int64_t> counts;  // pytest's summary categories
  std::optional<ShardInfo> shard;  // a shard's trace (merged with its siblings by MergeShards)
};

// Adds the TraceSet of one pytest process to the run's: edges recorded while tests ran are
// summed; collection edges and the shared contexts (import time, session fixtures), which
// every process records again for itself, take the larger count; tests and statuses come
// from src; the exit status is the worse.
void MergeTrace(const TraceSet& src, TraceSet* dst);

// The contiguous parts of `weights` (one per file, in order) for `count` shards, as `count`
// + 1 boundaries: part k is [bounds[k], bounds[k + 1]). The largest part's weight is as small
// as a contiguous cut allows; ties go to the earliest boundary (deterministic).
std::vector<size_t> ShardBounds(const std::vector<double>& weights, int count);

// The trace of an unsharded isolated run from the traces of all its shards (any order): each
// shard's files and edges, merged in shard order as the run itself merges its files. Errors
// when they are not the `count` shards of one run (root, interpreter, files).
util::Expected<TraceSet> MergeShards(std::vector<TraceSet> shards);

}  // namespace fbkit::tracer

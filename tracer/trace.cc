#include "tracer/trace.h"

#include <algorithm>
#include <numeric>

#include "util/strings.h"

namespace fbkit::tracer {

const char* TraceModeName(TraceMode mode) {
  return mode == TraceMode::kIsolate ? "isolate" : "session";
}

std::optional<TraceMode> TraceModeFromName(std::string_view name) {
  if (name == "session") return TraceMode::kSession;
  if (name == "isolate") return TraceMode::kIsolate;
  return std::nullopt;
}

bool DoctestsOnly(const FileTrace& f) {
  if (!f.file.ends_with(".py")) return false;
  std::string base = f.file.substr(f.file.rfind('/') + 1);
  if (base.starts_with("test") || base.ends_with("_test.py") || base == "conftest.py") return false;
  // A file in a tests directory is a test file whatever pytest calls its tests
  // (python_files and python_functions may name anything).
  if (util::InTestsDirectory(f.file)) return false;
  // A doctest is named after the module as Python imports it: its dotted path ("pkg.mod" for
  // pkg/mod.py and pkg/mod/__init__.py) or a suffix of it (src/ layouts), and an object in
  // it ("pkg.mod.func"); test functions and classes have no dots in their names and start
  // with "test".
  std::string dotted = f.file.substr(0, f.file.size() - 3);
  std::replace(dotted.begin(), dotted.end(), '/', '.');
  bool package = base == "__init__.py";
  if (package) dotted.resize(dotted.size() - 9);
  std::vector<std::string> modules = {dotted};
  for (size_t dot = dotted.find('.'); dot != std::string::npos; dot = dotted.find('.', dot + 1)) {
    modules.push_back(dotted.substr(dot + 1));
  }
  return std::all_of(f.nodeids.begin(), f.nodeids.end(), [&](const std::string& id) {
    size_t sep = id.find("::");
    if (sep == std::string::npos) return false;
    std::string name = id.substr(sep + 2);
    if (name.find("::") != std::string::npos || name.find('[') != std::string::npos ||
        name.starts_with("test")) {
      return false;
    }
    // Without a dot it names the module itself: only a package's docstring is trusted to
    // (python_functions may name a test function after its module).
    if (name.find('.') == std::string::npos && !package) return false;
    return std::any_of(modules.begin(), modules.end(), [&](const std::string& m) {
      return name == m || name.starts_with(m + ".");
    });
  });
}

void AddTypes(const TypeMap& src, TypeMap* dst) {
  for (const auto& [code, t] : src) {
    ObservedTypes& d = (*dst)[code];
    for (const auto& [name, types] : t.params) d.params[name].insert(types.begin(), types.end());
    d.returns.insert(t.returns.begin(), t.returns.end());
  }
}

void MergeTrace(const TraceSet& src, TraceSet* dst) {
  for (const auto& [name, f] : src.files) {
    FileTrace& d = dst->files[name];
    d.file = name;
    if (f.status != runner::FileStatus::kOk) d.status = f.status;
    if (f.error) d.error = f.error;
    for (const auto& n : f.nodeids) {
      if (std::find(d.nodeids.begin(), d.nodeids.end(), n) == d.nodeids.end()) d.nodeids.push_back(n);
    }
    for (const auto& [id, t] : f.tests) d.tests[id] = t;
    d.fixture_contexts.insert(f.fixture_contexts.begin(), f.fixture_contexts.end());
    for (const auto& [key, n] : f.edges) d.edges[key] += n;
    for (const auto& [key, n] : f.collect_edges) {
      d.collect_edges[key] = std::max(d.collect_edges[key], n);
    }
    AddTypes(f.types, &d.types);
  }
  for (const auto& [name, edges] : src.contexts) {
    EdgeCounts& d = dst->contexts[name];
    for (const auto& [key, n] : edges) d[key] = std::max(d[key], n);
  }
  for (const auto& [k, n] : src.counts) dst->counts[k] += n;
  dst->warnings.insert(dst->warnings.end(), src.warnings.begin(), src.warnings.end());
  dst->preloaded.insert(src.preloaded.begin(), src.preloaded.end());
  if (!src.python.empty()) dst->python = src.python;
  dst->accelerated = dst->accelerated || src.accelerated;
  dst->hooks.insert(src.hooks.begin(), src.hooks.end());
  dst->integrity.insert(dst->integrity.end(), src.integrity.begin(), src.integrity.end());
  dst->notes.insert(dst->notes.end(), src.notes.begin(), src.notes.end());
  if (src.process_exit) dst->process_exit = src.process_exit;
  if (src.exitstatus) dst->exitstatus = std::max(dst->exitstatus.value_or(0), *src.exitstatus);
}

namespace {

// The boundaries of a greedy contiguous cut with parts of weight at most `limit`, or empty
// when more than `count` parts would be needed.
std::vector<size_t> CutAt(const std::vector<double>& weights, int count, double limit) {
  std::vector<size_t> bounds = {0};
  double part = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (part > 0 && part + weights[i] > limit) {
      bounds.push_back(i);
      part = 0;
    }
    part += weights[i];
  }
  if (bounds.size() > static_cast<size_t>(count)) return {};
  while (bounds.size() < static_cast<size_t>(count)) bounds.push_back(weights.size());
  bounds.push_back(weights.size());
  return bounds;
}

}  // namespace

std::vector<size_t> ShardBounds(const std::vector<double>& weights, int count) {
  count = std::max(count, 1);
  double lo = weights.empty() ? 0 : *std::max_element(weights.begin(), weights.end());
  double hi = std::accumulate(weights.begin(), weights.end(), 0.0);
  // The smallest feasible largest part, to a relative 1e-9 (64 halvings at most).
  for (int i = 0; i < 64 && hi - lo > 1e-9 * std::max(1.0, hi); ++i) {
    double mid = lo + (hi - lo) / 2;
    (CutAt(weights, count, mid).empty() ? lo : hi) = mid;
  }
  return CutAt(weights, count, hi);
}

util::Expected<TraceSet> MergeShards(std::vector<TraceSet> shards) {
  if (shards.empty()) return util::Error{"no traces to merge"};
  for (const auto& t : shards) {
    if (!t.shard) return util::Error{"a trace that is no shard (traced without --shard)"};
  }
  std::sort(shards.begin(), shards.end(),
            [](const TraceSet& a, const TraceSet& b) { return a.shard->index < b.shard->index; });
  const ShardInfo& first = *shards.front().shard;
  std::vector<std::string> covered;
  for (size_t i = 0; i < shards.size(); ++i) {
    const TraceSet& t = shards[i];
    const ShardInfo& s = *t.shard;
    std::string name = "shard " + std::to_string(s.index) + "/" + std::to_string(s.count);
    if (s.count != first.count || s.index != static_cast<int>(i) + 1) {
      return util::Error{"expected the " + std::to_string(first.count) + " shards 1.." +
                         std::to_string(first.count) + " of one run once each; " + name +
                         " is " + (s.count != first.count ? "of another split" : "missing or repeated")};
    }
    if (t.root != shards.front().root || t.python != shards.front().python ||
        t.mode != shards.front().mode || s.all != first.all) {
      return util::Error{name + " is of another run (root, interpreter or collected files differ)"};
    }
    covered.insert(covered.end(), s.files.begin(), s.files.end());
  }
  if (shards.size() != static_cast<size_t>(first.count)) {
    return util::Error{"expected " + std::to_string(first.count) + " shards, got " +
                       std::to_string(shards.size())};
  }
  if (covered != first.all) return util::Error{"the shards' files are not the run's files"};
  TraceSet out;
  out.root = shards.front().root;
  out.mode = shards.front().mode;
  out.accel_error = shards.front().accel_error;
  for (const auto& t : shards) MergeTrace(t, &out);
  return out;
}

}  // namespace fbkit::tracer

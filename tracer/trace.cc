#include "tracer/trace.h"

#include <algorithm>

namespace fbkit::tracer {

void MergeTrace(const TraceSet& src, TraceSet* dst) {
  for (const auto& [name, f] : src.files) {
    FileTrace& d = dst->files[name];
    d.file = name;
    if (f.status != FileStatus::kOk) d.status = f.status;
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
  if (src.process_exit) dst->process_exit = src.process_exit;
  if (src.exitstatus) dst->exitstatus = std::max(dst->exitstatus.value_or(0), *src.exitstatus);
}

}  // namespace fbkit::tracer

// The fbkit.trace/1 document (keys and lists sorted: deterministic for the same run).
#pragma once

#include <string>
#include <vector>

#include "tracer/trace.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::tracer {

inline constexpr const char* kTraceSchema = "fbkit.trace/1";

// `with_details` adds per-test durations and failure messages (which hold timings, object
// addresses and temporary paths, so they differ between runs).
std::string TraceDocument(const TraceSet& trace, bool with_details);

// Reads an fbkit.trace/1 document back (a file's edges come back as `edges`).
util::Expected<TraceSet> ParseTraceDocument(std::string_view json);

// The trace in `paths`: one trace document, or all the shards of one run (`trace --shard`),
// merged into the trace the unsharded run writes. Errors name the file.
util::Expected<TraceSet> LoadTraces(util::Env& env, const std::vector<std::string>& paths);

}  // namespace fbkit::tracer

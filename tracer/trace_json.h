// The fbkit.trace/1 document (keys and lists sorted: deterministic for the same run).
#pragma once

#include <string>

#include "tracer/trace.h"

namespace fbkit::tracer {

inline constexpr const char* kTraceSchema = "fbkit.trace/1";

// `with_details` adds per-test durations and failure messages (which hold timings, object
// addresses and temporary paths, so they differ between runs).
std::string TraceDocument(const TraceSet& trace, bool with_details);

}  // namespace fbkit::tracer

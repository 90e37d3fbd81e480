// The fbkit.trace/1 document (keys and lists sorted: deterministic for the same run).
#pragma once

#include <string>

#include "tracer/trace.h"

namespace fbkit::tracer {

inline constexpr const char* kTraceSchema = "fbkit.trace/1";

// `with_timing` adds per-test durations (they differ between runs).
std::string TraceDocument(const TraceSet& trace, bool with_timing);

}  // namespace fbkit::tracer

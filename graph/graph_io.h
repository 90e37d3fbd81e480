// Writing and reading graphs: fbkit.graph/1 JSON (read back for queries), GraphML for
// Gephi and DOT for Graphviz (nodes coloured by kind, optionally only a neighbourhood).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "graph/dep_graph.h"
#include "util/expected.h"

namespace fbkit::graph {

inline constexpr const char* kGraphSchema = "fbkit.graph/1";

std::string GraphJson(const DepGraph& g, const std::string& root, const JoinStats& stats);
util::Expected<DepGraph> ReadGraphJson(std::string_view json);

// A compact binary form of the same graph (nodes, edges, test files; not the join stats),
// for fast loading by queries: `fb-graph build --format binary`.
std::string GraphBinary(const DepGraph& g);
// Reads either form (binary when it starts with the binary magic, else JSON).
util::Expected<DepGraph> ReadGraph(std::string_view data);

std::string GraphMl(const DepGraph& g);

// With `focus`, only the nodes within `depth` edges of it (either direction).
std::string GraphDot(const DepGraph& g, std::optional<uint32_t> focus, int depth);

}  // namespace fbkit::graph

// `fb-graph build` (entity table + trace -> fbkit.graph/1, GraphML or DOT) and the queries
// `deps`, `rdeps`, `tests` and `path` over a built graph.
#pragma once

#include <CLI/CLI.hpp>

namespace fbkit::cli {

void AddGraphCommands(CLI::App& app, int* exit_code);

}  // namespace fbkit::cli

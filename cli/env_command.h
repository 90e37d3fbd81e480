// fb-graph env: build (or find in the cache) the environment a repo spec's install steps make.
#pragma once

#include <CLI/CLI.hpp>

namespace fbkit::cli {

void AddEnvCommand(CLI::App& app, int* exit_code);

}  // namespace fbkit::cli

// fb-extract infer: run an agent on every task as the benchmark defines it.
#pragma once

#include <CLI/CLI.hpp>

namespace fbkit::cli {

void AddInferCommand(CLI::App& app, int* exit_code);

}  // namespace fbkit::cli

// fb-extract eval: scores agents' patches (or the gold patches) on fbkit task directories.
#pragma once

#include <CLI/CLI.hpp>

namespace fbkit::cli {

void AddEvalCommand(CLI::App& app, int* exit_code);

}  // namespace fbkit::cli

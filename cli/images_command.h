// fb-extract images: container recipes for task directories and, with --engine, their images
// (extract/image/).
#pragma once

#include <CLI/CLI.hpp>

namespace fbkit::cli {

void AddImagesCommand(CLI::App& app, int* exit_code);

}  // namespace fbkit::cli

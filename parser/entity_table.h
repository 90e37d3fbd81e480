// Builds the entity table of a repository: finds its Python files, parses them on `jobs`
// threads (or takes them from the cache) and returns one JSON fragment per file, sorted by
// path. One bad file never stops the others: its problems are reported per file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "parser/entity.h"
#include "parser/source_files.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::parser {

struct EntitiesOptions {
  std::string root;  // absolute, canonical
  std::vector<std::string> excludes;
  int jobs = 1;
  std::optional<std::string> cache_dir;  // no cache when empty
  uint64_t max_file_bytes = uint64_t{64} << 20;
  bool references = false;  // also collect each entity's referenced names
};

struct FileDiagnostic {
  std::string path;
  int line = 0;
  int column = 0;
  std::string message;
};

struct EntitiesResult {
  std::vector<std::string_view> fragments;  // fbkit.entities/1 file objects, sorted by path
  // What the fragments point into: this run's parses and the cache's pack.
  std::vector<std::unique_ptr<std::string>> owned;
  std::shared_ptr<const std::string> pack;
  std::vector<FileError> errors;       // files that could not be read at all
  std::vector<FileDiagnostic> diagnostics;  // parse errors, by path then line
  size_t files = 0;
  size_t parsed = 0;     // parsed in this run
  size_t cached = 0;     // taken from the cache
  std::vector<std::string> warnings;  // cache problems: never fatal
};

// Called from worker threads, serialised, with (files done, total files).
using ProgressFn = std::function<void(size_t done, size_t total)>;

// Fails only when the root cannot be listed.
util::Expected<EntitiesResult> BuildEntities(util::Env& env, const EntitiesOptions& options,
                                             const ProgressFn& progress);

// The FileTables behind a result's fragments (parsed back from them), sorted by path.
util::Expected<std::vector<FileTable>> FileTables(const EntitiesResult& result);

}  // namespace fbkit::parser

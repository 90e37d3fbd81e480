#include "cli/entities_command.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/cli_common.h"
#include "cli/spec_options.h"
#include "parser/entities_json.h"
#include "parser/entity_table.h"
#include "util/parallel.h"

namespace fbkit::cli {
namespace {

struct EntitiesArgs {
  std::string root;
  std::string output = "-";
  int jobs = util::DefaultJobs();
  std::vector<std::string> excludes;
  SpecArgs spec;  // its exclude is added to --exclude
  std::string cache_dir;
  bool no_cache = false;
  uint64_t max_file_bytes = uint64_t{64} << 20;
  bool quiet = false;
};

constexpr size_t kMaxDiagnosticsShown = 50;

// The cache directory: --cache, else beside the output file, else the user's cache dir.
std::optional<std::string> CacheDir(const EntitiesArgs& args) {
  if (args.no_cache) return std::nullopt;
  if (!args.cache_dir.empty()) return args.cache_dir;
  if (args.output != "-") return util::JoinPath(util::DirName(args.output), ".fbkit-cache");
  return UserCacheDir("");
}

void Report(const parser::EntitiesResult& r, double seconds, bool quiet) {
  for (const auto& w : r.warnings) std::fprintf(stderr, "fb-graph: warning: %s\n", w.c_str());
  for (const auto& e : r.errors) {
    std::fprintf(stderr, "%s: error: %s\n", e.path.c_str(), e.message.c_str());
  }
  size_t shown = 0;
  for (const auto& d : r.diagnostics) {
    if (++shown > kMaxDiagnosticsShown) break;
    std::fprintf(stderr, "%s:%d:%d: %s\n", d.path.c_str(), d.line, d.column, d.message.c_str());
  }
  if (r.diagnostics.size() > kMaxDiagnosticsShown) {
    std::fprintf(stderr, "... and %zu more parse errors (all are in the output's parse_errors)\n",
                 r.diagnostics.size() - kMaxDiagnosticsShown);
  }
  if (quiet) return;
  std::fprintf(stderr,
               "fb-graph entities: %zu files (%zu parsed, %zu from cache), %zu parse errors, "
               "%zu unreadable, %.2f s\n",
               r.files, r.parsed, r.cached, r.diagnostics.size(), r.errors.size(), seconds);
}

int Run(const EntitiesArgs& args) {
  auto start = std::chrono::steady_clock::now();
  util::Env& env = util::RealEnv();
  auto root = env.RealPath(args.root);
  if (!root.ok()) return Fail("fb-graph entities", root.error());
  parser::EntitiesOptions options;
  options.root = *root;
  auto spec = ResolveSpec(args.spec, *root);
  if (!spec.ok()) return Fail("fb-graph entities", spec.error()), kExitUsage;
  options.excludes = args.excludes;
  options.excludes.insert(options.excludes.end(), spec->exclude.begin(), spec->exclude.end());
  options.jobs = args.jobs;
  options.cache_dir = CacheDir(args);
  options.max_file_bytes = args.max_file_bytes;
  Progress progress("fb-graph entities: files", !args.quiet);
  auto result = parser::BuildEntities(
      env, options, [&](size_t done, size_t total) { progress.Update(done, total); });
  progress.Clear();
  if (!result.ok()) return Fail("fb-graph entities", result.error());
  std::string doc = parser::EntitiesDocument(*root, result->fragments, result->errors);
  util::Status written = WriteOutput(env, args.output, doc);
  if (!written.ok()) return Fail("fb-graph entities", written.error());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Report(*result, seconds, args.quiet);
  return result->errors.empty() && result->diagnostics.empty() ? kExitOk : kExitFileErrors;
}

}  // namespace

void AddEntitiesCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<EntitiesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "entities", "Write the entity table of a repository as fbkit.entities/1 JSON");
  cmd->footer(
      "Parses every .py file under ROOT (skipping VCS dirs, __pycache__, node_modules, "
      "virtualenvs and --exclude matches) into modules, classes, functions, methods and nested "
      "defs with exact line and byte spans, signatures, docstrings, imports, __all__ and "
      "module-level assignments. Output is deterministic: files sorted by path, keys sorted, "
      "the same for any --jobs and with or without the cache.\n\n"
      "Exit status: 0 ok; 1 failure (bad ROOT, output not writable); 2 bad usage; 3 output "
      "written, but some files had parse errors or could not be read (named on stderr as "
      "path:line:column).");
  cmd->add_option("ROOT", args->root, "Repository root")->required();
  cmd->add_option("-o,--output", args->output, "Output file ('-' for stdout)");
  cmd->add_option("-j,--jobs", args->jobs, "Parser threads (default: all cores)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--exclude", args->excludes,
                  "Skip paths matching this glob (relative to ROOT; '*' crosses '/'; a pattern "
                  "without '/' also matches any path component). Repeatable; added to the "
                  "spec's exclude.");
  AddSpecOptions(cmd, &args->spec, 0);
  cmd->add_option("--cache", args->cache_dir,
                  "Cache directory (default: .fbkit-cache beside --output, else "
                  "$XDG_CACHE_HOME/fbkit or ~/.cache/fbkit)");
  cmd->add_flag("--no-cache", args->no_cache, "Neither read nor write the cache");
  cmd->add_option("--max-file-size", args->max_file_bytes,
                  "Files larger than this many bytes are reported, not parsed (default 64 MiB)");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress or summary on stderr");
  cmd->callback([args, exit_code] { *exit_code = Run(*args); });
}

}  // namespace fbkit::cli

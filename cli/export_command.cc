#include "cli/export_command.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_common.h"
#include "cli/extract_common.h"
#include "cli/spec_options.h"
#include "extract/dataset/export.h"
#include "extract/dataset/harbor.h"
#include "extract/make/select.h"
#include "util/batch.h"
#include "util/random.h"
#include "util/strings.h"

namespace fbkit::cli {
namespace {

struct ExportArgs {
  std::string tasks;
  extract::dataset::ExportFormat format = extract::dataset::ExportFormat::kFeatureBench;
  std::string output = "-";
  std::string base;
  std::string prefix = "fbkit";
  int jobs = 1;
  bool quiet = false;
};

// `--format`'s words, for the option and for the summary line.
const std::vector<std::pair<std::string, extract::dataset::ExportFormat>> kExportFormats = {
    {"featurebench", extract::dataset::ExportFormat::kFeatureBench},
    {"swebench", extract::dataset::ExportFormat::kSweBench},
    {"harbor", extract::dataset::ExportFormat::kHarbor}};

std::string FormatName(extract::dataset::ExportFormat format) {
  for (const auto& [word, f] : kExportFormats) {
    if (f == format) return word;
  }
  return "";
}

// Harbor: one task directory per task under the output directory.
int RunHarborExport(const ExportArgs& a, const std::vector<std::pair<std::string, std::string>>& list) {
  const std::string who = "fb-extract export";
  util::Env& env = util::RealEnv();
  if (a.output == "-") return Fail(who, "--format harbor writes directories: give -o DIR"), kExitUsage;
  if (auto s = env.MakeDirs(a.output); !s.ok()) return Fail(who, a.output + ": " + s.error());
  auto out = env.RealPath(a.output);
  if (!out.ok()) return Fail(who, a.output + ": " + out.error());
  auto scratch = MakeScratchDir("export");
  if (!scratch.ok()) return Fail(who, scratch.error());
  size_t failed = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    extract::dataset::HarborOptions o{*out, a.base, util::JoinPath(*scratch, "work")};
    auto dir = extract::dataset::WriteHarborTask(env, sandbox::RealLauncher(), list[i].second, o);
    if (!dir.ok()) {
      ++failed;
      std::fprintf(stderr, "%s: %s: %s\n", who.c_str(), list[i].second.c_str(), dir.error().c_str());
    } else if (!a.quiet) {
      std::fprintf(stderr, "[%zu/%zu] %s\n", i + 1, list.size(), dir->c_str());
    }
  }
  (void)env.RemoveAll(*scratch);
  if (!a.quiet) {
    std::fprintf(stderr, "%s: %zu Harbor tasks -> %s\n", who.c_str(), list.size() - failed, out->c_str());
  }
  return failed ? kExitFailure : kExitOk;
}

int RunExport(const ExportArgs& a) {
  const std::string who = "fb-extract export";
  util::Env& env = util::RealEnv();
  auto tasks = FindTasks(env, a.tasks);
  if (!tasks.ok()) return Fail(who, tasks.error());
  std::vector<std::pair<std::string, std::string>> list(tasks->begin(), tasks->end());
  if (a.format == extract::dataset::ExportFormat::kHarbor) return RunHarborExport(a, list);
  const extract::dataset::ExportFormat format = a.format;
  auto scratch = MakeScratchDir("export");
  if (!scratch.ok()) return Fail(who, scratch.error());
  Progress progress(who, !a.quiet);
  util::Batch<util::Expected<std::string>> batch;
  batch.jobs = a.jobs;
  batch.run = [&](size_t i, int) {
    return extract::dataset::ExportRow(env, sandbox::RealLauncher(), list[i].second, format,
                                       util::JoinPath(*scratch, std::to_string(i)), {a.base, a.prefix});
  };
  batch.failed = [](size_t, const std::string& what) -> util::Expected<std::string> {
    return util::Error{"internal error: " + what};
  };
  batch.report = [&](const auto& item) { progress.Update(item.done, item.total); };
  auto rows = util::RunBatch(list.size(), batch);
  progress.Clear();
  (void)env.RemoveAll(*scratch);
  std::string out;
  size_t failed = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    if (rows[i]->ok()) {
      out += **rows[i] + "\n";
    } else {
      ++failed;
      std::fprintf(stderr, "%s: %s: %s\n", who.c_str(), list[i].second.c_str(),
                   rows[i]->error().c_str());
    }
  }
  if (auto s = WriteOutput(env, a.output, out); !s.ok()) return Fail(who, a.output + ": " + s.error());
  if (!a.quiet) {
    std::fprintf(stderr, "%s: %zu rows (%s)%s%s\n", who.c_str(), list.size() - failed,
                 FormatName(format).c_str(),
                 a.output == "-" ? "" : " -> ", a.output == "-" ? "" : a.output.c_str());
  }
  return failed ? kExitFailure : kExitOk;
}

struct LiteArgs {
  std::string tasks;
  std::string output = "-";
  int size = 30;
  uint64_t seed = 42;
};

// The paper's Lite subset: `size` tasks drawn uniformly (seeded) from all of them, listed by
// their directories; an L2 task keeps its L1 task on disk, which eval and infer find beside it.
int RunLite(const LiteArgs& a) {
  const std::string who = "fb-extract lite";
  util::Env& env = util::RealEnv();
  if (a.size < 1) return Fail(who, "--size must be at least 1"), kExitUsage;
  auto tasks = FindTasks(env, a.tasks);
  if (!tasks.ok()) return Fail(who, tasks.error());
  std::vector<std::pair<std::string, std::string>> list(tasks->begin(), tasks->end());
  util::Rng rng(a.seed);
  for (size_t i = list.size(); i > 1; --i) std::swap(list[i - 1], list[rng.Below(i)]);
  if (list.size() > static_cast<size_t>(a.size)) list.resize(static_cast<size_t>(a.size));
  std::sort(list.begin(), list.end());
  std::string out = "# fbkit task list: fb-extract lite --size " + std::to_string(a.size) +
                    " --seed " + std::to_string(a.seed) + " (" + std::to_string(list.size()) +
                    " of " + std::to_string(tasks->size()) + " tasks)\n";
  for (const auto& [id, dir] : list) out += dir + "\n";
  if (auto s = WriteOutput(env, a.output, out); !s.ok()) return Fail(who, a.output + ": " + s.error());
  return kExitOk;
}

struct ImportArgs {
  std::string rows;
  std::string original;
  std::string output;
  SpecArgs spec;
  bool quiet = false;
};

// FeatureBench rows (JSON lines) into task directories; L1 rows first, so that an L2 row
// finds its L1 task. One bad row is reported (file:line) and the others go on.
int RunImport(const ImportArgs& a) {
  const std::string who = "fb-extract import";
  util::Env& env = util::RealEnv();
  auto original = env.RealPath(a.original);
  if (!original.ok()) return Fail(who, "--repo: " + original.error()), kExitUsage;
  auto text = env.ReadFile(a.rows);
  if (!text.ok()) return Fail(who, a.rows + ": " + text.error());
  auto spec = ResolveSpec(a.spec, *original);
  if (!spec.ok()) return Fail(who, spec.error()), kExitUsage;
  if (auto s = env.MakeDirs(a.output); !s.ok()) return Fail(who, a.output + ": " + s.error());
  auto out = env.RealPath(a.output);
  if (!out.ok()) return Fail(who, a.output + ": " + out.error());
  std::vector<std::pair<int, std::pair<size_t, std::string>>> rows;  // (level, (line, text))
  for (const auto& [line_no, line] : util::NumberedLines(*text)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    int level = line.find(".lv2\"") != std::string::npos ? 2 : 1;
    rows.push_back({level, {line_no, line}});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  auto scratch = MakeScratchDir("import");
  if (!scratch.ok()) return Fail(who, scratch.error());
  size_t failed = 0, done = 0;
  for (const auto& [level, item] : rows) {
    extract::dataset::ImportOptions o{*original, *out, util::JoinPath(*scratch, "row"), *spec};
    auto r = extract::dataset::ImportRow(env, sandbox::RealLauncher(), AgentTests(), item.second, o);
    ++done;
    if (!r.ok()) {
      ++failed;
      std::fprintf(stderr, "%s: %s:%zu: %s\n", who.c_str(), a.rows.c_str(), item.first,
                   r.error().c_str());
    } else if (!a.quiet) {
      std::fprintf(stderr, "[%zu/%zu] %s: %zu F2P, %zu P2P tests\n", done, rows.size(),
                   r->instance_id.c_str(), r->f2p_tests, r->p2p_tests);
    }
  }
  (void)env.RemoveAll(*scratch);
  if (rows.empty()) return Fail(who, a.rows + ": no rows");
  return failed ? kExitFailure : kExitOk;
}

// `export`: task directories as FeatureBench or SWE-bench dataset rows.
void AddExportCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Write task directories as dataset rows, one JSON object per line. featurebench: "
      "FeatureBench's dataset fields with its semantics (patch: original -> pre-solved mask; "
      "L1 test_patch deletes the F2P file, L2 test_patch rewrites it; FAIL_TO_PASS / "
      "PASS_TO_PASS: lists of test files; repo_settings: a JSON string). swebench: SWE-bench's "
      "fields (patch: the gold fix; FAIL_TO_PASS / PASS_TO_PASS: JSON strings of test ids; an "
      "L1 row's base_commit is the commit of the task's presolved/ repository). harbor: a Harbor "
      "task directory per task under -o DIR (task.toml, instruction.md, environment/Dockerfile "
      "making the agent's image, solution/solve.sh applying the gold fix, tests/test.sh writing "
      "the reward; docs/containers.md).");
  cmd->add_option("TASKS", a->tasks, "A task directory, a directory of them, or a task list")
      ->required();
  AddChoice(cmd, "--format", &a->format, kExportFormats, "featurebench (default), swebench or harbor");
  cmd->add_option("-o,--output", a->output, "Output file (.jsonl; default: stdout); harbor: a directory");
  cmd->add_option("--base", a->base,
                  "harbor, swebench: the base image, as given to `fb-extract images` (default: "
                  "fbkit's base recipe, Debian 12 from debian:bookworm-slim)");
  cmd->add_option("--prefix", a->prefix, "swebench: the images' name prefix, as given to `fb-extract images`");
  cmd->add_option("-j,--jobs", a->jobs, "Tasks at once (default 1)");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  cmd->callback([a, exit_code] { *exit_code = RunExport(*a); });
}

// `import`: FeatureBench dataset rows as task directories.
void AddImportCommand(CLI::App& app, int* exit_code) {
  auto im = std::make_shared<ImportArgs>();
  CLI::App* imp = app.add_subcommand(
      "import",
      "Turn FeatureBench dataset rows (JSON lines, as `export --format featurebench` writes "
      "them or as FeatureBench publishes them) into task directories that eval, infer and "
      "export read: the pre-solved codebase is the original at base_commit with the row's "
      "patch applied as FeatureBench's harness does and the FAIL_TO_PASS files removed; the "
      "test ids are those that pass on the original (one sandboxed pytest run per row).");
  imp->add_option("ROWS", im->rows, "A .jsonl file of FeatureBench rows")->required();
  imp->add_option("--repo", im->original, "A git checkout of the rows' repository (only read)")
      ->required();
  imp->add_option("-o,--output", im->output, "Output directory for the task directories")
      ->required();
  imp->add_flag("-q,--quiet", im->quiet, "No progress on stderr");
  AddSpecOptions(imp, &im->spec, kSpecRun);
  imp->callback([im, exit_code] { *exit_code = RunImport(*im); });
}

// `lite`: a seeded random subset of the tasks as a task list.
void AddLiteCommand(CLI::App& app, int* exit_code) {
  auto l = std::make_shared<LiteArgs>();
  CLI::App* lite = app.add_subcommand(
      "lite",
      "Choose a random subset of the tasks (FeatureBench's Lite: 30 tasks) and write it as a "
      "task list: one task directory per line, which export, eval and infer accept in place "
      "of a directory of tasks. Same tasks and --seed, same list.");
  lite->add_option("TASKS", l->tasks, "A directory of task directories (or a task list)")
      ->required();
  lite->add_option("--size", l->size, "Tasks in the subset (default 30)");
  lite->add_option("--seed", l->seed, "Seed of the random choice (default 42)");
  lite->add_option("-o,--output", l->output, "Output file (default: stdout)");
  lite->callback([l, exit_code] { *exit_code = RunLite(*l); });
}

}  // namespace

void AddExportCommands(CLI::App& app, int* exit_code) {
  AddExportCommand(app, exit_code);
  AddImportCommand(app, exit_code);
  AddLiteCommand(app, exit_code);
}

}  // namespace fbkit::cli

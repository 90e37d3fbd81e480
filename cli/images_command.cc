#include "cli/images_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/extract_common.h"
#include "extract/image/images.h"
#include "util/strings.h"

namespace fbkit::cli {
namespace {

struct ImagesArgs {
  std::string tasks;
  std::string output;
  std::string base;
  std::string engine = "none";
  std::string prefix = "fbkit";
  double timeout = 3600;
  bool featurebench = false;
  bool quiet = false;
};

int RunImages(const ImagesArgs& a) {
  const std::string who = "fb-extract images";
  util::Env& env = util::RealEnv();
  if (a.engine != "none" && a.engine != "docker" && a.engine != "podman") {
    return Fail(who, "--engine: none, docker or podman, not '" + a.engine + "'"), kExitUsage;
  }
  if (a.prefix.empty() || extract::image::ImageNamePart(a.prefix) != a.prefix) {
    return Fail(who, "--prefix: lower-case letters, digits, '.', '_' and '-' (" + a.prefix + ")"), kExitUsage;
  }
  auto tasks = FindTasks(env, a.tasks);
  if (!tasks.ok()) return Fail(who, tasks.error());
  if (auto s = env.MakeDirs(a.output); !s.ok()) return Fail(who, a.output + ": " + s.error());
  auto out = env.RealPath(a.output);
  if (!out.ok()) return Fail(who, a.output + ": " + out.error());
  auto scratch = MakeScratchDir("images");
  if (!scratch.ok()) return Fail(who, scratch.error());
  std::unique_ptr<extract::image::CliEngine> engine;
  if (a.engine != "none") {
    std::string log = util::JoinPath(*out, "logs/engine-info.log");
    if (auto s = extract::image::CheckEngine(env, sandbox::RealLauncher(), a.engine, log); !s.ok()) {
      (void)env.RemoveAll(*scratch);
      return Fail(who, "--engine " + a.engine + ": " + s.error());
    }
    engine = std::make_unique<extract::image::CliEngine>(env, sandbox::RealLauncher(), a.engine,
                                                         a.timeout, *scratch);
  }
  std::vector<std::string> dirs;
  for (const auto& [id, dir] : *tasks) dirs.push_back(dir);
  extract::image::ImagesOptions o;
  o.recipes.out_dir = *out;
  o.recipes.base = a.base;
  o.recipes.prefix = a.prefix;
  o.recipes.featurebench = a.featurebench;
  o.recipes.work_dir = util::JoinPath(*scratch, "work");
  if (!a.quiet) o.say = [&](const std::string& line) { std::fprintf(stderr, "%s: %s\n", who.c_str(), line.c_str()); };
  auto run = extract::image::MakeImages(env, sandbox::RealLauncher(), engine.get(), dirs, o);
  (void)env.RemoveAll(*scratch);
  if (!run.ok()) return Fail(who, run.error());
  size_t failed = 0;
  for (const auto& t : run->tasks) {
    if (t.error.empty()) continue;
    ++failed;
    std::fprintf(stderr, "%s: %s: %s\n", who.c_str(), t.task_dir.c_str(), t.error.c_str());
  }
  if (!a.quiet) {
    std::fprintf(stderr, "%s: %zu of %zu tasks %s", who.c_str(), run->tasks.size() - failed,
                 run->tasks.size(), engine ? "have their images" : "have their recipes");
    if (engine) std::fprintf(stderr, " (%zu built, %zu present)", run->built, run->present);
    std::fprintf(stderr, " -> %s/images.json\n", out->c_str());
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace

void AddImagesCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<ImagesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "images",
      "Write container recipes (Dockerfiles and their build contexts) for task directories and, "
      "with --engine, build them: per task an environment image (the base, the spec's "
      "interpreter and install steps run in a copy of the pre-solved tree, as fbkit builds its "
      "environments; tests run with /fbkit/pytest.sh) and the image an agent works in (L1: the "
      "pre-solved tree at /testbed, the very commit of presolved/; L2: an empty project). No "
      "layer holds the gold patch, the F2P file or the original's history. Tags are hashes of "
      "the recipes: same tasks, same recipes byte for byte; an image already present is not "
      "built again. OUT/images.json lists every task's images (docs/containers.md).");
  cmd->add_option("TASKS", a->tasks, "A task directory, a directory of them, or a task list")
      ->required();
  cmd->add_option("-o,--output", a->output, "Output directory of the recipes (and images.json)")
      ->required();
  cmd->add_option("--base", a->base,
                  "The base image (with the spec's interpreter, pytest unless the install steps "
                  "bring it, git and sh). Default: fbkit's base recipe, Debian 12 from " +
                      std::string(extract::image::kDebianBase));
  cmd->add_option("--engine", a->engine, "none (recipes only; default), docker or podman");
  cmd->add_option("--prefix", a->prefix, "The images' name prefix (default fbkit)");
  cmd->add_flag("--featurebench", a->featurebench,
                 "Also FeatureBench's grading image of each task (an L2 task's is its L1 sibling's: the "
                 "original at /testbed and /root/my_repo, as its `fb eval` expects; it holds the answer: "
                 "for graders only), which `export --format featurebench` rows name");
  cmd->add_option("--build-timeout", a->timeout, "Seconds per image build (default 3600)");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
  cmd->callback([a, exit_code] { *exit_code = RunImages(*a); });
}

}  // namespace fbkit::cli

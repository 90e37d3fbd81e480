// A run of `fb-extract images`: the recipes of every task (recipe.h) and, with an engine,
// their images built in dependency order (the base, each environment once, each task), an
// image already present under its tag never built again; one task's failure is its own.
// The run's manifest (OUT/images.json, fbkit.images/1) is owned here in both directions.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "extract/image/engine.h"
#include "extract/image/recipe.h"
#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::image {

struct ImagesOptions {
  RecipeOptions recipes;
  std::function<void(const std::string&)> say;  // progress lines (may be empty)
};

struct TaskImages {
  std::string task_dir;
  TaskRecipes recipes;
  std::string error;  // why its recipes or images could not be made ("" when they were)
};

struct ImagesRun {
  std::string base;  // the base image every recipe starts FROM
  std::vector<TaskImages> tasks;
  size_t built = 0;    // images this run built
  size_t present = 0;  // images found under their tag (not built again)
  bool engine = false;
};

// Writes the recipes of `task_dirs` and, when `engine` is given, builds them (logs in
// OUT/logs/). Then OUT/images.json.
util::Expected<ImagesRun> MakeImages(util::Env& env, sandbox::Launcher& launcher, Engine* engine,
                                     const std::vector<std::string>& task_dirs,
                                     const ImagesOptions& options);

// images.json: the run's tasks sorted by instance id with their images' tags and recipe
// directories (relative to OUT); no time or host in it.
std::string ManifestJson(const ImagesRun& run, const std::string& out_dir);

// The tasks of a manifest (errors name the file).
util::Expected<std::vector<TaskImages>> ReadManifest(util::Env& env, const std::string& path);

}  // namespace fbkit::extract::image

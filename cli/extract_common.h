// Pieces fb-extract's commands share: finding task directories (sharding: cli_common.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "cli/cli_common.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::cli {

// --trust-task-settings of verify and eval (extract::taskdir::CheckTaskSettings).
inline constexpr const char* kTrustTaskSettingsHelp =
    "The task directories are yours: their repo_settings may widen the sandbox (an interpreter "
    "outside the system's directories, absolute pythonpath entries, the network, limits above "
    "the defaults)";

// instance id -> task directory: TASKS itself when it is one, the directories a task list
// names (a file: one directory per line, relative to the list; # comments), else TASKS's
// subdirectories that hold an instance.json.
util::Expected<std::map<std::string, std::string>> FindTasks(util::Env& env,
                                                             const std::string& tasks);

// --sandbox container's images, by instance id, from the manifest `--images` names (fb-extract
// images' images.json): each task's environment image (eval's tests) or, with `task_image`,
// the image an agent works in (infer). Checks the engine; else the exit code to stop with,
// `who` naming the command in the error.
std::optional<int> ContainerImages(util::Env& env, const char* who, const std::string& engine,
                                   const std::string& manifest, bool task_image,
                                   std::map<std::string, std::string>* images);

}  // namespace fbkit::cli

#include "cli/extract_common.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "extract/image/images.h"
#include "extract/make/all.h"
#include "extract/taskdir/task_dir.h"
#include "sandbox/sandbox.h"
#include "util/strings.h"

namespace fbkit::cli {

namespace {

// The task directories a task list names, one per line ('#' comments and blank lines
// skipped; relative paths are relative to the list's directory).
util::Expected<std::vector<std::string>> ReadTaskList(util::Env& env, const std::string& list) {
  auto text = env.ReadFile(list);
  if (!text.ok()) return util::Error{list + ": " + text.error()};
  std::vector<std::string> dirs;
  for (auto [line_no, line] : util::NumberedLines(*text)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::string dir = line[0] == '/' ? line : util::JoinPath(util::DirName(list), line);
    auto real = env.RealPath(dir);
    if (!real.ok() || !extract::taskdir::IsTaskDir(env, *real)) {
      return util::Error{list + ":" + std::to_string(line_no) + ": " + line +
                         " is no task directory"};
    }
    dirs.push_back(*real);
  }
  return dirs;
}

}  // namespace

util::Expected<std::map<std::string, std::string>> FindTasks(util::Env& env,
                                                             const std::string& tasks) {
  auto root = env.RealPath(tasks);
  if (!root.ok()) return util::Error{tasks + ": " + root.error()};
  std::vector<std::string> dirs;
  auto st = env.Stat(*root, true);
  if (st.ok() && st->type == util::FileType::kRegular) {
    auto listed = ReadTaskList(env, *root);
    if (!listed.ok()) return listed.failure();
    dirs = std::move(*listed);
  } else if (extract::taskdir::IsTaskDir(env, *root)) {
    dirs.push_back(*root);
  } else {
    auto entries = env.ListDir(*root);
    if (!entries.ok()) return util::Error{tasks + ": " + entries.error()};
    for (const auto& e : *entries) {
      std::string dir = util::JoinPath(*root, e.name);
      if (e.type == util::FileType::kDirectory && extract::taskdir::IsTaskDir(env, dir)) {
        dirs.push_back(dir);
      }
    }
  }
  std::map<std::string, std::string> out;
  for (const auto& dir : dirs) {
    auto info = extract::taskdir::ReadInstance(env, extract::taskdir::TaskDir{dir});
    if (!info.ok()) return info.failure();
    out[info->instance_id] = dir;
  }
  if (out.empty() && env.Stat(extract::make::AllSummaryPath(*root), false).ok()) {
    return util::Error{tasks + ": no task directories: `fb-extract all` made none here (its "
                               "summary.json lists every test file left out, with the rule)"};
  }
  if (out.empty()) return util::Error{tasks + ": no task directories (with instance.json) found"};
  return out;
}

std::optional<int> ContainerImages(util::Env& env, const char* who, const std::string& engine,
                                   const std::string& manifest, bool task_image,
                                   std::map<std::string, std::string>* images) {
  if (auto s = sandbox::CheckContainerEngine(engine); !s.ok()) return Fail(who, s.error());
  if (manifest.empty()) {
    return Fail(who, "--sandbox container needs --images OUT/images.json (fb-extract images "
                     "TASKS -o OUT --engine podman builds the tasks' images)"), kExitUsage;
  }
  auto read = extract::image::ReadManifest(env, manifest);
  if (!read.ok()) return Fail(who, read.error());
  for (const auto& t : *read) {
    (*images)[t.recipes.instance_id] = task_image ? t.recipes.task.tag : t.recipes.environment.tag;
  }
  return std::nullopt;
}

}  // namespace fbkit::cli

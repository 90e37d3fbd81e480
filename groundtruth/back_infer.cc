#include "groundtruth/back_infer.h"

#include <set>

#include "groundtruth/entity_changes.h"
#include "runner/git.h"

namespace fbkit::groundtruth {

util::Status BackInfer(util::Env& env, sandbox::Launcher& launcher, parser::PythonParser& parser,
                       const Instance& instance, const std::string& work_dir,
                       AgentInstance* agent) {
  if (agent->patch.empty()) return {};
  runner::GitProgram git(env, launcher, util::JoinPath(work_dir, "logs"));
  if (auto r =
          git.Run(instance.repo, {"rev-parse", "--verify", instance.base_commit + "^{commit}"});
      !r.ok()) {
    return r.failure();
  }
  auto versions =
      PatchVersions(env, launcher, instance.repo, instance.base_commit, agent->patch, work_dir);
  (void)env.RemoveAll(work_dir);
  if (!versions.ok()) {
    if (!agent->applied) agent->applied = false;
    return {};
  }
  if (!agent->applied) agent->applied = true;
  std::set<std::string> known;
  for (const auto& t : agent->tasks) known.insert(t.entity);
  for (const auto& c : DiffEntities(parser, *versions).entities) {
    if (c.change == Change::kCosmetic || known.count(c.entity)) continue;
    agent->tasks.push_back({c.entity, c.file, ChangeName(c.change), ""});
  }
  return {};
}

}  // namespace fbkit::groundtruth

#include "extract/dataset/harbor.h"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "extract/dataset/verifier.h"
#include "extract/image/recipe.h"
#include "extract/taskdir/task_dir.h"
#include "util/strings.h"

namespace fbkit::extract::dataset {

namespace {

std::string TomlString(const std::string& s) { return nlohmann::json(s).dump(); }

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

std::string TaskToml(const taskdir::Instance& inst, double verifier_seconds) {
  std::string t = "# fbkit.harbor/1: " + inst.instance_id + " (written by fb-extract export --format harbor)\n";
  t += "schema_version = \"1.4\"\n\n[metadata]\n";
  t += "instance_id = " + TomlString(inst.instance_id) + "\n";
  t += "repo = " + TomlString(inst.repo) + "\n";
  t += "base_commit = " + TomlString(inst.base_commit) + "\n";
  t += "level = " + std::to_string(inst.level) + "\n";
  t += "author_name = \"fbkit\"\n";
  t += "\n[verifier]\ntimeout_sec = " + Seconds(verifier_seconds) + "\n";
  t += "\n[agent]\ntimeout_sec = 3600.0\n";
  t += "\n[environment]\nbuild_timeout_sec = 3600.0\n";
  return t;
}

// test.sh: the reward is 0 until the grader says otherwise; a failed preparation leaves it.
std::string TestScript(const Verifier& v, double seconds) {
  return "#!/bin/bash\n"
         "# fbkit.harbor/1 verifier: the reward is 0 unless every FAIL_TO_PASS test passes and every\n"
         "# PASS_TO_PASS test holds (tests/grade.py).\n"
         "mkdir -p /logs/verifier && echo 0 > /logs/verifier/reward.txt\n"
         "fbkit_fail() { echo \"fbkit: $1\"; exit 0; }\n" +
         v.prepare + "export FBKIT_OUTCOMES=/logs/verifier/outcomes.json\n" +
         "timeout " + std::to_string(static_cast<long>(seconds)) + " " + v.pytest +
         " > /logs/verifier/pytest.log 2>&1\n"
         "tail -n 5 /logs/verifier/pytest.log\n"
         "/fbkit/python /tests/grade.py score /tests/task.json /logs/verifier/outcomes.json /logs/verifier\n"
         "exit 0\n";
}

util::Status Write(util::Env& env, const std::string& path, const std::string& bytes) {
  if (auto s = env.MakeDirs(util::DirName(path)); !s.ok()) return s;
  if (auto s = env.WriteFileAtomic(path, bytes); !s.ok()) return util::Error{path + ": " + s.error()};
  return util::Status::Ok();
}

}  // namespace

util::Expected<std::string> WriteHarborTask(util::Env& env, sandbox::Launcher& launcher,
                                            const std::string& task_dir, const HarborOptions& o) {
  auto inst = taskdir::ReadInstance(env, taskdir::TaskDir{task_dir});
  if (!inst.ok()) return inst.failure();
  if (!util::IsFileName(inst->instance_id)) return util::Error{"instance_id cannot name a directory"};
  std::string dir = util::JoinPath(o.out_dir, inst->instance_id);
  (void)env.RemoveAll(dir);
  auto context = image::WriteOneContext(env, launcher, task_dir, o.base, util::JoinPath(dir, "environment"),
                                        o.work_dir);
  if (!context.ok()) return context.failure();
  double per_file = inst->spec.timeout > 0 ? inst->spec.timeout : 600;
  size_t files = inst->f2p_files.size() + inst->p2p_files.size();
  double seconds = per_file * static_cast<double>(files > 0 ? files : 1);
  auto verifier = MakeVerifier(env, task_dir, *context);
  if (!verifier.ok()) return verifier.failure();
  std::map<std::string, std::string> out;
  out["task.toml"] = TaskToml(*inst, seconds + (inst->level == 2 ? 3600 : 60));
  out["instruction.md"] = inst->problem_statement;
  out["solution/gold.diff"] = inst->patch;
  out["solution/solve.sh"] =
      "#!/bin/bash\n# fbkit.harbor/1: the gold fix, applied as an agent's patch would be.\n"
      "cd /testbed && git apply --whitespace=nowarn /solution/gold.diff\n";
  for (const auto& [name, bytes] : verifier->files) out["tests/" + name] = bytes;
  out["tests/test.sh"] = TestScript(*verifier, seconds);
  for (const auto& [rel, bytes] : out) {
    if (auto s = Write(env, util::JoinPath(dir, rel), bytes); !s.ok()) return s.failure();
  }
  return dir;
}

}  // namespace fbkit::extract::dataset

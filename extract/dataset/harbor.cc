#include "extract/dataset/harbor.h"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "extract/dataset/harbor_files.h"
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

std::string Joined(const std::vector<std::string>& files) {
  std::string out;
  for (const auto& f : files) out += " " + util::ShellQuote(f);
  return out;
}

// test.sh's opening: the reward is 0 until the grader says otherwise.
const char kTestHead[] =
    "#!/bin/bash\n"
    "# fbkit.harbor/1 verifier: the reward is 0 unless every FAIL_TO_PASS test passes and every\n"
    "# PASS_TO_PASS test holds (tests/grade.py).\n"
    "mkdir -p /logs/verifier && echo 0 > /logs/verifier/reward.txt\n";

std::string RunAndScore(const std::vector<std::string>& files, double seconds) {
  return "export PYTHONPATH=/tests${PYTHONPATH:+:$PYTHONPATH} FBKIT_OUTCOMES=/logs/verifier/outcomes.json\n"
         "timeout " + std::to_string(static_cast<long>(seconds)) + " /fbkit/pytest.sh -p fbkit_outcomes" +
         Joined(files) + " > /logs/verifier/pytest.log 2>&1\n"
         "tail -n 5 /logs/verifier/pytest.log\n"
         "/fbkit/python /tests/grade.py score /tests/task.json /logs/verifier/outcomes.json /logs/verifier\n"
         "exit 0\n";
}

std::string Level1Test(const taskdir::Instance& inst, double seconds) {
  std::vector<std::string> files = inst.f2p_files;
  files.insert(files.end(), inst.p2p_files.begin(), inst.p2p_files.end());
  return std::string(kTestHead) +
         "cd /testbed || exit 0\n"
         "/fbkit/python /tests/grade.py restore /tests/task.json || exit 0\n"
         "git apply --whitespace=nowarn /tests/test_patch.diff || { echo 'fbkit: the test patch does not "
         "apply'; exit 0; }\n" +
         RunAndScore(files, seconds);
}

// L2: the environment built now (install steps, from the verifier's files), the original
// tree restored at /fbkit/grade with the rewritten F2P file, the agent's agent_code (in
// /testbed) importable beside it.
std::string Level2Test(const taskdir::Instance& inst, const std::string& env_script, double seconds) {
  return std::string(kTestHead) + env_script +
         "mkdir -p /fbkit/grade && tar -xf /tests/src.tar -C /fbkit/grade && cd /fbkit/grade && git init -q . "
         "&& git apply --whitespace=nowarn /tests/original.diff && git apply --whitespace=nowarn "
         "/tests/test_patch.diff || { echo 'fbkit: the original tree could not be restored'; exit 0; }\n"
         "(" + image::CopyBuiltCommand("/fbkit/grade") + ")\n"
         "export PYTHONPATH=/testbed\n" +
         RunAndScore(inst.f2p_files, seconds);
}

std::string TaskJson(const taskdir::Instance& inst, const std::vector<std::string>& grader_files) {
  nlohmann::ordered_json j;
  j["instance_id"] = inst.instance_id;
  j["level"] = inst.level;
  j["f2p_files"] = inst.f2p_files;
  j["p2p_files"] = inst.p2p_files;
  j["f2p_tests"] = inst.f2p_tests;
  j["p2p_tests"] = inst.p2p_tests;
  j["grader_files"] = grader_files;
  return j.dump(1) + "\n";
}

util::Status Write(util::Env& env, const std::string& path, const std::string& bytes) {
  if (auto s = env.MakeDirs(util::DirName(path)); !s.ok()) return s;
  if (auto s = env.WriteFileAtomic(path, bytes); !s.ok()) return util::Error{path + ": " + s.error()};
  return util::Status::Ok();
}

}  // namespace

util::Expected<std::string> WriteHarborTask(util::Env& env, runner::Launcher& launcher,
                                            const std::string& task_dir, const HarborOptions& o) {
  auto inst = taskdir::ReadInstance(env, taskdir::TaskDir{task_dir});
  if (!inst.ok()) return util::Error{inst.error()};
  if (!util::IsFileName(inst->instance_id)) return util::Error{"instance_id cannot name a directory"};
  std::string dir = util::JoinPath(o.out_dir, inst->instance_id);
  (void)env.RemoveAll(dir);
  auto context = image::WriteOneContext(env, launcher, task_dir, o.base, util::JoinPath(dir, "environment"),
                                        o.work_dir);
  if (!context.ok()) return util::Error{context.error()};
  double per_file = inst->spec.timeout > 0 ? inst->spec.timeout : 600;
  size_t files = inst->f2p_files.size() + inst->p2p_files.size();
  double seconds = per_file * static_cast<double>(files > 0 ? files : 1);
  std::map<std::string, std::string> out;
  out["task.toml"] = TaskToml(*inst, seconds + (inst->level == 2 ? 3600 : 60));
  out["instruction.md"] = inst->problem_statement;
  out["solution/gold.diff"] = inst->patch;
  out["solution/solve.sh"] =
      "#!/bin/bash\n# fbkit.harbor/1: the gold fix, applied as an agent's patch would be.\n"
      "cd /testbed && git apply --whitespace=nowarn /solution/gold.diff\n";
  out["tests/test_patch.diff"] = inst->test_patch;
  out["tests/grade.py"] = std::string(util::FindEmbedded(HarborFiles(), "grade.py"));
  out["tests/fbkit_outcomes.py"] = std::string(util::FindEmbedded(HarborFiles(), "fbkit_outcomes.py"));
  std::vector<std::string> grader;
  if (inst->level == 1) {
    auto presolved = taskdir::PlainPresolved(env, taskdir::TaskDir{task_dir});
    if (!presolved.ok()) return util::Error{presolved.error()};
    grader = taskdir::GraderFiles(*presolved, inst->f2p_files);
    out["tests/test.sh"] = Level1Test(*inst, seconds);
  } else {
    auto l1 = taskdir::Level1Task(env, taskdir::TaskDir{task_dir});
    if (!l1.ok()) return util::Error{l1.error()};
    auto original = env.ReadFile(l1->patch());
    if (!original.ok()) return util::Error{l1->patch() + ": " + original.error()};
    out["tests/original.diff"] = *original;
    for (const auto& [name, bytes] : context->verifier_files) out["tests/" + name] = bytes;
    out["tests/test.sh"] = Level2Test(*inst, context->verifier_script, seconds);
  }
  out["tests/task.json"] = TaskJson(*inst, grader);
  for (const auto& [rel, bytes] : out) {
    if (auto s = Write(env, util::JoinPath(dir, rel), bytes); !s.ok()) return util::Error{s.error()};
  }
  return dir;
}

}  // namespace fbkit::extract::dataset

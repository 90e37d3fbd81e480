#include "extract/dataset/verifier.h"

#include <nlohmann/json.hpp>

#include "extract/dataset/harbor_files.h"
#include "extract/taskdir/task_dir.h"
#include "util/hash.h"
#include "util/strings.h"
#include "util/utf8.h"

namespace fbkit::extract::dataset {

namespace {

std::string Joined(const std::vector<std::string>& files) {
  std::string out;
  for (const auto& f : files) out += " " + util::ShellQuote(f);
  return out;
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

const char kLevel1Prepare[] =
    "cd /testbed || fbkit_fail 'no /testbed'\n"
    "/fbkit/python /tests/grade.py restore /tests/task.json || fbkit_fail 'test code could not be put back'\n"
    "git apply --whitespace=nowarn /tests/test_patch.diff || fbkit_fail 'the test patch does not apply'\n";

}  // namespace

util::Expected<Verifier> MakeVerifier(util::Env& env, const std::string& task_dir,
                                      const image::OneContext& context) {
  const taskdir::Instance& inst = context.instance;
  Verifier v;
  v.files["test_patch.diff"] = inst.test_patch;
  v.files["grade.py"] = std::string(util::FindEmbedded(HarborFiles(), "grade.py"));
  v.files["fbkit_outcomes.py"] = std::string(util::FindEmbedded(HarborFiles(), "fbkit_outcomes.py"));
  std::vector<std::string> grader, files = inst.f2p_files;
  if (inst.level == 1) {
    auto presolved = taskdir::PlainPresolved(env, taskdir::TaskDir{task_dir});
    if (!presolved.ok()) return presolved.failure();
    grader = taskdir::GraderFiles(env, *presolved, inst.f2p_files);
    files.insert(files.end(), inst.p2p_files.begin(), inst.p2p_files.end());
    v.prepare = kLevel1Prepare;
  } else {
    auto l1 = taskdir::Level1Task(env, taskdir::TaskDir{task_dir});
    if (!l1.ok()) return l1.failure();
    auto original = env.ReadFile(l1->patch());
    if (!original.ok()) return util::Error{l1->patch() + ": " + original.error()};
    v.files["original.diff"] = *original;
    for (const auto& [name, bytes] : context.verifier_files) v.files[name] = bytes;
    v.prepare = context.verifier_script +
                "mkdir -p /fbkit/grade && tar -xf /tests/src.tar -C /fbkit/grade && cd /fbkit/grade && "
                "git init -q . && git apply --whitespace=nowarn /tests/original.diff && git apply "
                "--whitespace=nowarn /tests/test_patch.diff || fbkit_fail 'the original tree could not be "
                "restored'\n"
                "(" + image::CopyBuiltCommand("/fbkit/grade") + ")\n"
                "export PYTHONPATH=/testbed\n";
  }
  v.files["task.json"] = TaskJson(inst, grader);
  v.pytest = "env PYTHONPATH=/tests${PYTHONPATH:+:$PYTHONPATH} /fbkit/pytest.sh -p fbkit_outcomes" + Joined(files);
  return v;
}

std::string WriteFilesScript(const std::map<std::string, std::string>& files, const std::string& dir) {
  std::string sh = "mkdir -p " + util::ShellQuote(dir) + "\n";
  for (const auto& [name, bytes] : files) {
    std::string delimiter = "FBKIT_EOF_" + util::Sha256Hex(bytes).substr(0, 16);
    std::string path = util::ShellQuote(util::JoinPath(dir, name));
    if (!util::DirName(name).empty()) {
      sh += "mkdir -p " + util::ShellQuote(util::JoinPath(dir, util::DirName(name))) + "\n";
    }
    bool text = bytes.empty() || (bytes.back() == '\n' && bytes.find('\0') == std::string::npos &&
                                  util::FindInvalidUtf8(bytes) == std::string::npos &&
                                  bytes.find("\n" + delimiter + "\n") == std::string::npos);
    if (bytes.empty()) {
      sh += ": > " + path + "\n";
    } else if (text) {
      sh += "cat > " + path + " <<'" + delimiter + "'\n" + bytes + delimiter + "\n";
    } else {
      sh += "base64 -d > " + path + " <<'" + delimiter + "'\n" + util::Base64Lines(bytes) + delimiter + "\n";
    }
  }
  return sh;
}

}  // namespace fbkit::extract::dataset

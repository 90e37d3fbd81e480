#include "extract/export.h"

#include <nlohmann/json.hpp>

#include "extract/verify.h"
#include "tracer/git.h"
#include "util/json_read.h"

namespace fbkit::extract {

namespace {

using Json = nlohmann::ordered_json;

const std::vector<std::string> kDiff = {"diff", "--no-color", "--no-ext-diff", "--binary"};

std::vector<std::string> Diff(const std::string& from, const std::string& to,
                              const std::vector<std::string>& paths = {}) {
  std::vector<std::string> args = kDiff;
  args.push_back(from);
  args.push_back(to);
  if (!paths.empty()) args.push_back("--");
  args.insert(args.end(), paths.begin(), paths.end());
  return args;
}

util::Status Commit(tracer::Git& git, const std::string& dir, const std::string& message) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"add", "-A"}, {"commit", "-q", "--no-verify", "--allow-empty", "-m", message}}) {
    if (auto r = git.Run(dir, args); !r.ok()) return util::Error{r.error()};
  }
  return util::Status::Ok();
}

util::Expected<nlohmann::json> ReadJson(util::Env& env, const std::string& path) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return util::Error{text.error()};
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    return util::Error{path + ": " + e.what()};
  }
}

// The original repository rebuilt from an L1 task in `repo`: commits P (pre-solved), A (the
// gold fix applied: the original without the F2P file) and B (the original), HEAD at B.
util::Status RebuildOriginal(tracer::Git& git, const std::string& level1, const std::string& repo) {
  auto cloned = git.Run(util::DirName(repo), {"clone", "-q", "--no-hardlinks",
                                              util::JoinPath(level1, "presolved"), repo});
  if (!cloned.ok()) return util::Error{cloned.error()};
  for (const char* step : {"patch.diff", "test_patch.diff"}) {
    auto applied = git.Run(repo, {"apply", util::JoinPath(level1, step)});
    if (!applied.ok()) return util::Error{std::string(step) + " does not apply: " + applied.error()};
    if (auto s = Commit(git, repo, step); !s.ok()) return s;
  }
  return util::Status::Ok();
}

// repo_settings for FeatureBench: fbkit's spec with the keys FeatureBench's harness reads.
std::string FeatureBenchSettings(const nlohmann::json& inst) {
  nlohmann::json s = nlohmann::json::parse(inst.value("repo_settings", "{}"), nullptr, false);
  if (!s.is_object()) s = nlohmann::json::object();
  std::string cmd = "pytest -rA -p no:cacheprovider --color=no";
  for (const auto& a : util::JsonStringList(s, "pytest_args")) {
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    cmd += " " + quoted + "'";
  }
  s["test_cmd"] = cmd;
  s["timeout_run"] = s.value("timeout", 600);
  s["timeout_one"] = 0;  // no per-test timeout (it needs pytest-timeout)
  s["repository"] = inst.value("repo", "");
  s["commit"] = inst.value("base_commit", "");
  return s.dump();
}

util::Expected<std::string> FeatureBenchRow(tracer::Git& git, const nlohmann::json& inst,
                                            const std::string& task_dir,
                                            const std::string& repo) {
  int level = inst.value("level", 1);
  Json row;
  row["instance_id"] = inst.value("instance_id", "");
  std::string test_patch;
  if (level == 1) {
    auto mask = git.Run(repo, Diff("HEAD~1", "HEAD~2"));  // A -> P
    if (!mask.ok()) return util::Error{mask.error()};
    auto del = git.Run(repo, Diff("HEAD", "HEAD~1"));  // B -> A: deletes the F2P file
    if (!del.ok()) return util::Error{del.error()};
    row["patch"] = *mask;
    test_patch = *del;
  } else {
    // The L2 test patch of fbkit adds the redirected F2P file to A; FeatureBench's rewrites it
    // in B. Its `patch` (never read by its harness) carries the gold agent_code package.
    if (auto r = git.Run(repo, {"checkout", "-q", "--detach", "HEAD~1"}); !r.ok()) {
      return util::Error{r.error()};
    }
    auto applied = git.Run(repo, {"apply", util::JoinPath(task_dir, "test_patch.diff")});
    if (!applied.ok()) return util::Error{"test_patch.diff does not apply: " + applied.error()};
    if (auto s = Commit(git, repo, "L2 tests"); !s.ok()) return util::Error{s.error()};
    auto rewrite = git.Run(repo, Diff("main", "HEAD"));
    if (!rewrite.ok()) return util::Error{rewrite.error()};
    row["patch"] = inst.value("patch", "");
    test_patch = *rewrite;
  }
  row["test_patch"] = test_patch;
  row["FAIL_TO_PASS"] = util::JsonStringList(inst, "FAIL_TO_PASS");
  row["PASS_TO_PASS"] =
      level == 1 ? util::JsonStringList(inst, "PASS_TO_PASS") : std::vector<std::string>{};
  row["image_name"] = inst.value("image_name", "");
  row["repo"] = inst.value("repo", "");
  row["base_commit"] = inst.value("base_commit", "");
  row["problem_statement"] = inst.value("problem_statement", "");
  row["repo_settings"] = FeatureBenchSettings(inst);
  return row.dump();
}

std::string IsoTime(const std::string& t) {
  if (t.size() != 19) return t;
  std::string iso = t;
  iso[10] = 'T';
  return iso + "Z";
}

util::Expected<std::string> SweBenchRow(tracer::Git& git, const nlohmann::json& inst,
                                        const std::string& task_dir, const std::string& repo) {
  int level = inst.value("level", 1);
  std::vector<std::string> f2p = util::JsonStringList(inst, "f2p_tests");
  std::vector<std::string> p2p = util::JsonStringList(inst, "p2p_tests");
  if (inst.contains("f2p_test_points") && inst.at("f2p_test_points").is_array()) {
    f2p = util::JsonStringList(inst, "f2p_test_points");  // fbkit.task/1
    p2p = util::JsonStringList(inst, "p2p_test_points");
  }
  Json row;
  row["instance_id"] = inst.value("instance_id", "");
  row["repo"] = inst.value("repo", "");
  std::string base = inst.value("base_commit", "");
  if (level == 1) {
    // The starting state is the pre-solved codebase: the commit of the task's presolved/.
    auto head = git.Run(util::JoinPath(task_dir, "presolved"), {"rev-parse", "HEAD"});
    if (!head.ok()) return util::Error{head.error()};
    row["base_commit"] = head->substr(0, 40);
    row["patch"] = inst.value("patch", "");
    row["test_patch"] = inst.value("test_patch", "");
  } else {
    // L2 starts from the original repository: the gold agent_code package and the tests
    // rewritten to use it (the F2P file exists there, so the test patch modifies it).
    if (auto r = git.Run(repo, {"checkout", "-q", "--detach", "HEAD~1"}); !r.ok()) {
      return util::Error{r.error()};
    }
    auto applied = git.Run(repo, {"apply", util::JoinPath(task_dir, "test_patch.diff")});
    if (!applied.ok()) return util::Error{"test_patch.diff does not apply: " + applied.error()};
    if (auto s = Commit(git, repo, "L2 tests"); !s.ok()) return util::Error{s.error()};
    auto rewrite = git.Run(repo, Diff("main", "HEAD"));
    if (!rewrite.ok()) return util::Error{rewrite.error()};
    row["base_commit"] = base;
    row["patch"] = inst.value("patch", "");
    row["test_patch"] = *rewrite;
  }
  row["problem_statement"] = inst.value("problem_statement", "");
  row["hints_text"] = "";
  row["created_at"] = IsoTime(inst.value("create_time", ""));
  row["version"] = base.substr(0, std::min<size_t>(8, base.size()));
  row["environment_setup_commit"] = base;
  row["FAIL_TO_PASS"] = Json(f2p).dump();
  row["PASS_TO_PASS"] = Json(p2p).dump();
  return row.dump();
}

}  // namespace

util::Expected<std::string> ExportRow(util::Env& env, tracer::Launcher& launcher,
                                      const std::string& task_dir, ExportFormat format,
                                      const std::string& work_dir) {
  auto inst = ReadJson(env, util::JoinPath(task_dir, "instance.json"));
  if (!inst.ok()) return util::Error{inst.error()};
  int level = inst->value("level", 1);
  std::string level1 = task_dir;
  if (level == 2) {
    if (!task_dir.ends_with(".lv2")) return util::Error{task_dir + ": an L2 id ends in .lv2"};
    level1 = task_dir.substr(0, task_dir.size() - 1) + "1";
    if (!env.Stat(util::JoinPath(level1, "presolved"), true).ok()) {
      return util::Error{"an L2 task needs its L1 task beside it (" + level1 + ")"};
    }
  }
  (void)env.RemoveAll(work_dir);
  if (auto s = env.MakeDirs(work_dir); !s.ok()) return util::Error{s.error()};
  tracer::Git git(env, launcher, util::JoinPath(work_dir, "log"));
  std::string repo = util::JoinPath(work_dir, "repo");
  util::Expected<std::string> row = util::Error{""};
  if (auto s = RebuildOriginal(git, level1, repo); !s.ok()) {
    row = util::Error{s.error()};
  } else if (format == ExportFormat::kFeatureBench) {
    row = FeatureBenchRow(git, *inst, task_dir, repo);
  } else {
    row = SweBenchRow(git, *inst, task_dir, repo);
  }
  (void)env.RemoveAll(work_dir);
  return row;
}

}  // namespace fbkit::extract

#include "extract/dataset/export.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "extract/dataset/verifier.h"
#include "extract/image/recipe.h"
#include "extract/taskdir/task_dir.h"
#include "extract/taskdir/verify.h"
#include "runner/confine.h"
#include "runner/git.h"
#include "runner/outcome.h"
#include "util/json_read.h"
#include "util/strings.h"

namespace fbkit::extract::dataset {

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

util::Status Commit(runner::Git& git, const std::string& dir, const std::string& message) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"add", "-A"}, {"commit", "-q", "--no-verify", "--allow-empty", "-m", message}}) {
    if (auto r = git.Run(dir, args); !r.ok()) return r.failure();
  }
  return util::Status::Ok();
}

// The original repository rebuilt from an L1 task in `repo`: commits P (pre-solved), A (the
// gold fix applied: the original without the F2P file) and B (the original), HEAD at B.
util::Status RebuildOriginal(runner::Git& git, const taskdir::TaskDir& level1,
                             const std::string& repo) {
  auto cloned = git.Run(util::DirName(repo), {"clone", "-q", "--no-hardlinks", level1.presolved(), repo});
  if (!cloned.ok()) return cloned.failure();
  for (const std::string& step : {level1.patch(), level1.test_patch()}) {
    std::string name = step.substr(step.rfind('/') + 1);
    auto applied = git.Run(repo, {"apply", step});
    if (!applied.ok()) return util::Error{name + " does not apply: " + applied.error()};
    if (auto s = Commit(git, repo, name); !s.ok()) return s;
  }
  return util::Status::Ok();
}

// An L2 task's test patch as a forward diff of the original repository (`repo` as
// RebuildOriginal left it): fbkit's test patch applied to A, diffed against B.
util::Expected<std::string> L2TestsInOriginal(runner::Git& git, const std::string& repo,
                                              const std::string& task_dir) {
  if (auto r = git.Run(repo, {"checkout", "-q", "--detach", "HEAD~1"}); !r.ok()) {
    return r.failure();
  }
  auto applied = git.Run(repo, {"apply", taskdir::TaskDir{task_dir}.test_patch()});
  if (!applied.ok()) return util::Error{"test_patch.diff does not apply: " + applied.error()};
  if (auto s = Commit(git, repo, "L2 tests"); !s.ok()) return s.failure();
  return git.Run(repo, Diff("main", "HEAD"));
}

// repo_settings for FeatureBench: fbkit's spec with the keys FeatureBench's harness reads; with
// fbkit's image, the test command is the image's /fbkit/pytest.sh (the spec's paths, env and
// arguments; no conda needed).
std::string FeatureBenchSettings(const taskdir::Instance& inst, bool fbkit_image) {
  nlohmann::json s = nlohmann::json::parse(inst.spec_json, nullptr, false);
  if (!s.is_object()) s = nlohmann::json::object();
  std::string cmd = "pytest -rfEsxXp -p no:cacheprovider --color=no";
  for (const auto& a : util::JsonStringList(s, "pytest_args")) cmd += " " + util::ShellQuote(a);
  s["test_cmd"] = fbkit_image ? std::string(image::kImagePytest) : cmd;
  s["timeout_run"] = s.value("timeout", 600);
  s["timeout_one"] = 0;  // no per-test timeout (it needs pytest-timeout)
  s["repository"] = inst.repo;
  s["commit"] = inst.base_commit;
  return s.dump();
}

util::Expected<std::string> FeatureBenchRow(runner::Git& git, const taskdir::Instance& inst,
                                            const std::string& task_dir, const std::string& repo,
                                            const std::string& image) {
  int level = inst.level;
  Json row;
  row["instance_id"] = inst.instance_id;
  std::string test_patch;
  if (level == 1) {
    auto mask = git.Run(repo, Diff("HEAD~1", "HEAD~2"));  // A -> P
    if (!mask.ok()) return mask.failure();
    auto del = git.Run(repo, Diff("HEAD", "HEAD~1"));  // B -> A: deletes the F2P file
    if (!del.ok()) return del.failure();
    row["patch"] = *mask;
    test_patch = *del;
  } else {
    // The L2 test patch of fbkit adds the redirected F2P file to A; FeatureBench's rewrites it
    // in B. Its `patch` (never read by its harness) carries the gold agent_code package.
    auto rewrite = L2TestsInOriginal(git, repo, task_dir);
    if (!rewrite.ok()) return rewrite;
    row["patch"] = inst.patch;
    test_patch = *rewrite;
  }
  row["test_patch"] = test_patch;
  row["FAIL_TO_PASS"] = inst.f2p_files;
  row["PASS_TO_PASS"] = level == 1 ? inst.p2p_files : std::vector<std::string>{};
  row["image_name"] = image.empty() ? inst.image_name : image;
  row["repo"] = inst.repo;
  row["base_commit"] = inst.base_commit;
  row["problem_statement"] = inst.problem_statement;
  row["repo_settings"] = FeatureBenchSettings(inst, !image.empty());
  return row.dump();
}

std::string IsoTime(const std::string& t) {
  if (t.size() != 19) return t;
  std::string iso = t;
  iso[10] = 'T';
  return iso + "Z";
}

// SWE-bench 5's eval_script: the verifier's files written under /tests, the tree prepared,
// the tests run between the markers its harness reads (a failed preparation is an error of
// the run, never a verdict), every outcome printed last as the pytest log parser reads it.
std::string SweBenchEvalScript(const Verifier& v) {
  return "#!/bin/bash\nset -uxo pipefail\n"
         "fbkit_fail() { echo \"fbkit: $1\"; echo '>>>>> Tests' 'Errored'; exit 1; }\n" +
         WriteFilesScript(v.files, "/tests") + v.prepare + "export FBKIT_OUTCOMES=/tests/outcomes.json\n" +
         ": '>>>>> Start Test Output'\n" + v.pytest + "\n: '>>>>> End Test Output'\n";
}

// The tests of a SWE-bench row: their SweBenchLogKey, each once, in order; `collapsed` counts
// the ids that shared a key with an earlier one.
std::vector<std::string> SweBenchTests(const std::vector<std::string>& ids, size_t* collapsed) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& id : ids) {
    std::string key = SweBenchLogKey(id);
    if (seen.insert(key).second) out.push_back(key);
    else ++*collapsed;
  }
  return out;
}

util::Expected<std::string> SweBenchRow(runner::Git& git, const taskdir::Instance& inst,
                                        const std::string& task_dir, const std::string& repo,
                                        const std::string& image, const std::string& eval_script) {
  int level = inst.level;
  Json row;
  row["instance_id"] = inst.instance_id;
  row["repo"] = inst.repo;
  std::string base = inst.base_commit;
  if (level == 1) {
    // The starting state is the pre-solved codebase: the commit of the task's presolved/.
    auto head = git.Run(taskdir::TaskDir{task_dir}.presolved(), {"rev-parse", "HEAD"});
    if (!head.ok()) return head.failure();
    row["base_commit"] = head->substr(0, 40);
    row["patch"] = inst.patch;
    row["test_patch"] = inst.test_patch;
  } else {
    // L2 starts from the original repository: the gold agent_code package and the tests
    // rewritten to use it (the F2P file exists there, so the test patch modifies it).
    auto rewrite = L2TestsInOriginal(git, repo, task_dir);
    if (!rewrite.ok()) return rewrite;
    row["base_commit"] = base;
    row["patch"] = inst.patch;
    row["test_patch"] = *rewrite;
  }
  row["problem_statement"] = inst.problem_statement;
  row["hints_text"] = "";
  row["created_at"] = IsoTime(inst.create_time);
  row["version"] = base.substr(0, std::min<size_t>(8, base.size()));
  row["environment_setup_commit"] = base;
  size_t collapsed = 0;
  row["FAIL_TO_PASS"] = Json(SweBenchTests(inst.f2p_tests, &collapsed)).dump();
  row["PASS_TO_PASS"] = Json(SweBenchTests(inst.p2p_tests, &collapsed)).dump();
  if (collapsed > 0) {
    std::fprintf(stderr, "fb-extract export: %s: %zu test ids share their SWE-bench log key with "
                 "another (its parser collapses whitespace and drops control characters): listed once\n",
                 inst.instance_id.c_str(), collapsed);
  }
  // SWE-bench 5's harness: the image as built by `fb-extract images`, what runs in it.
  row["image"] = image;
  row["eval_script"] = eval_script;
  row["log_parser"] = "parse_log_pytest_v2";
  row["eval_type"] = "pass_and_fail";
  return row.dump();
}

// A list of strings given as a JSON array or as a JSON string holding one (SWE-bench style).
std::vector<std::string> Strings(const nlohmann::json& row, const char* key) {
  if (!row.contains(key)) return {};
  const auto& v = row.at(key);
  if (v.is_string()) {
    auto inner = nlohmann::json::parse(v.get<std::string>(), nullptr, false);
    return inner.is_array() ? util::JsonStringList(nlohmann::json{{key, inner}}, key)
                            : std::vector<std::string>{};
  }
  return util::JsonStringList(row, key);
}

std::vector<std::string> WithPaths(std::vector<std::string> args, const std::vector<std::string>& paths,
                                   bool exclude) {
  args.push_back("--");
  if (exclude) args.push_back(".");
  for (const auto& p : paths) args.push_back(exclude ? ":(exclude,literal)" + p : ":(literal)" + p);
  return args;
}

// presolved/: the tree of `repo`'s HEAD as a fresh one-commit repository (no history an
// agent could read the original from).
util::Status WritePresolvedCopy(util::Env& env, runner::Git& git, const std::string& repo,
                                const std::string& dest) {
  auto cloned = git.Run(util::DirName(dest), {"clone", "-q", "--no-hardlinks", repo, dest});
  if (!cloned.ok()) return cloned.failure();
  if (auto s = env.RemoveAll(util::JoinPath(dest, ".git")); !s.ok()) return s;
  if (auto r = git.Run(dest, {"init", "-q"}); !r.ok()) return r.failure();
  if (auto s = Commit(git, dest, "fbkit: pre-solved codebase"); !s.ok()) return s;
  if (auto r = git.Run(dest, {"read-tree", "HEAD"}); !r.ok()) return r.failure();
  return util::Status::Ok();
}

// The ids of the tests in `files` that pass in `repo`.
util::Expected<std::vector<std::string>> PassingIds(runner::TestRunner& tests,
                                                    const std::string& repo,
                                                    const runner::RepoSpec& spec,
                                                    const std::vector<std::string>& files,
                                                    const std::string& work) {
  if (files.empty()) return std::vector<std::string>{};
  auto outcomes = taskdir::RunTests(tests, repo, "", spec, files, work, nullptr);
  if (!outcomes.ok()) return outcomes.failure();
  std::vector<std::string> ids;
  for (const auto& [id, outcome] : *outcomes) {
    std::string file = id.substr(0, id.find("::"));
    bool mine = std::find(files.begin(), files.end(), file) != files.end();
    if (mine && runner::F2PPasses(outcome)) ids.push_back(id);
  }
  return ids;
}

}  // namespace

namespace {

// The task's image recipes as `fb-extract images` writes them with the same base and prefix
// (FeatureBench's grading image too when `featurebench`), written under `work`.
util::Expected<image::TaskRecipes> RecipesOf(util::Env& env, sandbox::Launcher& launcher,
                                             const std::string& task_dir, const ExportImages& images,
                                             const std::string& work, bool featurebench) {
  image::RecipeOptions o{util::JoinPath(work, "recipes"), images.base, images.prefix,
                         util::JoinPath(work, "scratch"), featurebench};
  std::string from = images.base;
  if (from.empty()) {
    auto base = image::WriteBaseRecipe(env, o);
    if (!base.ok()) return base.failure();
    from = base->tag;
  }
  auto recipes = image::WriteTaskRecipes(env, launcher, task_dir, from, o);
  (void)env.RemoveAll(util::JoinPath(work, "recipes"));
  return recipes;
}

// The agent image's tag and the SWE-bench eval_script of the task in `task_dir`.
util::Expected<std::pair<std::string, std::string>> SweBenchImage(util::Env& env, sandbox::Launcher& launcher,
                                                                  const std::string& task_dir,
                                                                  const ExportImages& images,
                                                                  const std::string& work) {
  auto recipes = RecipesOf(env, launcher, task_dir, images, work, false);
  if (!recipes.ok()) return recipes.failure();
  auto context = image::WriteOneContext(env, launcher, task_dir, images.base, util::JoinPath(work, "context"),
                                        util::JoinPath(work, "scratch"));
  if (!context.ok()) return context.failure();
  auto verifier = MakeVerifier(env, task_dir, *context);
  (void)env.RemoveAll(util::JoinPath(work, "context"));
  if (!verifier.ok()) return verifier.failure();
  return std::pair{recipes->task.tag, SweBenchEvalScript(*verifier)};
}

}  // namespace

util::Expected<std::string> ExportRow(util::Env& env, sandbox::Launcher& launcher,
                                      const std::string& given_dir, ExportFormat format,
                                      const std::string& work_dir, const ExportImages& images) {
  auto real = env.RealPath(given_dir);  // the path git sees inside its sandbox
  const std::string task_dir = real.ok() ? *real : given_dir;
  auto inst = taskdir::ReadInstance(env, taskdir::TaskDir{task_dir});
  if (!inst.ok()) return inst.failure();
  int level = inst->level;
  taskdir::TaskDir level1{task_dir};
  if (level == 2) {
    if (!task_dir.ends_with(".lv2")) return util::Error{task_dir + ": an L2 id ends in .lv2"};
    auto l1 = taskdir::Level1Task(env, taskdir::TaskDir{task_dir});
    if (!l1.ok()) return l1.failure();
    level1 = *l1;
  }
  (void)env.RemoveAll(work_dir);
  if (auto s = env.MakeDirs(work_dir); !s.ok()) return s.failure();
  runner::GitProgram git(env, launcher, util::JoinPath(work_dir, "log"));
  // The task directory is no more trusted than its code: git over it runs confined, the
  // work dir its only writable place (a presolved/ link, or a patch copying a link there,
  // would otherwise have the host's git read what it names into the row).
  auto real_level1 = env.RealPath(level1.dir);
  if (real_level1.ok()) level1.dir = *real_level1;
  git.Confine(runner::ToolSandbox(runner::RepoSpec{}, {work_dir}, {task_dir, level1.dir}));
  std::string repo = util::JoinPath(work_dir, "repo");
  util::Expected<std::string> row = util::Error{""};
  // A SWE-bench L1 row is the task's own files; the others need the original rebuilt.
  bool rebuild = format == ExportFormat::kFeatureBench || level == 2;
  if (auto s = rebuild ? RebuildOriginal(git, level1, repo) : util::Status::Ok(); !s.ok()) {
    row = s.failure();
  } else if (format == ExportFormat::kFeatureBench) {
    // FeatureBench's grading image (`fb-extract images --featurebench`; an L2 task's is its L1
    // sibling's, where the harness installs the agent's package with `pip install .`).
    auto recipes = RecipesOf(env, launcher, task_dir, images, util::JoinPath(work_dir, "image"), true);
    row = recipes.ok() ? FeatureBenchRow(git, *inst, task_dir, repo, recipes->featurebench.tag)
                       : util::Expected<std::string>(util::Error{"its image: " + recipes.error()});
  } else if (auto img = SweBenchImage(env, launcher, task_dir, images, util::JoinPath(work_dir, "image"));
             !img.ok()) {
    row = util::Error{"its image: " + img.error()};
  } else {
    row = SweBenchRow(git, *inst, task_dir, repo, img->first, img->second);
  }
  (void)env.RemoveAll(work_dir);
  return row;
}

namespace {

struct ImportedFiles {
  std::string patch, test_patch;
  std::vector<std::string> f2p_tests, p2p_tests;
};

// The files a row names removed from the work copy by (confined) git, which goes through no
// link: a path through a link the row's patch made would have the host delete what it names.
util::Status RemoveFiles(runner::Git& git, const std::string& repo,
                         const std::vector<std::string>& files) {
  std::vector<std::string> args = {"rm", "-r", "-q", "-f", "--ignore-unmatch", "--"};
  args.insert(args.end(), files.begin(), files.end());
  auto r = git.Run(repo, args);
  return r.ok() ? util::Status::Ok() : util::Status(r.failure());
}

// Why a row may not be imported, or "": a file it names or its patches touch lies outside
// the work copy or inside a .git directory.
std::string RowPathProblem(const nlohmann::json& row, const std::vector<std::string>& files) {
  for (const auto& f : files) {
    if (std::string why = runner::TreePathProblem(f); !why.empty()) return "a test file: " + why;
    // A name reaches git as a pathspec: magic (":(glob)**") or a glob would name other files.
    if (f.starts_with(":") || f.find_first_of("*?[") != std::string::npos) {
      return "a test file: a pattern, not a path (" + f + ")";
    }
  }
  for (const char* key : {"patch", "test_patch"}) {
    if (std::string why = runner::PatchPathProblem(row.value(key, "")); !why.empty()) {
      return std::string(key) + ": " + why;
    }
  }
  return "";
}

util::Expected<ImportedFiles> ImportLevel1(util::Env& env, runner::TestRunner& tests,
                                           runner::Git& git, const nlohmann::json& row,
                                           const std::vector<std::string>& f2p,
                                           const std::vector<std::string>& p2p,
                                           const ImportOptions& o, const std::string& repo,
                                           const std::string& dir, const std::string& work) {
  std::string mask = row.value("patch", "");
  if (!mask.empty() && mask.back() != '\n') mask += "\n";  // as the harness normalises it
  std::string mask_path = util::JoinPath(work, "mask.diff");
  if (auto s = env.WriteFileAtomic(mask_path, mask); !s.ok()) return s.failure();
  if (!mask.empty()) {
    auto applied = git.Run(repo, {"apply", "--whitespace=fix", mask_path});
    if (!applied.ok()) return util::Error{"patch does not apply at base_commit: " + applied.error()};
  }
  if (auto s = RemoveFiles(git, repo, f2p); !s.ok()) return s.failure();
  if (auto s = Commit(git, repo, "masked"); !s.ok()) return s.failure();
  ImportedFiles out;
  auto gold = git.Run(repo, WithPaths(Diff("HEAD", "HEAD~1"), f2p, true));
  auto test_diff = git.Run(repo, WithPaths(Diff("HEAD", "HEAD~1"), f2p, false));
  if (!gold.ok()) return gold.failure();
  if (!test_diff.ok()) return test_diff.failure();
  std::string pre = taskdir::TaskDir{dir}.presolved();
  if (auto s = WritePresolvedCopy(env, git, repo, pre); !s.ok()) return s.failure();
  // The patches are written again from presolved/'s own small repository, as fbkit writes
  // them when it extracts (same abbreviated blob ids), then presolved/ is reset.
  for (const auto& [name, text] : {std::pair{"gold", *gold}, std::pair{"tests", *test_diff}}) {
    std::string path = util::JoinPath(work, std::string(name) + ".diff");
    if (auto s = env.WriteFileAtomic(path, text); !s.ok()) return s.failure();
    if (!text.empty()) {
      if (auto r = git.Run(pre, {"apply", path}); !r.ok()) return r.failure();
    }
    if (auto r = git.Run(pre, {"add", "-N", "."}); !r.ok()) return r.failure();
    auto again = git.Run(pre, kDiff);
    if (!again.ok()) return again.failure();
    (std::string(name) == "gold" ? out.patch : out.test_patch) = *again;
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"read-tree", "HEAD"}, {"checkout", "-q", "--", "."}, {"clean", "-fdq"}}) {
      if (auto r = git.Run(pre, args); !r.ok()) return r.failure();
    }
  }
  if (auto r = git.Run(repo, {"checkout", "-q", "--detach", "HEAD~1"}); !r.ok()) {
    return r.failure();
  }
  auto f2p_ids = PassingIds(tests, repo, o.spec, f2p, util::JoinPath(work, "run-f2p"));
  if (!f2p_ids.ok()) return util::Error{"pytest on the original: " + f2p_ids.error()};
  auto p2p_ids = PassingIds(tests, repo, o.spec, p2p, util::JoinPath(work, "run-p2p"));
  if (!p2p_ids.ok()) return util::Error{"pytest on the original: " + p2p_ids.error()};
  if (f2p_ids->empty()) return util::Error{"no F2P test passes on the original repository"};
  out.f2p_tests = std::move(*f2p_ids);
  out.p2p_tests = std::move(*p2p_ids);
  return out;
}

util::Expected<ImportedFiles> ImportLevel2(util::Env& env, runner::TestRunner& tests,
                                           runner::Git& git,
                                           const nlohmann::json& row,
                                           const std::vector<std::string>& f2p,
                                           const ImportOptions& o, const std::string& id,
                                           const std::string& repo, const std::string& work) {
  std::string level1 = util::JoinPath(o.out_dir, id.substr(0, id.size() - 1) + "1");
  auto l1 = taskdir::ReadInstance(env, taskdir::TaskDir{level1});
  if (!l1.ok()) return util::Error{"an L2 row needs its L1 task imported first (" + level1 + ")"};
  auto base = git.Run(repo, {"rev-parse", "HEAD"});
  if (!base.ok()) return base.failure();
  if (auto s = RemoveFiles(git, repo, f2p); !s.ok()) return s.failure();
  if (auto s = Commit(git, repo, "without the F2P files"); !s.ok()) return s.failure();
  auto without = git.Run(repo, {"rev-parse", "HEAD"});
  if (!without.ok()) return without.failure();
  if (auto r = git.Run(repo, {"checkout", "-q", "--detach", base->substr(0, 40)}); !r.ok()) {
    return r.failure();
  }
  std::string tp = row.value("test_patch", "");
  if (!tp.empty() && tp.back() != '\n') tp += "\n";
  std::string tp_path = util::JoinPath(work, "test.diff");
  if (auto s = env.WriteFileAtomic(tp_path, tp); !s.ok()) return s.failure();
  auto applied = git.Run(repo, {"apply", "--whitespace=fix", tp_path});
  if (!applied.ok()) return util::Error{"test_patch does not apply at base_commit: " + applied.error()};
  if (auto s = Commit(git, repo, "rewritten tests"); !s.ok()) return s.failure();
  std::string from = without->substr(0, 40);
  auto converted = git.Run(repo, Diff(from, "HEAD"));
  auto changed = git.Run(repo, {"diff", "--name-only", "-z", from, "HEAD"});
  if (!converted.ok() || !changed.ok()) {
    return util::Error{!converted.ok() ? converted.error() : changed.error()};
  }
  // Written again in a small repository holding just the files it changes, as fbkit writes
  // an L2 test patch (same abbreviated blob ids).
  std::string small = util::JoinPath(work, "small");
  if (auto r = git.Run(work, {"init", "-q", small}); !r.ok()) return r.failure();
  for (std::string_view listed : util::Records(*changed, '\0')) {
    std::string path(listed);
    auto old = git.Show(repo, from, path);
    if (!old.ok()) return old.failure();
    if (!*old) continue;
    std::string dst = util::JoinPath(small, path);
    if (auto s = env.MakeDirs(util::DirName(dst)); !s.ok()) return s.failure();
    if (auto s = env.WriteFileAtomic(dst, **old); !s.ok()) return s.failure();
  }
  if (auto s = Commit(git, small, "fbkit: tests"); !s.ok()) return s.failure();
  std::string converted_path = util::JoinPath(work, "converted.diff");
  if (auto s = env.WriteFileAtomic(converted_path, *converted); !s.ok()) return s.failure();
  if (auto r = git.Run(small, {"apply", converted_path}); !r.ok()) return r.failure();
  if (auto r = git.Run(small, {"add", "-N", "."}); !r.ok()) return r.failure();
  auto again = git.Run(small, kDiff);
  if (!again.ok()) return again.failure();
  ImportedFiles out;
  out.patch = row.value("patch", "");
  out.test_patch = *again;
  out.f2p_tests = l1->f2p_tests;
  if (out.patch.find("+++ b/agent_code/") == std::string::npos) return out;
  // A row that carries a gold agent_code (fbkit's export does): the F2P ids are those that
  // pass with it, as the rewritten test file names them.
  std::string gold = util::JoinPath(work, "agent.diff");
  if (auto s = env.WriteFileAtomic(gold, out.patch); !s.ok()) return s.failure();
  if (auto r = git.Run(repo, {"apply", gold}); !r.ok()) {
    return util::Error{"patch (the gold agent_code) does not apply: " + r.error()};
  }
  runner::RepoSpec spec = o.spec;
  spec.pythonpath.push_back(".");
  auto ids = PassingIds(tests, repo, spec, f2p, util::JoinPath(work, "run-l2"));
  if (!ids.ok()) return util::Error{"pytest with the gold agent_code: " + ids.error()};
  if (ids->empty()) return util::Error{"no F2P test passes with the gold agent_code"};
  out.f2p_tests = std::move(*ids);
  return out;
}

taskdir::Instance ImportedInstance(const nlohmann::json& row, const std::string& id, int level,
                          const std::vector<std::string>& f2p, const std::vector<std::string>& p2p,
                          const ImportedFiles& files, const runner::RepoSpec& spec) {
  taskdir::Instance i;
  i.imported = true;
  i.instance_id = id;
  i.level = level;
  i.f2p_files = f2p;
  if (level == 1) i.p2p_files = p2p;
  i.f2p_tests = files.f2p_tests;
  i.p2p_tests = files.p2p_tests;
  i.base_commit = row.value("base_commit", "");
  i.image_name = row.value("image_name", "");
  i.repo = row.value("repo", "");
  i.patch = files.patch;
  i.test_patch = files.test_patch;
  i.problem_statement = row.value("problem_statement", "");
  i.spec = spec;
  i.featurebench_repo_settings = row.contains("repo_settings") && row["repo_settings"].is_string()
                                     ? row["repo_settings"].get<std::string>()
                                     : row.value("repo_settings", nlohmann::json::object()).dump();
  return i;
}

}  // namespace

util::Expected<ImportResult> ImportRow(util::Env& env, sandbox::Launcher& launcher,
                                       runner::TestRunner& tests,
                                       const std::string& row_json, const ImportOptions& o) {
  nlohmann::json row = nlohmann::json::parse(row_json, nullptr, false);
  if (!row.is_object()) return util::Error{"not a JSON object"};
  std::string id = row.value("instance_id", "");
  int level = id.ends_with(".lv1") ? 1 : id.ends_with(".lv2") ? 2 : 0;
  if (level == 0) return util::Error{"instance_id '" + id + "' does not end in .lv1 or .lv2"};
  if (!util::IsFileName(id)) {
    return util::Error{"instance_id '" + util::Printable(id) + "' cannot name a directory"};
  }
  std::vector<std::string> f2p = Strings(row, "FAIL_TO_PASS"), p2p = Strings(row, "PASS_TO_PASS");
  if (f2p.empty()) return util::Error{id + ": FAIL_TO_PASS names no test file"};
  std::vector<std::string> named = f2p;
  named.insert(named.end(), p2p.begin(), p2p.end());
  if (std::string why = RowPathProblem(row, named); !why.empty()) {
    return util::Error{id + ": " + why};
  }
  std::string base = row.value("base_commit", "");
  (void)env.RemoveAll(o.work_dir);
  if (auto s = env.MakeDirs(o.work_dir); !s.ok()) return s.failure();
  runner::GitProgram git(env, launcher, util::JoinPath(o.work_dir, "log"));
  std::string repo = util::JoinPath(o.work_dir, "repo");
  if (auto s = git.Checkout(o.original, base, repo); !s.ok()) {
    return util::Error{id + ": base_commit " + base + ": " + s.error()};
  }
  std::string dir = util::JoinPath(o.out_dir, id);
  (void)env.RemoveAll(dir);
  if (auto s = env.MakeDirs(dir); !s.ok()) return s.failure();
  auto files = level == 1 ? ImportLevel1(env, tests, git, row, f2p, p2p, o, repo, dir, o.work_dir)
                          : ImportLevel2(env, tests, git, row, f2p, o, id, repo, o.work_dir);
  (void)env.RemoveAll(o.work_dir);
  if (!files.ok()) {
    (void)env.RemoveAll(dir);
    return util::Error{id + ": " + files.error()};
  }
  auto instance = ImportedInstance(row, id, level, f2p, p2p, *files, o.spec);
  if (auto s = taskdir::WriteTaskFiles(env, dir, instance); !s.ok()) {
    return s.failure();
  }
  return ImportResult{id, files->f2p_tests.size(), files->p2p_tests.size()};
}

std::string SweBenchLogKey(const std::string& id) {
  std::string stripped;  // every "[<digits>m" removed
  for (size_t i = 0; i < id.size();) {
    if (id[i] == '[') {
      size_t j = i + 1;
      while (j < id.size() && id[j] >= '0' && id[j] <= '9') ++j;
      if (j > i + 1 && j < id.size() && id[j] == 'm') {
        i = j + 1;
        continue;
      }
    }
    stripped += id[i++];
  }
  std::string out;
  bool space = false;
  auto add = [&](const std::string& piece) {
    if (space && !out.empty()) out += ' ';
    space = false;
    out += piece;
  };
  // Python's str.split() whitespace beyond ASCII (characters 1-31 are gone by then).
  static const char* const kUnicodeSpaces[] = {
      "\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82",
      "\xe2\x80\x83", "\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88",
      "\xe2\x80\x89", "\xe2\x80\x8a", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f",
      "\xe3\x80\x80"};
  for (size_t i = 0; i < stripped.size();) {
    unsigned char c = static_cast<unsigned char>(stripped[i]);
    if (c >= 1 && c <= 31) {
      ++i;
      continue;
    }
    if (c == ' ') {
      space = true;
      ++i;
      continue;
    }
    size_t n = 0;
    for (const char* u : kUnicodeSpaces) {
      size_t len = std::strlen(u);
      if (stripped.compare(i, len, u) == 0) n = len;
    }
    if (n > 0) {
      space = true;
      i += n;
      continue;
    }
    add(std::string(1, stripped[i]));
    ++i;
  }
  return out;
}

}  // namespace fbkit::extract::dataset

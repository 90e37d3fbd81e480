// The task directory (fbkit.task/2), owned here in both directions: the names of its parts,
// writing them and reading instance.json. A task directory holds instance.json,
// patch.diff (the gold patch), test_patch.diff (what puts the F2P test files back),
// problem_statement.md and, at level 1, presolved/ (the repository without the feature: a
// git repository of one commit). An L2 task rebuilds the original repository from its L1
// sibling (the same id ending in .lv1): its presolved/ with its patch.diff applied.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "runner/spec.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::taskdir {

// The most bytes an agent's patch may have: infer leaves files out past it, eval refuses a
// prediction over it (a 300 MB patch took 1.5 GB of fbkit's memory, red team round 9).
inline constexpr uint64_t kMaxAgentPatchBytes = 64u << 20;

// The gold patch's name in a task directory (TaskDir::patch()), for reads relative to it.
inline constexpr char kGoldPatchFile[] = "patch.diff";

// The paths of one task directory's parts.
struct TaskDir {
  std::string dir;

  std::string instance() const;    // instance.json
  std::string patch() const;       // patch.diff
  std::string test_patch() const;  // test_patch.diff
  std::string statement() const;   // problem_statement.md
  std::string presolved() const;   // presolved/
};

// The L1 task whose presolved/ and patch.diff an L2 task rebuilds the original repository
// from: `given` when set, else the sibling directory whose name ends in .lv1 for .lv2; an
// error when it has no presolved/.
util::Expected<TaskDir> Level1Task(util::Env& env, const TaskDir& task, const std::string& given = "");

// The task's presolved/, which git will read: an error naming the path unless it and its .git
// are plain directories (a link or a gitfile would have git read another repository of the
// host, which then reaches the tests or the agent).
util::Expected<std::string> PlainPresolved(util::Env& env, const TaskDir& task);

// The original library's top-level modules: for each top object's file, the outermost
// directory of its path that is a package (`is_package(dir)`: has an __init__.py), else
// the module's own name ("src/shapes/core.py::Area" -> "shapes").
std::set<std::string> OriginalPackages(const std::vector<std::string>& top_objects,
                                       const std::function<bool(const std::string&)>& is_package);
// The same with the packages those of `tree` (a directory holding an __init__.py); with no
// tree to look at (""), every directory but a source root (src, lib, source, python).
std::set<std::string> OriginalPackagesIn(util::Env& env, const std::vector<std::string>& top_objects,
                                         const std::string& tree);


// instance.json: FeatureBench's fields with its types (counts as numbers, repo_settings as a
// JSON string as in its dataset rows), and fbkit's own beside them. A task fbkit made
// records how (the "made" fields below); an imported FeatureBench row records its own
// repo_settings instead.
struct Instance {
  std::string instance_id;
  std::string repo;  // "owner/name"
  std::string base_commit;
  std::string image_name;
  int level = 1;
  std::vector<std::string> f2p_files;  // FAIL_TO_PASS
  std::vector<std::string> p2p_files;  // PASS_TO_PASS (none at level 2)
  std::vector<std::string> f2p_tests;  // test ids
  std::vector<std::string> p2p_tests;
  std::vector<std::string> top_objects;
  std::string patch, test_patch, problem_statement;
  runner::RepoSpec spec;  // how its tests run: repo_settings
  std::string spec_json;  // repo_settings as written (read back as is)

  // Imported from a FeatureBench row (fb-extract import): its repo_settings, as given.
  bool imported = false;
  std::string featurebench_repo_settings;

  // Made by fbkit (fb-extract all/task).
  int cap = 0;  // the line cap of the plan
  std::string create_time, upd_time;  // the F2P file's first and last commit
  std::vector<std::string> dangling_references, demoted_top_objects, extracted,
      extracted_files, interfaces, orphans_removed;
  int functions = 0, lines = 0;
  std::string model_json;  // who wrote the choice and the words ("" without a model)
  // (repository file, hook) of reads of a grader's test file the gold's own run made
  // (VerifyReport::gold_test_file_reads): eval does not flag these.
  std::set<std::pair<std::string, std::string>> gold_test_file_reads;
  bool strict_references = false;
  uint64_t seed = 0;
};

// instance.json's text (compact, keys sorted, one line).
std::string InstanceJson(const Instance& instance);

// Reads instance.json's text (fbkit.task/1 and /2).
util::Expected<Instance> ParseInstance(const std::string& json);

// Reads a task directory's instance.json as a file of an untrusted tree (no link followed,
// bounded); errors name the file.
util::Expected<Instance> ReadInstance(util::Env& env, const TaskDir& task);

// A task's repo_settings are the task's word, no more trusted than a repository's
// fbkit.toml (a task directory comes from datasets, other people's runs): an error naming
// what they set that widens what the task's code may reach (runner::Widening; an
// interpreter the sandbox shows anyway is fine), unless the user vouches for the task
// (`trusted`: --trust-task-settings; the extraction's own verification).
util::Status CheckTaskSettings(const TaskDir& task, const runner::RepoSpec& spec, bool trusted);

// Whether `dir` holds an instance.json.
bool IsTaskDir(util::Env& env, const std::string& dir);

// Writes the task's files (patch.diff, test_patch.diff, problem_statement.md, instance.json,
// each atomically) into `dir`, which exists; presolved/ is the caller's.
util::Status WriteTaskFiles(util::Env& env, const std::string& dir, const Instance& instance);

// Test code: a collected test file, a conftest.py, or a file under a tests/ or test/ folder.
bool IsTestCode(const std::string& path, const std::set<std::string>& test_files);

// The files a grader keeps out of reach of the code under test (bound read-only, hashed
// before and after): `test_files` and every other regular file of `tree` that is test code
// (IsTestCode: a test's helper module or data can decide its asserts as well as the test file
// can), relative to `tree`, sorted. .git is skipped; links are neither followed nor listed.
std::vector<std::string> GraderFiles(util::Env& env, const std::string& tree,
                                     const std::vector<std::string>& test_files);

}  // namespace fbkit::extract::taskdir

#include "extract/taskdir/task_dir.h"

#include <nlohmann/json.hpp>

#include "util/json_read.h"
#include "util/json_writer.h"
#include "util/strings.h"

namespace fbkit::extract::taskdir {

namespace {

constexpr char kInstanceFile[] = "instance.json";
constexpr char kSchema[] = "fbkit.task/2";

// The first keys of both kinds of instance.json (keys are written sorted).
void Files(util::JsonWriter& w, const Instance& i) {
  w.Key("FAIL_TO_PASS"), w.StringArray(i.f2p_files);
  w.Key("PASS_TO_PASS"), w.StringArray(i.p2p_files);
  w.Key("base_commit"), w.String(i.base_commit);
}

void Tests(util::JsonWriter& w, const std::vector<std::string>& ids, const char* points,
           const char* list) {
  w.Key(points), w.Int(static_cast<int64_t>(ids.size()));
  w.Key(list), w.StringArray(ids);
}

std::string MadeJson(const Instance& i) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  Files(w, i);
  w.Key("cap"), w.Int(i.cap);
  w.Key("create_time"), w.String(i.create_time);
  w.Key("dangling_references"), w.StringArray(i.dangling_references);
  w.Key("demoted_top_objects"), w.StringArray(i.demoted_top_objects);
  w.Key("extracted"), w.StringArray(i.extracted);
  w.Key("extracted_files"), w.StringArray(i.extracted_files);
  Tests(w, i.f2p_tests, "f2p_test_points", "f2p_tests");
  w.Key("files"), w.Int(static_cast<int64_t>(i.extracted_files.size()));
  w.Key("functions"), w.Int(i.functions);
  if (!i.gold_test_file_reads.empty()) {
    w.Key("gold_test_file_reads");
    w.BeginArray();
    for (const auto& [file, hook] : i.gold_test_file_reads) w.StringArray(std::vector<std::string>{file, hook});
    w.EndArray();
  }
  w.Key("image_name"), w.String(i.image_name);
  w.Key("instance_id"), w.String(i.instance_id);
  w.Key("interfaces"), w.StringArray(i.interfaces);
  w.Key("level"), w.Int(i.level);
  w.Key("lines"), w.Int(i.lines);
  if (!i.model_json.empty()) w.Key("model"), w.Raw(i.model_json);
  w.Key("orphans_removed"), w.StringArray(i.orphans_removed);
  Tests(w, i.p2p_tests, "p2p_test_points", "p2p_tests");
  w.Key("patch"), w.String(i.patch);
  w.Key("problem_statement"), w.String(i.problem_statement);
  w.Key("references"), w.String(i.strict_references ? "strict" : "featurebench");
  w.Key("repo"), w.String(i.repo);
  w.Key("repo_settings"), w.String(runner::RepoSpecJson(i.spec));
  w.Key("schema"), w.String(kSchema);
  w.Key("seed"), w.Int(static_cast<int64_t>(i.seed));
  w.Key("test_patch"), w.String(i.test_patch);
  w.Key("top_objects"), w.StringArray(i.top_objects);
  w.Key("upd_time"), w.String(i.upd_time);
  w.EndObject();
  return out + "\n";
}

std::string ImportedJson(const Instance& i) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  Files(w, i);
  Tests(w, i.f2p_tests, "f2p_test_points", "f2p_tests");
  w.Key("featurebench_repo_settings"), w.String(i.featurebench_repo_settings);
  w.Key("image_name"), w.String(i.image_name);
  w.Key("imported"), w.Bool(true);
  w.Key("instance_id"), w.String(i.instance_id);
  w.Key("level"), w.Int(i.level);
  Tests(w, i.p2p_tests, "p2p_test_points", "p2p_tests");
  w.Key("patch"), w.String(i.patch);
  w.Key("problem_statement"), w.String(i.problem_statement);
  w.Key("repo"), w.String(i.repo);
  w.Key("repo_settings"), w.String(runner::RepoSpecJson(i.spec));
  w.Key("schema"), w.String(kSchema);
  w.Key("test_patch"), w.String(i.test_patch);
  w.Key("top_objects"), w.StringArray(i.top_objects);
  w.EndObject();
  return out + "\n";
}

std::string Text(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

int Int(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int>() : 0;
}

}  // namespace

std::string TaskDir::instance() const { return util::JoinPath(dir, kInstanceFile); }
std::string TaskDir::patch() const { return util::JoinPath(dir, kGoldPatchFile); }
std::string TaskDir::test_patch() const { return util::JoinPath(dir, "test_patch.diff"); }
std::string TaskDir::statement() const { return util::JoinPath(dir, "problem_statement.md"); }
std::string TaskDir::presolved() const { return util::JoinPath(dir, "presolved"); }

util::Expected<TaskDir> Level1Task(util::Env& env, const TaskDir& task, const std::string& given) {
  TaskDir l1{given};
  if (given.empty()) {
    l1.dir = task.dir.ends_with(".lv2") ? task.dir.substr(0, task.dir.size() - 1) + "1" : task.dir;
  }
  if (!env.Stat(l1.presolved(), true).ok()) {
    return util::Error{"an L2 task needs its L1 task beside it (" + l1.dir + ")"};
  }
  return l1;
}

util::Expected<std::string> PlainPresolved(util::Env& env, const TaskDir& task) {
  std::string presolved = task.presolved();
  for (const auto& dir : {presolved, util::JoinPath(presolved, ".git")}) {
    auto st = env.Stat(dir, false);
    if (!st.ok() || st->type != util::FileType::kDirectory) {
      return util::Error{dir + ": not a directory (a task's presolved/ and its .git are plain "
                               "directories)"};
    }
  }
  return presolved;
}

std::string InstanceJson(const Instance& instance) {
  return instance.imported ? ImportedJson(instance) : MadeJson(instance);
}

util::Expected<Instance> ParseInstance(const std::string& json) {
  try {
    nlohmann::json j = nlohmann::json::parse(json);
    Instance i;
    i.instance_id = j.at("instance_id").get<std::string>();
    if (!util::IsFileName(i.instance_id)) {
      return util::Error{"instance_id '" + util::Printable(i.instance_id) +
                         "' cannot name a directory (empty, '.', '..', a '/' or a control "
                         "character)"};
    }
    i.level = j.value("level", 1);
    i.repo = Text(j, "repo");
    i.base_commit = Text(j, "base_commit");
    i.image_name = Text(j, "image_name");
    i.top_objects = util::JsonStringList(j, "top_objects");
    i.f2p_files = util::JsonStringList(j, "FAIL_TO_PASS");
    i.p2p_files = util::JsonStringList(j, "PASS_TO_PASS");
    // fbkit.task/2 keeps the test ids in f2p_tests/p2p_tests (the *_test_points are counts,
    // as FeatureBench's); fbkit.task/1 had the ids in *_test_points.
    bool v1 = j.contains("f2p_test_points") && j.at("f2p_test_points").is_array();
    i.f2p_tests = util::JsonStringList(j, v1 ? "f2p_test_points" : "f2p_tests");
    i.p2p_tests = util::JsonStringList(j, v1 ? "p2p_test_points" : "p2p_tests");
    i.patch = Text(j, "patch");
    i.test_patch = Text(j, "test_patch");
    i.problem_statement = Text(j, "problem_statement");
    i.spec_json = j.at("repo_settings").get<std::string>();
    auto spec = runner::RepoSpecFromJson(i.spec_json);
    if (!spec.ok()) return spec.failure();
    i.spec = std::move(*spec);
    i.imported = j.value("imported", false);
    i.featurebench_repo_settings = Text(j, "featurebench_repo_settings");
    i.cap = Int(j, "cap");
    i.create_time = Text(j, "create_time");
    i.upd_time = Text(j, "upd_time");
    i.dangling_references = util::JsonStringList(j, "dangling_references");
    i.demoted_top_objects = util::JsonStringList(j, "demoted_top_objects");
    i.extracted = util::JsonStringList(j, "extracted");
    i.extracted_files = util::JsonStringList(j, "extracted_files");
    i.interfaces = util::JsonStringList(j, "interfaces");
    i.orphans_removed = util::JsonStringList(j, "orphans_removed");
    i.functions = Int(j, "functions");
    i.lines = Int(j, "lines");
    if (j.contains("gold_test_file_reads")) {
      for (const auto& pair : j.at("gold_test_file_reads")) {
        i.gold_test_file_reads.insert({pair.at(0).get<std::string>(), pair.at(1).get<std::string>()});
      }
    }
    if (j.contains("model")) i.model_json = j["model"].dump();
    i.strict_references = Text(j, "references") == "strict";
    if (j.contains("seed") && j["seed"].is_number_integer()) i.seed = j["seed"].get<uint64_t>();
    return i;
  } catch (const nlohmann::json::exception& e) {
    return util::Error{e.what()};
  }
}

util::Status CheckTaskSettings(const TaskDir& task, const runner::RepoSpec& spec, bool trusted) {
  std::string keys = runner::Widening(spec, runner::WideningRules::kTaskSettings);
  if (trusted || keys.empty()) return util::Status::Ok();
  return util::Error{task.instance() + ": repo_settings set " + keys +
                     ", which widen what the task's code may reach (host paths bound into the "
                     "sandbox, the network, higher limits); if the task directory is yours, "
                     "run it with --trust-task-settings"};
}

util::Expected<Instance> ReadInstance(util::Env& env, const TaskDir& task) {
  // A task directory is no more trusted than the code it holds: no link followed, bounded.
  // Its metadata is parsed whole, at over ten times its size in memory: 32 MiB is far above
  // any real task's (its two patches included) and keeps one task's parse under ~0.6 GB.
  constexpr uint64_t kMaxInstanceBytes = 32u << 20;
  auto text = env.ReadUntrusted(task.dir, kInstanceFile, kMaxInstanceBytes);
  if (!text.ok()) return text.failure();  // names the file
  auto instance = ParseInstance(*text);
  if (!instance.ok()) return util::Error{task.instance() + ": " + instance.error()};
  return instance;
}

bool IsTaskDir(util::Env& env, const std::string& dir) {
  return env.Stat(TaskDir{dir}.instance(), true).ok();
}

util::Status WriteTaskFiles(util::Env& env, const std::string& dir, const Instance& instance) {
  TaskDir task{dir};
  for (const auto& [path, data] : std::vector<std::pair<std::string, std::string>>{
           {task.patch(), instance.patch},
           {task.test_patch(), instance.test_patch},
           {task.statement(), instance.problem_statement},
           {task.instance(), InstanceJson(instance)}}) {
    if (auto s = env.WriteFileAtomic(path, data); !s.ok()) return s;
  }
  return util::Status::Ok();
}

bool IsTestCode(const std::string& path, const std::set<std::string>& test_files) {
  if (test_files.count(path)) return true;
  std::string_view base = path;
  if (size_t slash = path.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
  if (base == "conftest.py") return true;
  return util::InTestsDirectory(path);
}

std::vector<std::string> GraderFiles(util::Env& env, const std::string& tree,
                                     const std::vector<std::string>& test_files) {
  std::set<std::string> tests(test_files.begin(), test_files.end());
  std::set<std::string> files = tests;
  util::WalkTree(env, tree, [&](const std::string& rel, util::FileType type) {
    if (rel == ".git" || rel.ends_with("/.git")) return false;
    if (type == util::FileType::kRegular && IsTestCode(rel, tests)) files.insert(rel);
    return true;
  });
  return {files.begin(), files.end()};
}

std::set<std::string> OriginalPackages(const std::vector<std::string>& top_objects,
                                       const std::function<bool(const std::string&)>& is_package) {
  std::set<std::string> out;
  for (const auto& id : top_objects) {
    std::string path = id.substr(0, id.find("::"));
    std::string name;
    for (size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
      std::string dir = path.substr(0, slash);
      if (is_package(dir)) {
        size_t prev = dir.rfind('/');
        name = prev == std::string::npos ? dir : dir.substr(prev + 1);
        break;
      }
    }
    if (name.empty()) {
      name = path.substr(path.rfind('/') + 1);
      if (name.ends_with(".py")) name.resize(name.size() - 3);
    }
    if (!name.empty()) out.insert(name);
  }
  return out;
}

std::set<std::string> OriginalPackagesIn(util::Env& env, const std::vector<std::string>& top_objects,
                                         const std::string& tree) {
  return OriginalPackages(top_objects, [&](const std::string& dir) {
    if (tree.empty()) {
      std::string name = dir.substr(dir.rfind('/') + 1);
      return name != "src" && name != "lib" && name != "source" && name != "python";
    }
    return env.Stat(util::JoinPath(util::JoinPath(tree, dir), "__init__.py"), true).ok();
  });
}

}  // namespace fbkit::extract::taskdir

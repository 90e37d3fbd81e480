#include "extract/image/images.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "util/json_read.h"
#include "util/strings.h"

namespace fbkit::extract::image {

namespace {

// Builds each tag once per run: the outcome of the first build of a tag is every later
// task's ("" when the image is there).
class Builder {
 public:
  Builder(Engine& engine, const std::string& log_dir, ImagesRun& run,
          const std::function<void(const std::string&)>& say)
      : engine_(engine), log_dir_(log_dir), run_(run), say_(say) {}

  std::string Ensure(const Recipe& recipe) {
    if (auto it = done_.find(recipe.tag); it != done_.end()) return it->second;
    std::string& outcome = done_[recipe.tag];
    auto has = engine_.Has(recipe.tag);
    if (!has.ok()) return outcome = has.error();
    if (*has) {
      ++run_.present;
      if (say_) say_("present: " + recipe.tag);
      return outcome = "";
    }
    if (say_) say_("building " + recipe.tag + " (" + recipe.dir + ")");
    std::string log = util::JoinPath(log_dir_, ImageNamePart(recipe.tag) + ".log");
    util::Status s = engine_.Build(recipe, log);
    if (!s.ok()) return outcome = s.error();
    ++run_.built;
    if (say_) say_("built " + recipe.tag);
    return outcome = "";
  }

 private:
  Engine& engine_;
  std::string log_dir_;
  ImagesRun& run_;
  const std::function<void(const std::string&)>& say_;
  std::map<std::string, std::string> done_;
};

}  // namespace

util::Expected<ImagesRun> MakeImages(util::Env& env, sandbox::Launcher& launcher, Engine* engine,
                                     const std::vector<std::string>& task_dirs,
                                     const ImagesOptions& options) {
  const RecipeOptions& o = options.recipes;
  ImagesRun run;
  run.engine = engine != nullptr;
  std::optional<Recipe> base;
  run.base = o.base;
  if (o.base.empty()) {
    auto written = WriteBaseRecipe(env, o);
    if (!written.ok()) return written.failure();
    base = *written;
    run.base = written->tag;
  }
  for (size_t i = 0; i < task_dirs.size(); ++i) {
    RecipeOptions one = o;
    one.work_dir = util::JoinPath(o.work_dir, std::to_string(i));
    TaskImages t{task_dirs[i], {}, ""};
    auto recipes = WriteTaskRecipes(env, launcher, task_dirs[i], run.base, one);
    if (recipes.ok()) {
      t.recipes = *recipes;
    } else {
      t.error = "writing its recipes: " + recipes.error();
    }
    run.tasks.push_back(std::move(t));
  }
  if (engine != nullptr) {
    Builder builder(*engine, util::JoinPath(o.out_dir, "logs"), run, options.say);
    std::string base_error = base ? builder.Ensure(*base) : "";
    for (auto& t : run.tasks) {
      if (!t.error.empty()) continue;
      std::string why = base_error;
      if (why.empty() && t.recipes.level == 1) why = builder.Ensure(t.recipes.environment);
      if (why.empty()) why = builder.Ensure(t.recipes.task);
      // An L2 task's environment is what its grader runs FROM: built too.
      if (why.empty() && t.recipes.level == 2) why = builder.Ensure(t.recipes.environment);
      if (why.empty() && !t.recipes.featurebench.tag.empty()) why = builder.Ensure(t.recipes.featurebench);
      t.error = why;
      if (!why.empty() && options.say) options.say(t.recipes.instance_id + ": " + why);
    }
  }
  std::sort(run.tasks.begin(), run.tasks.end(), [](const TaskImages& a, const TaskImages& b) {
    return a.recipes.instance_id != b.recipes.instance_id ? a.recipes.instance_id < b.recipes.instance_id
                                                          : a.task_dir < b.task_dir;
  });
  std::string manifest = util::JoinPath(o.out_dir, "images.json");
  if (auto s = env.WriteFileAtomic(manifest, ManifestJson(run, o.out_dir)); !s.ok()) {
    return util::Error{manifest + ": " + s.error()};
  }
  return run;
}

namespace {

std::string Relative(const std::string& path, const std::string& out_dir) {
  std::string prefix = out_dir.ends_with("/") ? out_dir : out_dir + "/";
  return path.starts_with(prefix) ? path.substr(prefix.size()) : path;
}

}  // namespace

std::string ManifestJson(const ImagesRun& run, const std::string& out_dir) {
  nlohmann::ordered_json j;
  j["format"] = "fbkit.images/1";
  j["base"] = run.base;
  j["built"] = run.engine;
  auto tasks = nlohmann::ordered_json::array();
  for (const auto& t : run.tasks) {
    nlohmann::ordered_json o;
    o["instance_id"] = t.recipes.instance_id;
    o["task_dir"] = t.task_dir;
    o["level"] = t.recipes.level;
    if (t.recipes.environment.tag.empty()) {
      o["error"] = t.error;
      tasks.push_back(o);
      continue;
    }
    o["environment"] = {{"tag", t.recipes.environment.tag},
                        {"recipe", Relative(t.recipes.environment.dir, out_dir)},
                        {"network", t.recipes.environment.network}};
    o["image"] = {{"tag", t.recipes.task.tag}, {"recipe", Relative(t.recipes.task.dir, out_dir)}};
    if (!t.recipes.featurebench.tag.empty()) {
      o["featurebench"] = {{"tag", t.recipes.featurebench.tag},
                           {"recipe", Relative(t.recipes.featurebench.dir, out_dir)}};
    }
    if (!t.error.empty()) o["error"] = t.error;
    tasks.push_back(o);
  }
  j["tasks"] = tasks;
  return j.dump(2) + "\n";
}

util::Expected<std::vector<TaskImages>> ReadManifest(util::Env& env, const std::string& path) {
  auto text = env.ReadFile(path);
  if (!text.ok()) return text.failure();  // names the file
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object() || j.value("format", "") != "fbkit.images/1" || !j.contains("tasks") ||
      !j["tasks"].is_array()) {
    return util::Error{path + ": not an fbkit.images/1 manifest"};
  }
  std::string out_dir = util::DirName(path);
  std::vector<TaskImages> out;
  for (const auto& t : j["tasks"]) {
    if (!t.is_object()) return util::Error{path + ": a task is not an object"};
    TaskImages ti;
    ti.task_dir = t.value("task_dir", "");
    ti.recipes.instance_id = t.value("instance_id", "");
    ti.recipes.level = t.value("level", 1);
    ti.error = t.value("error", "");
    if (t.contains("environment") && t["environment"].is_object()) {
      ti.recipes.environment.tag = t["environment"].value("tag", "");
      ti.recipes.environment.dir = util::JoinPath(out_dir, t["environment"].value("recipe", ""));
      ti.recipes.environment.network = t["environment"].value("network", false);
    }
    if (t.contains("featurebench") && t["featurebench"].is_object()) {
      ti.recipes.featurebench.tag = t["featurebench"].value("tag", "");
      ti.recipes.featurebench.dir = util::JoinPath(out_dir, t["featurebench"].value("recipe", ""));
    }
    if (t.contains("image") && t["image"].is_object()) {
      ti.recipes.task.tag = t["image"].value("tag", "");
      ti.recipes.task.dir = util::JoinPath(out_dir, t["image"].value("recipe", ""));
    }
    out.push_back(std::move(ti));
  }
  return out;
}

}  // namespace fbkit::extract::image

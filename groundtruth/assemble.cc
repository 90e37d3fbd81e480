#include "groundtruth/assemble.h"

#include <algorithm>
#include <set>

#include "groundtruth/entity_changes.h"
#include "util/json_docs.h"
#include "model/model.h"
#include "util/json_writer.h"

namespace fbkit::groundtruth {
namespace {

using nlohmann::json;

std::vector<Step> StepsFrom(const json& arr) {
  std::vector<Step> out;
  for (const auto& s : arr) {
    Step st;
    st.id = util::StrOr(s, "id");
    st.type = s.at("type").get<std::string>();
    st.related_tasks = util::StrList(s, "related_tasks");
    st.description = util::StrOr(s, "description");
    out.push_back(std::move(st));
  }
  return out;
}

IssueTexts IssueFrom(const json& j) {
  IssueTexts t;
  if (j.contains("goal") && !j["goal"].is_null()) t.goal = j["goal"].get<std::string>();
  t.concepts = util::StrList(j, "concepts");
  return t;
}

std::string StepsRequest(const Instance& instance, const std::vector<GtTask>& tasks) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("instance_id"), w.String(instance.instance_id);
  w.Key("problem_statement"), w.String(instance.problem_statement);
  w.Key("schema"), w.String("fbkit.llm-gt/1");
  w.Key("step_types"), w.StringArray(StepTypes());
  w.Key("task"), w.String("steps");
  w.Key("tasks"), w.BeginArray();
  for (const auto& t : tasks) {
    w.BeginObject();
    w.Key("change"), w.String(t.change);
    w.Key("entity"), w.String(t.entity);
    w.Key("file"), w.String(t.file);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out + "\n";
}

std::string IssueRequest(const Instance& instance) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("hints"), w.String(instance.hints);
  w.Key("instance_id"), w.String(instance.instance_id);
  w.Key("problem_statement"), w.String(instance.problem_statement);
  w.Key("schema"), w.String("fbkit.llm-gt/1");
  w.Key("task"), w.String("issue");
  w.EndObject();
  return out + "\n";
}

// The model's answer read by `read` (which may throw on a JSON that is not the answer);
// nullopt when it stays invalid and the model falls back.
template <typename T, typename F>
util::Expected<std::optional<T>> AskModel(model::Model& model, const std::string& request,
                                          F read) {
  std::function<util::Expected<T>(const std::string&)> reader =
      [&read](const std::string& answer) -> util::Expected<T> {
    try {
      return read(json::parse(answer));
    } catch (const std::exception& e) {
      return util::Error{std::string("the model's answer is not the expected JSON: ") +
                         e.what()};
    }
  };
  return model::AskFor(model, request, reader);
}

template <typename T, typename F>
util::Expected<std::map<std::string, T>> ByInstance(const std::string& text,
                                                    const std::string& path, F read) {
  auto records = util::ReadRecords(text, path, "instances");
  if (!records.ok()) return records.failure();
  std::map<std::string, T> out;
  for (size_t i = 0; i < records->size(); ++i) {
    try {
      const auto& r = (*records)[i];
      out[r.at("instance_id").template get<std::string>()] = read(r);
    } catch (const std::exception& e) {
      return util::Error{path + ": record " + std::to_string(i + 1) + ": " + e.what()};
    }
  }
  return out;
}

void AddSteps(const Instance& instance, const GtOptions& o, GtResult* r) {
  std::vector<Step> steps;
  if (auto it = o.steps.find(instance.instance_id); it != o.steps.end()) {
    steps = it->second;
  } else if (o.model) {
    const auto& tasks = r->gt.tasks;
    auto got = AskModel<std::vector<Step>>(
        *o.model, StepsRequest(instance, tasks),
        [&tasks](const json& j) -> util::Expected<std::vector<Step>> {
          auto read = StepsFrom(j.at("steps"));
          if (auto s = CheckSteps(tasks, &read); !s.ok()) return s.failure();
          return read;
        });
    if (!got.ok()) return r->problems.push_back("steps: " + got.error());
    if (*got) steps = std::move(**got);
  }
  if (auto s = CheckSteps(r->gt.tasks, &steps); !s.ok()) {
    return r->problems.push_back("steps rejected: " + s.error());
  }
  r->gt.steps = std::move(steps);
}

void AddIssue(const Instance& instance, const GtOptions& o, GtResult* r) {
  IssueTexts texts;
  if (auto it = o.issues.find(instance.instance_id); it != o.issues.end()) {
    texts = it->second;
  } else if (o.model) {
    auto got = AskModel<IssueTexts>(*o.model, IssueRequest(instance),
                                    [](const json& j) -> util::Expected<IssueTexts> {
                                      return IssueFrom(j);
                                    });
    if (!got.ok()) return r->problems.push_back("issue: " + got.error());
    if (*got) texts = std::move(**got);
  }
  r->gt.goal = texts.goal;
  r->gt.concepts = texts.concepts;
}

std::string PurposeRequest(const Instance& instance, const GtTask& task, const std::string& code) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("change"), w.String(task.change);
  w.Key("code"), w.String(code);
  w.Key("entity"), w.String(task.entity);
  w.Key("file"), w.String(task.file);
  w.Key("instance_id"), w.String(instance.instance_id);
  w.Key("kind"), w.String(task.kind);
  w.Key("problem_statement"), w.String(instance.problem_statement);
  w.Key("schema"), w.String("fbkit.llm-gt/1");
  w.Key("task"), w.String("purpose");
  w.EndObject();
  return out + "\n";
}

// entity id -> its code in the gold version (the base version for a deleted entity).
util::Expected<std::map<std::string, std::string>> EntityCode(util::Env& env,
                                                              sandbox::Launcher& launcher,
                                                              parser::PythonParser& parser,
                                                              const Instance& instance,
                                                              const std::string& work) {
  auto versions =
      PatchVersions(env, launcher, instance.repo, instance.base_commit, instance.patch, work);
  if (!versions.ok()) return versions.failure();
  std::map<std::string, const FileVersions*> by_path;
  for (const auto& v : *versions) by_path[v.path] = &v;
  std::map<std::string, std::string> out;
  for (const auto& ch : DiffEntities(parser, *versions).entities) {
    const FileVersions* f = by_path[ch.file];
    bool before = ch.change == Change::kDeleted;
    const auto& text = before ? f->before : f->after;
    int64_t b = before ? ch.before_start : ch.after_start,
            e = before ? ch.before_end : ch.after_end;
    if (!text || b < 0 || e < b || static_cast<size_t>(e) > text->size()) continue;
    out[ch.entity] = text->substr(b, e - b);
  }
  return out;
}

// Each task without a purpose gets one from the model: the feature request and the entity's
// own code go out, a behaviour-level sentence comes back.
void AddPurposes(util::Env& env, sandbox::Launcher& launcher, parser::PythonParser& parser,
                 const Instance& instance, const GtOptions& o, const std::string& work,
                 GtResult* r) {
  if (!o.model) return;
  auto code = EntityCode(env, launcher, parser, instance, util::JoinPath(work, "code"));
  if (!code.ok()) return r->problems.push_back("purposes: " + code.error());
  for (auto& t : r->gt.tasks) {
    if (!t.purpose.empty()) continue;
    auto got = AskModel<std::string>(
        *o.model, PurposeRequest(instance, t, (*code)[t.entity]),
        [](const json& j) -> util::Expected<std::string> {
          return j.at("purpose").get<std::string>();
        });
    if (!got.ok()) {
      r->problems.push_back("purpose of " + t.entity + ": " + got.error());
      continue;
    }
    if (*got) t.purpose = **got;
  }
}

}  // namespace

util::Expected<std::map<std::string, std::vector<Step>>> ParseStepsFile(const std::string& text,
                                                                        const std::string& path) {
  return ByInstance<std::vector<Step>>(text, path,
                                       [](const json& r) { return StepsFrom(r.at("steps")); });
}

util::Expected<std::map<std::string, IssueTexts>> ParseIssueFile(const std::string& text,
                                                                 const std::string& path) {
  return ByInstance<IssueTexts>(text, path, IssueFrom);
}

util::Status CheckSteps(const std::vector<GtTask>& tasks, std::vector<Step>* steps) {
  std::set<std::string> known;
  for (const auto& t : tasks) known.insert(t.entity);
  const auto& types = StepTypes();
  for (size_t i = 0; i < steps->size(); ++i) {
    Step& s = (*steps)[i];
    if (s.id.empty()) s.id = "S" + std::to_string(i + 1);
    if (std::find(types.begin(), types.end(), s.type) == types.end()) {
      return util::Error{"step " + s.id + " has type \"" + s.type +
                         "\", which is not in the taxonomy"};
    }
    if (s.related_tasks.empty()) return util::Error{"step " + s.id + " names no task"};
    for (const auto& t : s.related_tasks) {
      if (!known.count(t))
        return util::Error{"step " + s.id + " names " + t + ", which is no task"};
    }
  }
  return {};
}

GtResult BuildGroundTruth(const runner::Services& services,
                          parser::PythonParser& parser,
                          const Instance& instance, const GtOptions& options,
                          const std::string& work_dir) {
  [[maybe_unused]] auto& [env, launcher, tests, git_maker] = services;
  GtResult r;
  r.gt.instance_id = instance.instance_id;
  r.validation = Validate({env, launcher, tests}, instance, options.spec, options.repeat,
                          util::JoinPath(work_dir, "validate"));
  if (r.validation.status != ValidationStatus::kOk) return r;
  r.localization =
      Localize({env, launcher, tests}, parser, instance, options.spec, r.validation.fail_to_pass,
               options.entities, util::JoinPath(work_dir, "ablate"), options.whole_files);
  if (!r.localization.error.empty()) return r;
  r.ok = true;
  const auto& l = r.localization;
  r.gt.necessary = l.necessary, r.gt.other = l.other, r.gt.test = l.test, r.gt.unknown = l.unknown;
  r.gt.tasks = l.tasks;
  r.gt.fail_to_pass = r.validation.fail_to_pass;
  r.gt.pass_to_pass = r.validation.pass_to_pass;
  AddPurposes(env, launcher, parser, instance, options, util::JoinPath(work_dir, "llm"), &r);
  AddSteps(instance, options, &r);
  AddIssue(instance, options, &r);
  if (options.model) r.gt.model = model::ModelJson(*options.model);
  (void)env.RemoveAll(work_dir);
  return r;
}

}  // namespace fbkit::groundtruth

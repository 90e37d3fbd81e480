#include "groundtruth/records.h"

#include <algorithm>
#include <set>

#include "util/json_docs.h"
#include "util/env.h"
#include "util/json_writer.h"

namespace fbkit::groundtruth {
namespace {

using nlohmann::json;

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::string NecessaryOf(const json& j) {
  auto it = j.find("necessary");
  if (it == j.end() || it->is_null()) return "unknown";
  if (it->is_boolean()) return it->get<bool>() ? "true" : "false";
  std::string s = it->get<std::string>();
  if (s != "true" && s != "false" && s != "unknown") {
    throw std::invalid_argument("necessary must be true, false or \"unknown\", not \"" + s + "\"");
  }
  return s;
}

std::vector<Step> StepsOf(const json& j) {
  std::vector<Step> out;
  if (!j.contains("steps") || j["steps"].is_null()) return out;
  size_t n = 0;
  for (const auto& s : j.at("steps")) {
    Step st;
    st.id = util::StrOr(s, "id", "S" + std::to_string(++n));
    st.type = util::StrOr(s, "type");
    st.related_tasks = util::StrList(s, "related_tasks");
    st.description = util::StrOr(s, "description");
    out.push_back(std::move(st));
  }
  return out;
}

GroundTruth GtOf(const json& j) {
  GroundTruth g;
  g.instance_id = j.at("instance_id").get<std::string>();
  if (j.contains("files")) {
    const auto& f = j.at("files");
    g.necessary = Sorted(util::StrList(f, "necessary"));
    g.other = Sorted(util::StrList(f, "other"));
    g.test = Sorted(util::StrList(f, "test"));
    g.unknown = Sorted(util::StrList(f, "unknown"));
  }
  if (j.contains("tasks")) {
    for (const auto& t : j.at("tasks")) {
      GtTask task;
      task.entity = t.at("entity").get<std::string>();
      task.file = util::StrOr(t, "file", task.entity.substr(0, task.entity.find("::")));
      task.change = util::StrOr(t, "change", "modified");
      task.necessary = NecessaryOf(t);
      task.kind = util::StrOr(t, "kind");
      task.old_entity = util::StrOr(t, "old_entity");
      task.purpose = util::StrOr(t, "purpose");
      g.tasks.push_back(std::move(task));
    }
  }
  g.steps = StepsOf(j);
  g.fail_to_pass = util::StrList(j, "FAIL_TO_PASS");
  g.pass_to_pass = util::StrList(j, "PASS_TO_PASS");
  if (j.contains("goal") && !j["goal"].is_null()) g.goal = j["goal"].get<std::string>();
  g.concepts = util::StrList(j, "concepts");
  return g;
}

std::optional<double> NumberOr(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<double>();
}

std::optional<bool> BoolOr(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<bool>();
}

void CheckRange(const std::optional<double>& v, double hi, const char* name) {
  if (v && (*v < 0 || *v > hi)) {
    throw std::invalid_argument(std::string(name) + " must lie in [0, " + (hi == 10 ? "10" : "1") +
                                "]");
  }
}

AgentInstance AgentOf(const json& j) {
  AgentInstance a;
  a.instance_id = j.at("instance_id").get<std::string>();
  a.patch = util::StrOr(j, "patch");
  a.applied = BoolOr(j, "applied");
  a.resolved = BoolOr(j, "resolved");
  a.files = util::StrList(j, "files");
  if (j.contains("tasks") && !j["tasks"].is_null()) {
    for (const auto& t : j.at("tasks")) {
      AgentTask task;
      task.file = util::StrOr(t, "file");
      task.entity = util::StrOr(t, "entity");
      if (task.file.empty()) task.file = task.entity.substr(0, task.entity.find("::"));
      task.change = util::StrOr(t, "change");
      task.purpose = util::StrOr(t, "purpose");
      a.tasks.push_back(std::move(task));
    }
  }
  a.steps = StepsOf(j);
  if (j.contains("goal") && j["goal"].is_string()) a.goal = j["goal"].get<std::string>();
  a.concepts = util::StrList(j, "concepts");
  if (j.contains("judgements") && !j["judgements"].is_null()) {
    const auto& jj = j.at("judgements");
    a.goal_score = NumberOr(jj, "goal_score");
    a.concept_recall = NumberOr(jj, "concept_recall");
    a.concept_accuracy = NumberOr(jj, "concept_accuracy");
    CheckRange(a.goal_score, 10, "judgements.goal_score");
    CheckRange(a.concept_recall, 1, "judgements.concept_recall");
    CheckRange(a.concept_accuracy, 1, "judgements.concept_accuracy");
  }
  return a;
}

Instance InstanceOf(const json& j, const std::string& dir) {
  Instance i;
  i.instance_id = j.at("instance_id").get<std::string>();
  i.repo = j.at("repo").get<std::string>();
  if (!i.repo.starts_with("/")) i.repo = util::JoinPath(dir, i.repo);
  i.base_commit = j.at("base_commit").get<std::string>();
  i.patch = j.at("patch").get<std::string>();
  i.test_patch = util::StrOr(j, "test_patch");
  i.problem_statement = util::StrOr(j, "problem_statement");
  i.hints = util::StrOr(j, "hints_text", util::StrOr(j, "hints"));
  i.pythonpath = util::StrList(j, "pythonpath");
  return i;
}

std::string Stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  return base.substr(0, base.find('.'));
}

}  // namespace

const std::vector<std::string>& StepTypes() {
  static const std::vector<std::string> kTypes = {
      "introduce new capability", "reuse existing semantics", "change existing semantics",
      "deprecate or replace behavior", "enforce constraints or edge cases"};
  return kTypes;
}

util::Expected<std::vector<Instance>> ParseInstances(const std::string& text,
                                                     const std::string& path) {
  auto records = util::ReadRecords(text, path, "instances");
  if (!records.ok()) return records.failure();
  std::vector<Instance> out;
  std::set<std::string> seen;
  std::string dir = util::DirName(path);
  if (dir.empty()) dir = ".";
  for (size_t i = 0; i < records->size(); ++i) {
    try {
      out.push_back(InstanceOf((*records)[i], dir));
    } catch (const std::exception& e) {
      return util::Error{path + ": record " + std::to_string(i + 1) + ": " + e.what()};
    }
    if (!seen.insert(out.back().instance_id).second) {
      return util::Error{path + ": instance " + out.back().instance_id + " appears twice"};
    }
  }
  return out;
}

util::Expected<std::vector<GroundTruth>> ParseGroundTruths(const std::string& text,
                                                           const std::string& path) {
  auto records = util::ReadRecords(text, path, "instances");
  if (!records.ok()) return records.failure();
  std::vector<GroundTruth> out;
  std::set<std::string> seen;
  for (size_t i = 0; i < records->size(); ++i) {
    try {
      out.push_back(GtOf((*records)[i]));
    } catch (const std::exception& e) {
      return util::Error{path + ": record " + std::to_string(i + 1) + ": " + e.what()};
    }
    if (!seen.insert(out.back().instance_id).second) {
      return util::Error{path + ": instance " + out.back().instance_id + " appears twice"};
    }
  }
  return out;
}

util::Expected<AgentRun> ParseAgentRun(const std::string& text, const std::string& path) {
  json wrapper;
  auto records = util::ReadRecords(text, path, "instances", &wrapper);
  if (!records.ok()) return records.failure();
  AgentRun run;
  std::set<std::string> seen;
  try {
    run.agent = wrapper.is_object() ? util::StrOr(wrapper, "agent", Stem(path)) : Stem(path);
    for (size_t i = 0; i < records->size(); ++i) {
      try {
        run.instances.push_back(AgentOf((*records)[i]));
      } catch (const std::exception& e) {
        return util::Error{path + ": record " + std::to_string(i + 1) + ": " + e.what()};
      }
      if (!seen.insert(run.instances.back().instance_id).second) {
        return util::Error{path + ": instance " + run.instances.back().instance_id +
                           " appears twice"};
      }
    }
  } catch (const std::exception& e) {
    return util::Error{path + ": " + e.what()};
  }
  return run;
}

namespace {

void WriteSteps(util::JsonWriter& w, const std::vector<Step>& steps) {
  w.BeginArray();
  for (const auto& s : steps) {
    w.BeginObject();
    w.Key("description"), w.String(s.description);
    w.Key("id"), w.String(s.id);
    w.Key("related_tasks"), w.StringArray(s.related_tasks);
    w.Key("type"), w.String(s.type);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

void WriteTasks(util::JsonWriter& w, const std::vector<GtTask>& tasks) {
  w.BeginArray();
  for (const auto& t : tasks) {
    w.BeginObject();
    w.Key("change"), w.String(t.change);
    w.Key("entity"), w.String(t.entity);
    w.Key("file"), w.String(t.file);
    if (!t.kind.empty()) w.Key("kind"), w.String(t.kind);
    w.Key("necessary");
    if (t.necessary == "unknown") {
      w.String("unknown");
    } else {
      w.Bool(t.necessary == "true");
    }
    if (!t.old_entity.empty()) w.Key("old_entity"), w.String(t.old_entity);
    if (!t.purpose.empty()) w.Key("purpose"), w.String(t.purpose);
    w.EndObject();
  }
  w.EndArray();
}

std::string GroundTruthJson(const GroundTruth& gt) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("FAIL_TO_PASS"), w.StringArray(gt.fail_to_pass);
  w.Key("PASS_TO_PASS"), w.StringArray(gt.pass_to_pass);
  if (!gt.concepts.empty()) w.Key("concepts"), w.StringArray(gt.concepts);
  w.Key("files"), w.BeginObject();
  w.Key("necessary"), w.StringArray(Sorted(gt.necessary));
  w.Key("other"), w.StringArray(Sorted(gt.other));
  w.Key("test"), w.StringArray(Sorted(gt.test));
  w.Key("unknown"), w.StringArray(Sorted(gt.unknown));
  w.EndObject();
  if (gt.goal) w.Key("goal"), w.String(*gt.goal);
  w.Key("instance_id"), w.String(gt.instance_id);
  if (!gt.model.empty()) w.Key("model"), w.Raw(gt.model);
  w.Key("schema"), w.String("fbkit.race-gt/1");
  w.Key("steps"), WriteSteps(w, gt.steps);
  w.Key("tasks"), WriteTasks(w, gt.tasks);
  w.EndObject();
  return out + "\n";
}

}  // namespace fbkit::groundtruth

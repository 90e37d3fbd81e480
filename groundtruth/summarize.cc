#include "groundtruth/summarize.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "util/json_docs.h"
#include "agents/trajectory.h"
#include "model/model.h"
#include "util/json_writer.h"

namespace fbkit::groundtruth {
namespace {

using json = nlohmann::json;

const std::vector<std::string>& Changes() {
  static const std::vector<std::string> kChanges = {"new", "modified", "deleted", "renamed"};
  return kChanges;
}

bool IsTrajectoryName(const std::string& name) {
  if (name.ends_with(".traj.json") || name.ends_with(".traj") || name == "output.jsonl") return true;
  const auto& cli = agents::AgentCliReaders();  // `infer --agent` streams: output/<format>.jsonl
  return std::any_of(cli.begin(), cli.end(), [&](const auto& r) {
    std::string format = agents::TrajectoryFormatName(r.first);
    return name == format + ".jsonl" || name == format + ".json";  // trae-agent.json
  });
}

void OptInt(util::JsonWriter& w, const std::optional<int64_t>& v) {
  if (v) {
    w.Int(*v);
  } else {
    w.Null();
  }
}

void WriteTrajectory(util::JsonWriter& w, const agents::Trajectory& t) {
  w.BeginObject();
  w.Key("api_calls"), OptInt(w, t.api_calls);
  w.Key("cost");
  if (t.cost) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6f", *t.cost);
    w.Raw(buf);
  } else {
    w.Null();
  }
  w.Key("edited"), w.StringArray(t.edited);
  w.Key("exit_status"), w.String(t.exit_status);
  w.Key("format"), w.String(agents::TrajectoryFormatName(t.format));
  w.Key("opened"), w.StringArray(t.opened);
  w.Key("patch_files"), w.StringArray(t.patch_files);
  w.Key("root"), w.String(t.root);
  w.Key("source"), w.String(t.source);
  w.Key("tokens"), w.BeginObject();
  w.Key("completion"), OptInt(w, t.completion_tokens);
  w.Key("prompt"), OptInt(w, t.prompt_tokens);
  w.EndObject();
  w.Key("turns"), w.Int(static_cast<int64_t>(t.turns.size()));
  w.EndObject();
}

}  // namespace

util::Expected<std::vector<std::string>> TrajectoryFiles(util::Env& env, const std::string& runs) {
  auto files = util::FilesUnder(env, runs, [](const std::string& name) {
    return IsTrajectoryName(name) || name.ends_with(".json");
  });
  if (!files.ok()) return files;
  // Of other JSON files, only Trae Agent's harness's <id>/<id>.json and the meta.json of an
  // AutoCodeRover task directory (beside its output_0/; not the copies inside output_N/).
  std::erase_if(*files, [&](const std::string& f) {
    std::string name = f.substr(f.find_last_of('/') + 1);
    if (IsTrajectoryName(name) || f == runs) return false;
    std::string dir = util::DirName(f);
    if (name == "meta.json") {
      auto out = env.Stat(util::JoinPath(dir, "output_0"), false);
      return !out.ok() || out->type != util::FileType::kDirectory;
    }
    return dir.substr(dir.find_last_of('/') + 1) + ".json" != name;
  });
  return files;
}

std::string SummarizeRequest(const agents::Trajectory& t, const std::string& agent) {
  json turns = json::array();
  for (const auto& turn : t.turns) {
    turns.push_back(
        {{"action", turn.action}, {"observation", turn.observation}, {"thought", turn.thought}});
  }
  json req = {{"schema", "fbkit.llm-summarize/1"},
              {"task", "summarize_trajectory"},
              {"instance_id", t.instance_id},
              {"agent", agent},
              {"format", agents::TrajectoryFormatName(t.format)},
              {"problem_statement", t.problem_statement},
              {"turns", turns},
              {"opened", t.opened},
              {"edited", t.edited},
              {"patch", t.patch},
              {"step_types", StepTypes()},
              {"changes", Changes()}};
  return req.dump() + "\n";
}

util::Status ApplySummary(const std::string& answer, Summary* s) {
  AgentInstance a = s->agent;
  try {
    json j = json::parse(answer);
    if (j.contains("goal") && j["goal"].is_string()) a.goal = j["goal"].get<std::string>();
    a.concepts = util::StrList(j, "concepts");
    a.files = util::StrList(j, "files");
    std::set<std::string> entities;
    for (const auto& t : j.value("tasks", json::array())) {
      AgentTask task;
      task.entity = t.at("entity").get<std::string>();
      task.file = util::TextOr(t, "file");
      if (task.file.empty()) task.file = task.entity.substr(0, task.entity.find("::"));
      task.change = util::TextOr(t, "change");
      task.purpose = util::TextOr(t, "purpose");
      if (std::find(Changes().begin(), Changes().end(), task.change) == Changes().end()) {
        return util::Error{"task " + task.entity + " has change \"" + task.change + "\""};
      }
      entities.insert(task.entity);
      a.tasks.push_back(std::move(task));
    }
    for (const auto& st : j.value("steps", json::array())) {
      Step step;
      step.type = st.at("type").get<std::string>();
      step.related_tasks = util::StrList(st, "related_tasks");
      step.description = util::TextOr(st, "description");
      step.id = "P" + std::to_string(a.steps.size() + 1);
      if (std::find(StepTypes().begin(), StepTypes().end(), step.type) == StepTypes().end()) {
        return util::Error{"step " + step.id + " has type \"" + step.type +
                           "\", not in the taxonomy"};
      }
      for (const auto& r : step.related_tasks) {
        if (!entities.count(r))
          return util::Error{"step " + step.id + " names " + r + ", no task of the answer"};
      }
      a.steps.push_back(std::move(step));
    }
  } catch (const std::exception& e) {
    return util::Error{std::string("answer is not the expected JSON: ") + e.what()};
  }
  s->agent = std::move(a);
  return {};
}

std::vector<std::string> SummarizeAll(model::Model& model, const std::string& agent,
                                      std::vector<Summary>* all) {
  std::vector<std::string> warnings;
  for (auto& s : *all) {
    std::function<util::Expected<Summary>(const std::string&)> read =
        [&s](const std::string& answer) -> util::Expected<Summary> {
      Summary out = s;
      if (auto st = ApplySummary(answer, &out); !st.ok()) return st.failure();
      return out;
    };
    auto got = model::AskFor(model, SummarizeRequest(s.trajectory, agent), read);
    if (!got.ok()) {
      warnings.push_back(s.trajectory.instance_id + ": " + got.error());
    } else if (*got) {
      s = std::move(**got);
    }  // else the trajectory's own reading stays, as without a model
  }
  return warnings;
}

util::Expected<int> ApplyEvaluation(const std::string& text, const std::string& path,
                                    std::vector<Summary>* all) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return util::Error{path + ": not JSON (a SWE-bench report was expected)"};
  int set = 0;
  if (j.contains("resolved_ids")) {
    auto ids = [&](const char* key) {
      auto v = util::StrList(j, key);
      return std::set<std::string>(v.begin(), v.end());
    };
    std::set<std::string> resolved, completed, empty, unresolved, error;
    try {  // a list that is no list of strings is an error of that file, not a crash
      resolved = ids("resolved_ids"), completed = ids("completed_ids");
      empty = ids("empty_patch_ids"), unresolved = ids("unresolved_ids"), error = ids("error_ids");
    } catch (const std::exception& e) {
      return util::Error{path + ": " + e.what()};
    }
    for (auto& s : *all) {
      const std::string& id = s.agent.instance_id;
      if (resolved.count(id) || completed.count(id) || empty.count(id) || unresolved.count(id) ||
          error.count(id)) {
        s.agent.resolved = resolved.count(id) > 0;
        if (completed.count(id)) s.agent.applied = true;
        if (empty.count(id)) s.agent.applied = false;
        ++set;
      }
    }
    return set;
  }
  for (auto& s : *all) {
    auto it = j.find(s.agent.instance_id);
    if (it == j.end() || !it->is_object() || !it->contains("resolved")) continue;
    s.agent.resolved = (*it)["resolved"].is_boolean() && (*it)["resolved"].get<bool>();
    if (it->contains("patch_successfully_applied") &&
        (*it)["patch_successfully_applied"].is_boolean()) {
      s.agent.applied = (*it)["patch_successfully_applied"].get<bool>();
    }
    ++set;
  }
  bool looks_like_report = false;
  for (const auto& [k, v] : j.items()) looks_like_report |= v.is_object() && v.contains("resolved");
  if (!looks_like_report) {
    return util::Error{
        path + ": neither a SWE-bench run report (resolved_ids) nor an instance report.json"};
  }
  return set;
}

std::string AgentRunJson(const std::string& agent, const std::vector<Summary>& all,
                         const std::string& model) {
  std::vector<const Summary*> sorted;
  for (const auto& s : all) sorted.push_back(&s);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Summary* a, const Summary* b) {
    return a->agent.instance_id < b->agent.instance_id;
  });
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("agent"), w.String(agent);
  w.Key("instances"), w.BeginArray();
  for (const Summary* s : sorted) {
    const AgentInstance& a = s->agent;
    w.BeginObject();
    if (a.applied) w.Key("applied"), w.Bool(*a.applied);
    w.Key("concepts"), w.StringArray(a.concepts);
    w.Key("files"), w.StringArray(a.files);
    w.Key("goal");
    if (a.goal) {
      w.String(*a.goal);
    } else {
      w.Null();
    }
    w.Key("instance_id"), w.String(a.instance_id);
    w.Key("patch"), w.String(a.patch);
    if (a.resolved) w.Key("resolved"), w.Bool(*a.resolved);
    w.Key("steps"), w.BeginArray();
    for (const auto& st : a.steps) {
      w.BeginObject();
      w.Key("description"), w.String(st.description);
      w.Key("id"), w.String(st.id);
      w.Key("related_tasks"), w.StringArray(st.related_tasks);
      w.Key("type"), w.String(st.type);
      w.EndObject();
    }
    w.EndArray();
    w.Key("tasks"), w.BeginArray();
    for (const auto& t : a.tasks) {
      w.BeginObject();
      w.Key("change"), w.String(t.change);
      w.Key("entity"), w.String(t.entity);
      w.Key("file"), w.String(t.file);
      if (!t.purpose.empty()) w.Key("purpose"), w.String(t.purpose);
      w.EndObject();
    }
    w.EndArray();
    w.Key("trajectory"), WriteTrajectory(w, s->trajectory);
    w.EndObject();
  }
  w.EndArray();
  if (!model.empty()) w.Key("model"), w.Raw(model);
  w.Key("schema"), w.String("fbkit.race-agent/1");
  w.EndObject();
  return out + "\n";
}

}  // namespace fbkit::groundtruth

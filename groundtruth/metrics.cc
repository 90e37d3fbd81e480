#include "groundtruth/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "util/patch.h"
#include "util/json_writer.h"

namespace fbkit::groundtruth {
namespace {

using Pairs = std::vector<std::pair<size_t, size_t>>;

std::optional<double> Ratio(size_t num, size_t den) {
  if (den == 0) return std::nullopt;
  return static_cast<double>(num) / static_cast<double>(den);
}

LevelScore Level(size_t truth, size_t predicted, size_t matched) {
  LevelScore s;
  s.truth = truth, s.predicted = predicted, s.matched = matched;
  s.recall = Ratio(matched, truth);
  s.overpred = Ratio(predicted - matched, predicted);
  return s;
}

LevelScore ScoreFiles(const GroundTruth& gt, const AgentInstance& a) {
  auto predicted = PredictedFiles(a);
  std::set<std::string> necessary(gt.necessary.begin(), gt.necessary.end());
  std::set<std::string> relevant = necessary;
  for (const auto* v : {&gt.other, &gt.test, &gt.unknown}) relevant.insert(v->begin(), v->end());
  size_t hit = 0, irrelevant = 0;
  for (const auto& f : predicted) hit += necessary.count(f), irrelevant += !relevant.count(f);
  LevelScore s;
  s.truth = necessary.size(), s.predicted = predicted.size(), s.matched = hit;
  s.recall = Ratio(hit, necessary.size());
  s.overpred = Ratio(irrelevant, predicted.size());
  return s;
}

// "Outer.method" words and the file's stem: the text of a task without a purpose.
std::string TaskText(const std::string& purpose, const std::string& entity) {
  if (!purpose.empty()) return purpose;
  std::string path = entity.substr(0, entity.find("::"));
  std::string stem = path.substr(path.find_last_of('/') + 1);
  size_t sep = entity.find("::");
  return (sep == std::string::npos ? entity : entity.substr(sep + 2)) + " " + stem;
}

std::vector<AgentTask> UniqueTasks(const std::vector<AgentTask>& tasks) {
  std::vector<AgentTask> out;
  std::set<std::string> seen;
  for (const auto& t : tasks) {
    if (t.change == "cosmetic") continue;
    if (!t.entity.empty() && !seen.insert(t.entity).second) continue;
    out.push_back(t);
  }
  return out;
}

// Task pairs (truth index, predicted index): deterministic on ids, then the matcher on new
// tasks.
util::Expected<Pairs> MatchTasks(const std::string& id, const std::vector<const GtTask*>& truth,
                                 const std::vector<AgentTask>& pred, const Matcher& matcher) {
  Pairs pairs;
  std::vector<bool> tused(truth.size()), pused(pred.size());
  std::unordered_map<std::string, size_t> by_entity;
  for (size_t p = pred.size(); p-- > 0;) by_entity[pred[p].entity] = p;
  for (size_t t = 0; t < truth.size(); ++t) {
    for (const auto* key : {&truth[t]->entity, &truth[t]->old_entity}) {
      auto it = key->empty() ? by_entity.end() : by_entity.find(*key);
      if (it == by_entity.end() || pused[it->second] || tused[t]) continue;
      pairs.emplace_back(t, it->second);
      tused[t] = pused[it->second] = true;
    }
  }
  MatchRequest req;
  req.task = "match_tasks";
  req.instance_id = id;
  std::vector<size_t> tidx, pidx;
  for (size_t t = 0; t < truth.size(); ++t) {
    if (tused[t] || truth[t]->change != "new") continue;
    tidx.push_back(t);
    req.truth.push_back({truth[t]->entity, TaskText(truth[t]->purpose, truth[t]->entity)});
  }
  for (size_t p = 0; p < pred.size(); ++p) {
    if (pused[p] || (pred[p].change != "new" && !pred[p].change.empty())) continue;
    pidx.push_back(p);
    std::string pid = pred[p].entity.empty() ? "P" + std::to_string(p + 1) : pred[p].entity;
    req.predicted.push_back({pid, TaskText(pred[p].purpose, pred[p].entity)});
  }
  for (size_t t = 0; t < tidx.size(); ++t) {
    for (size_t p = 0; p < pidx.size(); ++p) req.candidates.emplace_back(t, p);
  }
  if (req.candidates.empty()) return pairs;
  auto more = matcher(req);
  if (!more.ok()) return more.failure();
  for (auto [t, p] : *more) pairs.emplace_back(tidx[t], pidx[p]);
  return pairs;
}

util::Expected<size_t> MatchSteps(const std::string& id, const GroundTruth& gt,
                                  const AgentInstance& a,
                                  const std::map<std::string, std::string>& task_map,
                                  const Matcher& matcher) {
  MatchRequest req;
  req.task = "match_steps";
  req.instance_id = id;
  for (const auto& s : gt.steps) req.truth.push_back({s.id, s.description});
  for (size_t p = 0; p < a.steps.size(); ++p) {
    const auto& s = a.steps[p];
    req.predicted.push_back({s.id.empty() ? "P" + std::to_string(p + 1) : s.id, s.description});
  }
  for (size_t t = 0; t < gt.steps.size(); ++t) {
    std::set<std::string> truth(gt.steps[t].related_tasks.begin(), gt.steps[t].related_tasks.end());
    for (size_t p = 0; p < a.steps.size(); ++p) {
      if (a.steps[p].type != gt.steps[t].type) continue;
      bool overlap = truth.empty() && a.steps[p].related_tasks.empty();
      for (const auto& r : a.steps[p].related_tasks) {
        auto m = task_map.find(r);
        overlap = overlap || truth.count(m == task_map.end() ? r : m->second);
      }
      if (overlap) req.candidates.emplace_back(t, p);
    }
  }
  if (req.candidates.empty()) return size_t{0};
  auto pairs = matcher(req);
  if (!pairs.ok()) return pairs.failure();
  return pairs->size();
}

void ScoreTasksAndSteps(const GroundTruth& gt, const AgentInstance& a, const Matcher& matcher,
                        InstanceScore* s) {
  std::vector<const GtTask*> truth;
  for (const auto& t : gt.tasks) {
    if (t.change != "cosmetic") truth.push_back(&t);
  }
  auto pred = UniqueTasks(a.tasks);
  auto pairs = MatchTasks(gt.instance_id, truth, pred, matcher);
  if (!pairs.ok()) {
    s->error = "tasks: " + pairs.error();
    return;
  }
  s->tasks = Level(truth.size(), pred.size(), pairs->size());
  std::map<std::string, std::string> task_map;
  for (auto [t, p] : *pairs) {
    if (!pred[p].entity.empty()) task_map[pred[p].entity] = truth[t]->entity;
  }
  auto steps = MatchSteps(gt.instance_id, gt, a, task_map, matcher);
  if (!steps.ok()) {
    s->error = "steps: " + steps.error();
    return;
  }
  s->steps = Level(gt.steps.size(), a.steps.size(), *steps);
}

std::optional<double> AsRate(const std::optional<bool>& b) {
  if (!b) return std::nullopt;
  return *b ? 1.0 : 0.0;
}

void AddTo(GroupScore* g, const InstanceScore& s) {
  ++g->instances;
  auto& m = g->metrics;
  m["recall_files"].Add(s.files.recall);
  m["overpred_files"].Add(s.files.overpred);
  m["recall_tasks"].Add(s.tasks.recall);
  m["overpred_tasks"].Add(s.tasks.overpred);
  m["recall_steps"].Add(s.steps.recall);
  m["overpred_steps"].Add(s.steps.overpred);
  m["score_goal"].Add(s.goal);
  m["recall_concept"].Add(s.concept_recall);
  m["accuracy_concept"].Add(s.concept_accuracy);
  m["patch_apply_rate"].Add(AsRate(s.applied));
  m["resolved_rate"].Add(AsRate(s.resolved));
}

std::vector<GroupScore> Groups(const std::vector<InstanceScore>& scores) {
  std::vector<GroupScore> g(4);
  g[0].name = "All", g[1].name = "Success", g[2].name = "Failure";
  g[3].name = "Failure excluding apply-fail";
  for (auto& grp : g) {
    for (const auto& n : MetricNames()) grp.metrics[n];
  }
  for (const auto& s : scores) {
    AddTo(&g[0], s);
    if (s.resolved == true) AddTo(&g[1], s);
    if (s.resolved == false) AddTo(&g[2], s);
    if (s.resolved == false && s.applied == true) AddTo(&g[3], s);
  }
  return g;
}

double Round6(double v) { return std::round(v * 1e6) / 1e6; }

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", Round6(v));
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

void OptNumber(util::JsonWriter& w, const std::optional<double>& v) {
  if (v) {
    w.Raw(Number(*v));
  } else {
    w.Null();
  }
}

void OptBool(util::JsonWriter& w, const std::optional<bool>& v) {
  if (v) {
    w.Bool(*v);
  } else {
    w.Null();
  }
}

void WriteLevel(util::JsonWriter& w, const LevelScore& l) {
  w.BeginObject();
  w.Key("matched"), w.Int(static_cast<int64_t>(l.matched));
  w.Key("overpred"), OptNumber(w, l.overpred);
  w.Key("predicted"), w.Int(static_cast<int64_t>(l.predicted));
  w.Key("recall"), OptNumber(w, l.recall);
  w.Key("truth"), w.Int(static_cast<int64_t>(l.truth));
  w.EndObject();
}

void WriteInstance(util::JsonWriter& w, const InstanceScore& s) {
  w.BeginObject();
  w.Key("applied"), OptBool(w, s.applied);
  if (!s.error.empty()) w.Key("error"), w.String(s.error);
  w.Key("files"), WriteLevel(w, s.files);
  w.Key("in_agent_file"), w.Bool(s.in_agent_file);
  w.Key("instance_id"), w.String(s.instance_id);
  w.Key("judgements"), w.BeginObject();
  w.Key("accuracy_concept"), OptNumber(w, s.concept_accuracy);
  w.Key("recall_concept"), OptNumber(w, s.concept_recall);
  w.Key("score_goal"), OptNumber(w, s.goal);
  w.EndObject();
  w.Key("resolved"), OptBool(w, s.resolved);
  w.Key("steps"), WriteLevel(w, s.steps);
  w.Key("tasks"), WriteLevel(w, s.tasks);
  w.EndObject();
}

void WriteGroup(util::JsonWriter& w, const GroupScore& g) {
  w.BeginObject();
  w.Key("instances"), w.Int(static_cast<int64_t>(g.instances));
  w.Key("metrics"), w.BeginObject();
  for (const auto& [name, mean] : g.metrics) {
    w.Key(name), w.BeginObject();
    w.Key("n"), w.Int(static_cast<int64_t>(mean.n));
    w.Key("value"), OptNumber(w, mean.value());
    w.EndObject();
  }
  w.EndObject();
  w.Key("name"), w.String(g.name);
  w.EndObject();
}

const char* kHeaders[] = {"Rec@F", "OP@F",  "Rec@T", "OP@T",  "Rec@S",   "OP@S",
                          "Goal",  "Rec@C", "Acc@C", "Apply", "Resolved"};

std::string Cell(const GroupScore& g, const std::string& metric, bool csv) {
  auto v = g.metrics.at(metric).value();
  if (!v) return csv ? "" : "-";
  char buf[32];
  if (csv) return Number(*v);
  if (metric == "score_goal") {
    std::snprintf(buf, sizeof buf, "%.2f", *v);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f", *v * 100);
  }
  return buf;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string MetricNumber(double v) { return Number(v); }

std::string MetricCell(const GroupScore& g, const std::string& metric) {
  return Cell(g, metric, false);
}

const std::vector<std::string>& MetricHeaders() {
  static const std::vector<std::string> kList(std::begin(kHeaders), std::end(kHeaders));
  return kList;
}

const std::vector<std::string>& MetricNames() {
  static const std::vector<std::string> kNames = {
      "recall_files",     "overpred_files",   "recall_tasks", "overpred_tasks",
      "recall_steps",     "overpred_steps",   "score_goal",   "recall_concept",
      "accuracy_concept", "patch_apply_rate", "resolved_rate"};
  return kNames;
}

bool ChangesContent(const util::FilePatch& f) {
  if (f.binary || f.is_deleted()) return true;
  std::multiset<std::string> removed, added;
  size_t at = 0;
  bool in_hunk = false;
  while (at < f.text.size()) {
    size_t end = std::min(f.text.find('\n', at), f.text.size());
    std::string_view line(f.text.data() + at, end - at);
    at = end + 1;
    if (line.starts_with("@@")) in_hunk = true;
    if (!in_hunk || line.empty()) continue;
    if (line[0] == '-') removed.insert(std::string(line.substr(1)));
    if (line[0] == '+') added.insert(std::string(line.substr(1)));
  }
  return removed != added;
}

std::vector<std::string> PredictedFiles(const AgentInstance& agent) {
  std::set<std::string> files(agent.files.begin(), agent.files.end());
  bool applies = !agent.applied.has_value() || *agent.applied;
  if (auto parsed = util::ParsePatch(agent.patch); parsed.ok() && applies) {
    for (const auto& f : *parsed) {
      if (ChangesContent(f)) files.insert(f.path());
    }
  }
  return {files.begin(), files.end()};
}

InstanceScore ScoreInstance(const GroundTruth& gt, const AgentInstance* agent,
                            const Matcher& matcher) {
  InstanceScore s;
  s.instance_id = gt.instance_id;
  AgentInstance none;
  none.instance_id = gt.instance_id;
  none.applied = false, none.resolved = false;
  const AgentInstance& a = agent ? *agent : none;
  s.in_agent_file = agent != nullptr;
  s.applied = a.applied;
  s.resolved = a.resolved;
  s.files = ScoreFiles(gt, a);
  ScoreTasksAndSteps(gt, a, matcher, &s);
  s.goal = a.goal_score;
  s.concept_recall = a.concept_recall;
  s.concept_accuracy = a.concept_accuracy;
  return s;
}

AgentScore ScoreAgent(const std::vector<GroundTruth>& gts, const AgentRun& run,
                      const Matcher& matcher) {
  AgentScore out;
  out.agent = run.agent;
  std::unordered_map<std::string, const AgentInstance*> by_id;
  for (const auto& a : run.instances) by_id[a.instance_id] = &a;
  std::set<std::string> known;
  for (const auto& gt : gts) {
    known.insert(gt.instance_id);
    auto it = by_id.find(gt.instance_id);
    out.instances.push_back(ScoreInstance(gt, it == by_id.end() ? nullptr : it->second, matcher));
    if (!out.instances.back().error.empty()) {
      out.warnings.push_back(gt.instance_id + ": " + out.instances.back().error);
    }
  }
  for (const auto& a : run.instances) {
    if (!known.count(a.instance_id)) {
      out.warnings.push_back(a.instance_id + ": no ground truth (ignored)");
    }
  }
  out.groups = Groups(out.instances);
  return out;
}

std::string ScoresJson(const std::vector<AgentScore>& agents, bool per_instance,
                       const std::string& model) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("agents"), w.BeginArray();
  for (const auto& a : agents) {
    w.BeginObject();
    w.Key("agent"), w.String(a.agent);
    w.Key("groups"), w.BeginArray();
    for (const auto& g : a.groups) WriteGroup(w, g);
    w.EndArray();
    if (per_instance) {
      w.Key("instances"), w.BeginArray();
      for (const auto& s : a.instances) WriteInstance(w, s);
      w.EndArray();
    }
    w.Key("warnings"), w.StringArray(a.warnings);
    w.EndObject();
  }
  w.EndArray();
  if (!model.empty()) w.Key("model"), w.Raw(model);
  w.Key("schema"), w.String("fbkit.race-scores/1");
  w.EndObject();
  return out + "\n";
}

std::string ScoresTable(const std::vector<AgentScore>& agents) {
  size_t aw = 5;
  for (const auto& a : agents) aw = std::max(aw, a.agent.size());
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-*s  %-28s %5s", static_cast<int>(aw), "agent", "group", "n");
  std::string out = buf;
  for (const char* h : kHeaders) std::snprintf(buf, sizeof buf, " %8s", h), out += buf;
  out += "\n";
  for (const auto& a : agents) {
    for (const auto& g : a.groups) {
      std::snprintf(buf, sizeof buf, "%-*s  %-28s %5zu", static_cast<int>(aw), a.agent.c_str(),
                    g.name.c_str(), g.instances);
      out += buf;
      for (const auto& m : MetricNames()) {
        std::snprintf(buf, sizeof buf, " %8s", Cell(g, m, false).c_str());
        out += buf;
      }
      out += "\n";
    }
  }
  return out;
}

std::string ScoresCsv(const std::vector<AgentScore>& agents) {
  std::string out = "agent,group,instances";
  for (const auto& m : MetricNames()) out += "," + m;
  out += "\n";
  for (const auto& a : agents) {
    for (const auto& g : a.groups) {
      out += CsvField(a.agent) + "," + CsvField(g.name) + "," + std::to_string(g.instances);
      for (const auto& m : MetricNames()) out += "," + Cell(g, m, true);
      out += "\n";
    }
  }
  return out;
}

}  // namespace fbkit::groundtruth

#include "groundtruth/lite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "util/json_writer.h"
#include "util/random.h"

namespace fbkit::groundtruth {
namespace {

// flags[i][c] = {resolved, applied} of instance i under configuration c.
struct Table {
  std::vector<std::string> ids;
  std::vector<std::vector<std::pair<bool, bool>>> flags;
  std::vector<double> full_resolved, full_applied;
};

Table Universe(const std::vector<AgentRun>& runs) {
  Table t;
  std::map<std::string, std::vector<std::pair<bool, bool>>> by_id;
  std::map<std::string, size_t> seen;
  for (size_t c = 0; c < runs.size(); ++c) {
    for (const auto& a : runs[c].instances) {
      if (!a.resolved || !a.applied) continue;
      auto& v = by_id[a.instance_id];
      v.resize(runs.size());
      v[c] = {*a.resolved, *a.applied};
      ++seen[a.instance_id];
    }
  }
  for (auto& [id, v] : by_id) {
    if (seen[id] != runs.size()) continue;
    t.ids.push_back(id);
    t.flags.push_back(v);
  }
  size_t n = t.ids.size();
  t.full_resolved.assign(runs.size(), 0), t.full_applied.assign(runs.size(), 0);
  for (const auto& f : t.flags) {
    for (size_t c = 0; c < runs.size(); ++c) {
      t.full_resolved[c] += f[c].first ? 1.0 / static_cast<double>(n) : 0;
      t.full_applied[c] += f[c].second ? 1.0 / static_cast<double>(n) : 0;
    }
  }
  return t;
}

struct Counts {
  std::vector<int> resolved, applied;
  void Add(const std::vector<std::pair<bool, bool>>& f, int sign) {
    for (size_t c = 0; c < f.size(); ++c)
      resolved[c] += sign * f[c].first, applied[c] += sign * f[c].second;
  }
};

std::pair<double, double> Objective(const Table& t, const Counts& k, size_t size) {
  double mx = 0, sum = 0;
  for (size_t c = 0; c < t.full_resolved.size(); ++c) {
    double dr = std::fabs(k.resolved[c] / static_cast<double>(size) - t.full_resolved[c]);
    double da = std::fabs(k.applied[c] / static_cast<double>(size) - t.full_applied[c]);
    mx = std::max({mx, dr, da});
    sum += dr + da;
  }
  return {mx, sum};
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", std::round(v * 1e6) / 1e6);
  return buf;
}

}  // namespace

util::Expected<LiteResult> ChooseLite(const std::vector<AgentRun>& runs, size_t size, uint64_t seed,
                                      int iterations) {
  if (runs.empty()) return util::Error{"no results given"};
  Table t = Universe(runs);
  if (size == 0 || size > t.ids.size()) {
    return util::Error{"cannot choose " + std::to_string(size) + " of " +
                       std::to_string(t.ids.size()) +
                       " instances (those every result has, with applied and resolved known)"};
  }
  util::Rng rng(seed);
  std::vector<size_t> order(t.ids.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = 0; i < size; ++i) std::swap(order[i], order[i + rng.Below(order.size() - i)]);
  Counts k{std::vector<int>(runs.size()), std::vector<int>(runs.size())};
  for (size_t i = 0; i < size; ++i) k.Add(t.flags[order[i]], 1);
  auto best = Objective(t, k, size);
  LiteResult r;
  r.start_max_deviation = best.first;
  size_t rest = order.size() - size;
  for (int it = 0; it < iterations && rest > 0 && best.second > 0; ++it, ++r.iterations) {
    size_t i = rng.Below(size), j = size + rng.Below(rest);
    k.Add(t.flags[order[i]], -1), k.Add(t.flags[order[j]], 1);
    auto now = Objective(t, k, size);
    if (now <= best) {
      best = now;
      std::swap(order[i], order[j]);
    } else {
      k.Add(t.flags[order[j]], -1), k.Add(t.flags[order[i]], 1);
    }
  }
  for (size_t i = 0; i < size; ++i) r.instances.push_back(t.ids[order[i]]);
  std::sort(r.instances.begin(), r.instances.end());
  r.max_deviation = best.first, r.sum_deviation = best.second;
  for (size_t c = 0; c < runs.size(); ++c) {
    r.rates.push_back({runs[c].agent, t.full_resolved[c], t.full_applied[c],
                       k.resolved[c] / static_cast<double>(size),
                       k.applied[c] / static_cast<double>(size)});
  }
  return r;
}

std::string LiteJson(const LiteResult& r, uint64_t seed) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("configurations"), w.BeginArray();
  for (const auto& c : r.rates) {
    w.BeginObject();
    w.Key("agent"), w.String(c.agent);
    w.Key("full"), w.BeginObject();
    w.Key("patch_apply_rate"), w.Raw(Num(c.full_applied));
    w.Key("resolved_rate"), w.Raw(Num(c.full_resolved));
    w.EndObject();
    w.Key("lite"), w.BeginObject();
    w.Key("patch_apply_rate"), w.Raw(Num(c.lite_applied));
    w.Key("resolved_rate"), w.Raw(Num(c.lite_resolved));
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.Key("deviation"), w.BeginObject();
  w.Key("max"), w.Raw(Num(r.max_deviation));
  w.Key("start_max"), w.Raw(Num(r.start_max_deviation));
  w.Key("sum"), w.Raw(Num(r.sum_deviation));
  w.EndObject();
  w.Key("instances"), w.StringArray(r.instances);
  w.Key("iterations"), w.Int(r.iterations);
  w.Key("schema"), w.String("fbkit.race-lite/1");
  w.Key("seed"), w.Int(static_cast<int64_t>(seed));
  w.Key("size"), w.Int(static_cast<int64_t>(r.instances.size()));
  w.EndObject();
  return out + "\n";
}

}  // namespace fbkit::groundtruth

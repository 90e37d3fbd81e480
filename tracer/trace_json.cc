#include "tracer/trace_json.h"

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "util/json_writer.h"

namespace fbkit::tracer {
namespace {

using util::JsonWriter;

void WriteCode(JsonWriter& w, const CodeId& c) {
  w.BeginArray();
  w.String(c.path), w.Int(c.line), w.String(c.name);
  w.EndArray();
}

// [[caller|null, callee, count], ...] with caller/callee as [path, firstlineno, name].
void WriteEdges(JsonWriter& w, const EdgeCounts& edges) {
  w.BeginArray();
  for (const auto& [key, count] : edges) {
    w.BeginArray();
    if (key.first) {
      WriteCode(w, *key.first);
    } else {
      w.Null();
    }
    WriteCode(w, key.second);
    w.Int(count);
    w.EndArray();
  }
  w.EndArray();
}

// [[code, {parameter: [type names]}, [result type names]], ...], sorted.
void WriteTypes(JsonWriter& w, const TypeMap& types) {
  w.BeginArray();
  for (const auto& [code, t] : types) {
    w.BeginArray();
    WriteCode(w, code);
    w.BeginObject();
    for (const auto& [name, names] : t.params) w.Key(name), w.StringArray(names);
    w.EndObject();
    w.StringArray(t.returns);
    w.EndArray();
  }
  w.EndArray();
}

TypeMap ReadTypes(const nlohmann::json& types);

void WriteTest(JsonWriter& w, const runner::TestResult& t, bool with_details) {
  w.BeginObject();
  if (with_details) {
    w.Key("duration"), w.Raw(std::to_string(std::round(t.duration * 1e6) / 1e6));
    w.Key("message");
    if (t.message) {
      w.String(*t.message);
    } else {
      w.Null();
    }
  }
  w.Key("nodeid"), w.String(t.nodeid);
  w.Key("outcome"), w.String(runner::OutcomeName(t.outcome));
  w.Key("phases");
  w.BeginObject();
  for (const auto& [when, category] : t.phases) w.Key(when), w.String(category);
  w.EndObject();
  w.EndObject();
}

void WriteFile(JsonWriter& w, const FileTrace& f, bool with_details) {
  std::map<std::string, int64_t> counts;
  for (const auto& [id, t] : f.tests) counts[runner::OutcomeName(t.outcome)]++;
  w.BeginObject();
  w.Key("counts");
  w.BeginObject();
  for (const auto& [k, v] : counts) w.Key(k), w.Int(v);
  w.EndObject();
  EdgeCounts all = f.edges;  // its tests' edges and its collection's
  for (const auto& [key, n] : f.collect_edges) all[key] += n;
  w.Key("edges"), WriteEdges(w, all);
  w.Key("error");
  if (f.error) {
    w.String(*f.error);
  } else {
    w.Null();
  }
  w.Key("file"), w.String(f.file);
  w.Key("fixture_contexts");
  w.StringArray(f.fixture_contexts);
  w.Key("nodeids");
  w.StringArray(f.nodeids);
  w.Key("status"), w.String(runner::FileStatusName(f.status));
  w.Key("tests");
  w.BeginArray();
  for (const auto& [id, t] : f.tests) WriteTest(w, t, with_details);
  w.EndArray();
  if (!f.types.empty()) w.Key("types"), WriteTypes(w, f.types);
  w.EndObject();
}

CodeId ReadCode(const nlohmann::json& c) {
  return CodeId{c.at(0).get<std::string>(), c.at(1).get<int>(), c.at(2).get<std::string>()};
}

EdgeCounts ReadEdges(const nlohmann::json& edges) {
  EdgeCounts out;
  for (const auto& e : edges) {
    std::optional<CodeId> caller;
    if (!e.at(0).is_null()) caller = ReadCode(e.at(0));
    out[{caller, ReadCode(e.at(1))}] += e.at(2).get<int64_t>();
  }
  return out;
}

TypeMap ReadTypes(const nlohmann::json& types) {
  TypeMap out;
  for (const auto& t : types) {
    ObservedTypes& o = out[ReadCode(t.at(0))];
    for (const auto& [name, names] : t.at(1).items()) {
      for (const auto& n : names) o.params[name].insert(n.get<std::string>());
    }
    for (const auto& n : t.at(2)) o.returns.insert(n.get<std::string>());
  }
  return out;
}

runner::FileStatus StatusFromName(const std::string& s) {
  using runner::FileStatus;
  for (FileStatus st : {FileStatus::kOk, FileStatus::kCollectError, FileStatus::kCrashed,
                        FileStatus::kTimeout, FileStatus::kNotRun}) {
    if (s == runner::FileStatusName(st)) return st;
  }
  return runner::FileStatus::kOk;
}

FileTrace ReadFile(const nlohmann::json& f) {
  FileTrace t;
  t.file = f.at("file").get<std::string>();
  t.status = StatusFromName(f.at("status").get<std::string>());
  if (f.at("error").is_string()) t.error = f.at("error").get<std::string>();
  t.nodeids = f.at("nodeids").get<std::vector<std::string>>();
  for (const auto& c : f.at("fixture_contexts")) t.fixture_contexts.insert(c.get<std::string>());
  t.edges = ReadEdges(f.at("edges"));
  if (f.contains("types")) t.types = ReadTypes(f.at("types"));
  for (const auto& test : f.at("tests")) {
    runner::TestResult r;
    r.nodeid = test.at("nodeid").get<std::string>();
    std::string outcome = test.at("outcome").get<std::string>();
    r.outcome = runner::ParseOutcome(outcome);
    if (std::string(runner::OutcomeName(r.outcome)) != outcome) {
      throw std::invalid_argument("test " + r.nodeid + ": unknown outcome '" + outcome + "'");
    }
    r.phases = test.at("phases").get<std::map<std::string, std::string>>();
    if (test.contains("duration")) r.duration = test.at("duration").get<double>();
    if (test.contains("message") && test.at("message").is_string()) {
      r.message = test.at("message").get<std::string>();
    }
    t.tests[r.nodeid] = r;
  }
  return t;
}

}  // namespace

util::Expected<TraceSet> ParseTraceDocument(std::string_view text) {
  try {
    auto doc = nlohmann::json::parse(text);
    if (doc.value("schema", "") != kTraceSchema) {
      return util::Error{std::string("not an ") + kTraceSchema + " document"};
    }
    TraceSet t;
    t.root = doc.at("root").get<std::string>();
    std::string mode = doc.at("mode").get<std::string>();
    auto parsed_mode = TraceModeFromName(mode);
    if (!parsed_mode) throw std::invalid_argument("unknown mode '" + mode + "'");
    t.mode = *parsed_mode;
    t.python = doc.at("python").get<std::string>();
    t.accelerated = doc.at("accelerated").get<bool>();
    if (doc.at("exitstatus").is_number()) t.exitstatus = doc.at("exitstatus").get<int>();
    for (const auto& p : doc.at("preloaded")) t.preloaded.insert(p.get<std::string>());
    for (const auto& [name, edges] : doc.at("contexts").items()) t.contexts[name] = ReadEdges(edges);
    t.counts = doc.at("counts").get<std::map<std::string, int64_t>>();
    for (const auto& f : doc.at("files")) {
      FileTrace ft = ReadFile(f);
      t.files[ft.file] = std::move(ft);
    }
    if (doc.contains("accel_error") && doc.at("accel_error").is_string()) {
      t.accel_error = doc.at("accel_error").get<std::string>();
    }
    if (doc.contains("warnings")) {
      for (const auto& w : doc.at("warnings")) {
        t.warnings.push_back({w.at("nodeid").get<std::string>(), w.at("message").get<std::string>()});
      }
    }
    if (doc.contains("shard")) {
      const auto& s = doc.at("shard");
      t.shard = ShardInfo{s.at("index").get<int>(), s.at("count").get<int>(),
                          s.at("all").get<std::vector<std::string>>(),
                          s.at("files").get<std::vector<std::string>>()};
    }
    return t;
  } catch (const nlohmann::json::exception& e) {
    return util::Error{std::string("invalid trace JSON: ") + e.what()};
  } catch (const std::invalid_argument& e) {
    return util::Error{std::string("invalid trace: ") + e.what()};
  }
}

std::string TraceDocument(const TraceSet& trace, bool with_details) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("accel_error");
  if (trace.accel_error && !trace.accelerated) {
    w.String(*trace.accel_error);
  } else {
    w.Null();
  }
  w.Key("accelerated"), w.Bool(trace.accelerated);
  w.Key("contexts");
  w.BeginObject();
  for (const auto& [name, edges] : trace.contexts) {
    if (!edges.empty()) w.Key(name), WriteEdges(w, edges);
  }
  w.EndObject();
  w.Key("counts");
  w.BeginObject();
  for (const auto& [k, v] : trace.counts) w.Key(k), w.Int(v);
  w.EndObject();
  w.Key("exitstatus");
  if (trace.exitstatus) {
    w.Int(*trace.exitstatus);
  } else {
    w.Null();
  }
  w.Key("files");
  w.BeginArray();
  for (const auto& [name, f] : trace.files) {
    out += '\n';
    WriteFile(w, f, with_details);
  }
  w.EndArray();
  w.Key("mode"), w.String(TraceModeName(trace.mode));
  w.Key("preloaded");
  w.StringArray(trace.preloaded);
  w.Key("python"), w.String(trace.python);
  w.Key("root"), w.String(trace.root);
  w.Key("schema"), w.String(kTraceSchema);
  if (trace.shard) {
    w.Key("shard");
    w.BeginObject();
    w.Key("all"), w.StringArray(trace.shard->all);
    w.Key("count"), w.Int(trace.shard->count);
    w.Key("files"), w.StringArray(trace.shard->files);
    w.Key("index"), w.Int(trace.shard->index);
    w.EndObject();
  }
  w.Key("warnings");
  w.BeginArray();
  for (const auto& warning : trace.warnings) {
    w.BeginObject();
    w.Key("message"), w.String(warning.message);
    w.Key("nodeid"), w.String(warning.nodeid);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  out += '\n';
  return out;
}

util::Expected<TraceSet> LoadTraces(util::Env& env, const std::vector<std::string>& paths) {
  std::vector<TraceSet> traces;
  for (const auto& path : paths) {
    auto text = env.ReadFile(path);
    if (!text.ok()) return text.failure();
    auto parsed = ParseTraceDocument(*text);
    if (!parsed.ok()) return util::Error{path + ": " + parsed.error()};
    traces.push_back(std::move(*parsed));
  }
  if (traces.size() == 1 && (!traces[0].shard || traces[0].shard->count == 1)) {
    traces[0].shard.reset();
    return std::move(traces[0]);
  }
  auto merged = MergeShards(std::move(traces));
  if (!merged.ok()) return util::Error{"merging " + std::to_string(paths.size()) + " traces: " + merged.error()};
  return merged;
}

}  // namespace fbkit::tracer

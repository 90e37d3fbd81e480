#include "cli/graph_commands.h"

#include <cstdio>
#include <memory>

#include "cli/cli_common.h"
#include "cli/spec_options.h"
#include "graph/dep_graph.h"
#include "graph/graph_io.h"
#include "parser/entities_json.h"
#include "parser/entity_table.h"
#include "tracer/trace_json.h"
#include "util/json_writer.h"
#include "util/parallel.h"

namespace fbkit::cli {
namespace {

enum class GraphFormat { kJson, kBinary, kGraphMl, kDot };

struct BuildArgs {
  std::string root;
  std::vector<std::string> traces;
  std::string output = "-";
  GraphFormat format = GraphFormat::kJson;
  std::string focus;
  int depth = 2;
  std::vector<std::string> excludes;
  SpecArgs spec;  // its exclude is added to --exclude
  int jobs = util::DefaultJobs();
  bool no_cache = false;
  bool quiet = false;
};

util::Expected<std::vector<parser::FileTable>> Tables(util::Env& env, const BuildArgs& a,
                                                       const std::string& root) {
  parser::EntitiesOptions options;
  options.root = root;
  auto spec = ResolveSpec(a.spec, root);
  if (!spec.ok()) return spec.failure();
  options.excludes = a.excludes;
  options.excludes.insert(options.excludes.end(), spec->exclude.begin(), spec->exclude.end());
  options.jobs = a.jobs;
  options.references = true;
  if (!a.no_cache) options.cache_dir = UserCacheDir("");
  auto result = parser::BuildEntities(env, options, nullptr);
  if (!result.ok()) return result.failure();
  return parser::FileTables(*result);
}

int RunBuild(const BuildArgs& a) {
  util::Env& env = util::RealEnv();
  auto root = env.RealPath(a.root);
  if (!root.ok()) return Fail("fb-graph build", root.error());
  std::optional<tracer::TraceSet> trace;
  if (!a.traces.empty()) {
    auto loaded = tracer::LoadTraces(env, a.traces);
    if (!loaded.ok()) return Fail("fb-graph build", loaded.error());
    trace = std::move(*loaded);
  }
  auto tables = Tables(env, a, *root);
  if (!tables.ok()) return Fail("fb-graph build", tables.error());
  graph::JoinStats stats;
  graph::DepGraph g = graph::DepGraph::Build(*tables, trace ? &*trace : nullptr, &stats);
  std::optional<uint32_t> focus;
  if (!a.focus.empty()) {
    focus = g.Find(a.focus);
    if (!focus) return Fail("fb-graph build", "--focus: no entity " + a.focus);
  }
  std::string out;
  switch (a.format) {
    case GraphFormat::kGraphMl: out = graph::GraphMl(g); break;
    case GraphFormat::kDot: out = graph::GraphDot(g, focus, a.depth); break;
    case GraphFormat::kBinary: out = graph::GraphBinary(g); break;
    case GraphFormat::kJson: out = graph::GraphJson(g, *root, stats); break;
  }
  util::Status s = WriteOutput(env, a.output, out);
  if (!s.ok()) return Fail("fb-graph build", s.error());
  if (!a.quiet) {
    std::fprintf(stderr,
                 "fb-graph build: %zu nodes, %zu edges, %zu test files; trace identities %zu, "
                 "unmapped %zu\n",
                 g.nodes().size(), g.edges().size(), g.test_files().size(), stats.identities,
                 stats.unmapped.size());
  }
  return kExitOk;
}

struct QueryArgs {
  std::string graph;
  std::string id;
  std::string target;
  int depth = -1;
  bool json = false;
};

util::Expected<graph::DepGraph> Load(const std::string& path) {
  auto text = util::RealEnv().ReadFile(path);
  if (!text.ok()) return text.failure();
  auto g = graph::ReadGraph(*text);
  if (!g.ok()) return util::Error{path + ": " + g.error()};
  return g;
}

util::Expected<uint32_t> Entity(const graph::DepGraph& g, const std::string& id) {
  if (auto v = g.Find(id)) return *v;
  return util::Error{"no entity '" + id + "' in the graph (ids look like path::qualname)"};
}

void PrintHits(const graph::DepGraph& g, const std::vector<graph::DepGraph::Hit>& hits, bool json) {
  std::string out;
  if (json) {
    util::JsonWriter w(&out);
    w.BeginArray();
    for (const auto& h : hits) {
      w.BeginObject();
      w.Key("depth"), w.Int(h.depth);
      w.Key("id"), w.String(g.nodes()[h.node].id);
      w.EndObject();
    }
    w.EndArray();
    out += '\n';
  } else {
    for (const auto& h : hits) out += std::to_string(h.depth) + "\t" + g.nodes()[h.node].id + "\n";
  }
  std::fputs(out.c_str(), stdout);
}

// The test files that reach entity v, one per line or as a JSON array.
std::string TestFilesText(const graph::DepGraph& g, uint32_t v, bool json) {
  std::string out;
  util::JsonWriter w(&out);
  if (json) w.BeginArray();
  for (uint32_t f : g.nodes()[v].test_files) {
    if (json) {
      w.String(g.test_files()[f]);
    } else {
      out += g.test_files()[f] + "\n";
    }
  }
  if (json) w.EndArray(), out += '\n';
  return out;
}

// A dependency path's edges, "from --kind--> to" per line or as JSON objects.
std::string PathText(const graph::DepGraph& g, const std::vector<uint32_t>& path, bool json) {
  std::string out;
  util::JsonWriter w(&out);
  if (json) w.BeginArray();
  for (uint32_t e : path) {
    const auto& edge = g.edges()[e];
    const std::string& from = g.nodes()[edge.from].id;
    const std::string& to = g.nodes()[edge.to].id;
    if (json) {
      w.BeginObject();
      w.Key("from"), w.String(from);
      w.Key("kind"), w.String(graph::EdgeKindName(edge.kind));
      w.Key("to"), w.String(to);
      w.EndObject();
    } else {
      out += from + " --" + graph::EdgeKindName(edge.kind) + "--> " + to + "\n";
    }
  }
  if (json) w.EndArray(), out += '\n';
  return out;
}

int RunQuery(const std::string& name, const QueryArgs& a) {
  std::string who = "fb-graph " + name;
  auto g = Load(a.graph);
  if (!g.ok()) return Fail(who, g.error());
  auto v = Entity(*g, a.id);
  if (!v.ok()) return Fail(who, v.error());
  if (name == "deps" || name == "rdeps") {
    PrintHits(*g, name == "deps" ? g->Deps(*v, a.depth) : g->RDeps(*v, a.depth), a.json);
    return kExitOk;
  }
  if (name == "tests") {
    std::fputs(TestFilesText(*g, *v, a.json).c_str(), stdout);
    return kExitOk;
  }
  auto to = Entity(*g, a.target);
  if (!to.ok()) return Fail(who, to.error());
  std::vector<uint32_t> path = g->Path(*v, *to);
  if (path.empty()) return Fail(who, a.id + " does not depend on " + a.target);
  std::fputs(PathText(*g, path, a.json).c_str(), stdout);
  return kExitOk;
}

void AddQuery(CLI::App& app, int* exit_code, const std::string& name, const std::string& help) {
  auto a = std::make_shared<QueryArgs>();
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->add_option("GRAPH", a->graph, "A graph written by fb-graph build (JSON or binary)")
      ->required();
  cmd->add_option("ID", a->id, "Entity id (path::qualname)")->required();
  if (name == "path") cmd->add_option("TARGET", a->target, "The entity it may depend on")->required();
  if (name == "deps" || name == "rdeps") {
    cmd->add_option("--depth", a->depth, "At most this many edges away (default: all)");
  }
  cmd->add_flag("--json", a->json, "JSON for programs instead of text for people");
  cmd->callback([a, exit_code, name] { *exit_code = RunQuery(name, *a); });
}

struct MergeArgs {
  std::vector<std::string> traces;
  std::string output = "-";
  bool details = false;
};

int RunMerge(const MergeArgs& a) {
  util::Env& env = util::RealEnv();
  auto merged = tracer::LoadTraces(env, a.traces);
  if (!merged.ok()) return Fail("fb-graph merge", merged.error());
  util::Status written = WriteOutput(env, a.output, tracer::TraceDocument(*merged, a.details));
  if (!written.ok()) return Fail("fb-graph merge", written.error());
  return kExitOk;
}

void AddMergeCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Merge the N shard traces of `fb-graph trace --isolate --shard K/N` into one");
  cmd->footer(
      "The result is the trace the unsharded `fb-graph trace --isolate` writes (byte for byte "
      "when the test runs themselves are repeatable): every shard's files and their edges, "
      "the shared contexts, counts and warnings in the run's file order. Every shard 1..N "
      "of one run must be given once, in any order.\n\n"
      "Exit status: 0 ok; 1 failure (a missing, repeated or foreign shard); 2 bad usage.");
  cmd->add_option("TRACES", a->traces, "The N shard traces")->required();
  cmd->add_option("-o,--output", a->output, "Output file ('-' for stdout)");
  cmd->add_flag("--details", a->details,
                "Keep per-test durations and failure messages (shards traced with --details)");
  cmd->callback([a, exit_code] { *exit_code = RunMerge(*a); });
}

}  // namespace

void AddGraphCommands(CLI::App& app, int* exit_code) {
  AddMergeCommand(app, exit_code);
  auto a = std::make_shared<BuildArgs>();
  CLI::App* cmd = app.add_subcommand(
      "build", "Build the object dependency graph of ROOT (and a trace) as fbkit.graph/1 JSON");
  cmd->footer(
      "Vertices are the entities of ROOT's entity table; edges are traced calls (count and "
      "the test files whose runs made them), containment, static imports (relative imports "
      "and __init__ re-exports resolved), references (decorators) and inheritance. Each "
      "node lists the test files that reach it: traced in its context, through the session "
      "fixtures it uses, and import-time code of the modules in its static import closure. "
      "Trace identities that match no entity are listed under join.unmapped.\n\n"
      "Exit status: 0 ok; 1 failure; 2 bad usage.");
  cmd->add_option("ROOT", a->root, "Repository root")->required();
  cmd->add_option("--trace", a->traces,
                  "fbkit.trace/1 JSON from fb-graph trace (repeat it for the N shards of a "
                  "sharded trace: they are merged first)");
  cmd->add_option("-o,--output", a->output, "Output file ('-' for stdout)");
  AddChoice(cmd, "--format", &a->format,
            {{"json", GraphFormat::kJson},
             {"binary", GraphFormat::kBinary},
             {"graphml", GraphFormat::kGraphMl},
             {"dot", GraphFormat::kDot}},
            "json (default), binary (fast to load for queries), graphml (Gephi) or dot "
            "(Graphviz)");
  cmd->add_option("--focus", a->focus, "DOT: only the neighbourhood of this entity id");
  cmd->add_option("--depth", a->depth, "DOT with --focus: edges away from it (default 2)");
  cmd->add_option("--exclude", a->excludes,
                  "Skip paths matching this glob (repeatable; added to the spec's exclude)");
  AddSpecOptions(cmd, &a->spec, 0);
  cmd->add_option("-j,--jobs", a->jobs, "Parser threads")->check(CLI::Range(1, 1024));
  cmd->add_flag("--no-cache", a->no_cache, "Do not use the entities cache");
  cmd->add_flag("-q,--quiet", a->quiet, "No summary on stderr");
  cmd->callback([a, exit_code] { *exit_code = RunBuild(*a); });
  AddQuery(app, exit_code, "deps", "What an entity needs, transitively (depth first column)");
  AddQuery(app, exit_code, "rdeps", "What needs an entity, transitively");
  AddQuery(app, exit_code, "tests", "The test files that reach an entity");
  AddQuery(app, exit_code, "path", "Why ID depends on TARGET: a shortest chain of edges");
}

}  // namespace fbkit::cli

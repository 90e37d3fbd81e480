// DepGraph::Build: joins the trace to the entity table by code identity, resolves the
// static links (imports, decorators, base classes) and attributes every edge to the test
// files that reach it.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "graph/dep_graph.h"
#include "parser/modules.h"
#include "util/strings.h"

namespace fbkit::graph {
namespace {

using parser::EntityKind;
using parser::FileTable;
using tracer::CodeId;

bool IsAnonymous(const std::string& name) {
  return name == "<lambda>" || name == "<listcomp>" || name == "<genexpr>" ||
         name == "<dictcomp>" || name == "<setcomp>";
}

class Builder {
 public:
  Builder(const std::vector<FileTable>& files, const tracer::TraceSet* trace)
      : files_(files), trace_(trace) {}

  DepGraph Run(JoinStats* stats) {
    AddNodes();
    AddContainment();
    AddStaticLinks();
    IndexImports();
    if (trace_) AddTrace(stats);
    return Finish();
  }

 private:
  // -- vertices ----------------------------------------------------------------------
  void AddNodes() {
    for (size_t f = 0; f < files_.size(); ++f) {
      const FileTable& t = files_[f];
      module_of_file_[t.path] = static_cast<uint32_t>(nodes_.size());
      module_by_name_.emplace(t.module, static_cast<uint32_t>(nodes_.size()));
      file_index_[t.path] = f;
      for (const auto& e : t.entities) {
        auto v = static_cast<uint32_t>(nodes_.size());
        by_id_[e.id] = v;
        file_of_node_.push_back(f);
        nodes_.push_back(Node{e.id, t.path, e.qualname, e.kind, e.start_line, e.end_line, {}});
      }
    }
  }

  void AddContainment() {
    for (const auto& t : files_) {
      for (const auto& e : t.entities) {
        if (!e.parent.empty()) AddStatic(by_id_.at(e.parent), by_id_.at(e.id), EdgeKind::kContains);
      }
    }
  }

  void AddStatic(uint32_t from, uint32_t to, EdgeKind kind) {
    if (from != to) static_.insert({from, to, kind});
  }

  // -- name resolution ---------------------------------------------------------------
  std::optional<uint32_t> Module(const std::string& name) const {
    auto it = module_by_name_.find(name);
    if (it == module_by_name_.end()) return std::nullopt;
    return it->second;
  }

  // The entity a module-level name of `module` denotes: a def or class defined there, a
  // submodule, or what it imports under that name (followed a few steps).
  std::optional<uint32_t> Lookup(uint32_t module, const std::string& name, int depth = 0) const {
    if (depth > 8) return std::nullopt;
    const FileTable& t = files_[file_of_node_[module]];
    for (const auto& e : t.entities) {
      if (e.parent == t.entities[0].id && e.name == name) return by_id_.at(e.id);
    }
    for (const auto& imp : t.imports) {
      if (imp.scope != t.entities[0].id) continue;
      for (const auto& n : imp.names) {
        std::string bound = n.alias ? *n.alias : util::Split(n.name, '.')[0];
        if (bound != name || n.name == "*") continue;
        if (!imp.is_from) return Module(n.alias ? n.name : util::Split(n.name, '.')[0]);
        std::string base = parser::AbsoluteModule(t, imp);
        if (auto m = Module(base)) {
          if (auto hit = Lookup(*m, n.name, depth + 1)) return hit;
        }
        return Module(base + "." + n.name);
      }
    }
    if (auto sub = Module(t.module + "." + name)) return sub;
    for (const auto& a : t.assignments) {  // a constant: the module that defines it
      if (a.name == name) return module;
    }
    return std::nullopt;
  }

  // A dotted name used in `module` ("Base", "abc.ABC", "pkg.mod.f").
  std::optional<uint32_t> Resolve(uint32_t module, const std::string& dotted) const {
    std::vector<std::string> parts = util::Split(dotted, '.');
    std::optional<uint32_t> cur = Lookup(module, parts[0]);
    for (size_t i = 1; cur && i < parts.size(); ++i) {
      if (nodes_[*cur].kind != EntityKind::kModule) return std::nullopt;
      cur = Lookup(*cur, parts[i]);
    }
    return cur;
  }

  void AddStaticLinks() {
    for (size_t f = 0; f < files_.size(); ++f) {
      const FileTable& t = files_[f];
      uint32_t module = module_of_file_.at(t.path);
      for (const auto& imp : t.imports) AddImport(t, module, imp);
      for (const auto& e : t.entities) {
        uint32_t v = by_id_.at(e.id);
        for (const auto& d : e.decorators) {
          std::string name = d.substr(0, d.find('('));
          name.erase(std::remove_if(name.begin(), name.end(), ::isspace), name.end());
          if (auto target = Resolve(module, name)) AddStatic(v, *target, EdgeKind::kReference);
        }
        if (e.kind == EntityKind::kClass) AddBases(module, v, e.signature);
        for (const auto& name : e.references) AddReference(module, v, e, name);
      }
    }
  }

  // A name used in an entity's code that denotes another entity of the repository (a
  // function, class or module; a constant imported from another module gives that module).
  void AddReference(uint32_t module, uint32_t v, const parser::Entity& e, const std::string& name) {
    std::optional<uint32_t> target = Resolve(module, name);
    if (!target) return;
    for (const std::string* p = &e.parent; !p->empty();) {  // not its own ancestors
      uint32_t a = by_id_.at(*p);
      if (a == *target) return;
      p = &files_[file_of_node_[a]].entities[EntityIndex(a)].parent;
    }
    AddStatic(v, *target, EdgeKind::kReference);
  }

  // The position of node `v` in its file's entity list.
  size_t EntityIndex(uint32_t v) const { return v - module_of_file_.at(nodes_[v].path); }

  void AddImport(const FileTable& t, uint32_t module, const parser::Import& imp) {
    auto scope = by_id_.find(imp.scope);
    uint32_t from = scope == by_id_.end() ? module : scope->second;
    if (!imp.is_from) {
      std::string prefix;  // `import a.b.c` imports a, a.b and a.b.c
      for (const auto& part : util::Split(imp.module, '.')) {
        prefix += (prefix.empty() ? "" : ".") + part;
        if (auto m = Module(prefix)) AddStatic(from, *m, EdgeKind::kImport);
      }
      return;
    }
    std::string base = parser::AbsoluteModule(t, imp);
    auto m = Module(base);
    for (const auto& n : imp.names) {
      if (n.name == "*") {
        if (m) AddStatic(from, *m, EdgeKind::kImport);
        continue;
      }
      std::optional<uint32_t> target = m ? Lookup(*m, n.name) : std::nullopt;
      if (!target) target = Module(base + "." + n.name);
      if (!target && m) target = m;  // a constant or other module-level name of m
      if (target) AddStatic(from, *target, EdgeKind::kImport);
    }
  }

  void AddBases(uint32_t module, uint32_t cls, const std::string& signature) {
    for (const auto& name : parser::PositionalBases(signature)) {
      if (auto base = Resolve(module, name)) AddStatic(cls, *base, EdgeKind::kInherits);
    }
  }

  // -- the trace -----------------------------------------------------------------------
  std::optional<uint32_t> Map(const CodeId& c) {
    auto cached = mapped_.find(c);
    if (cached != mapped_.end()) return cached->second;
    std::optional<uint32_t> v = MapUncached(c);
    mapped_[c] = v;
    return v;
  }

  std::optional<uint32_t> MapUncached(const CodeId& c) const {
    auto file = file_index_.find(c.path);
    if (file == file_index_.end()) return std::nullopt;
    if (c.name == "<module>") return module_of_file_.at(c.path);
    const FileTable& t = files_[file->second];
    std::optional<uint32_t> innermost;
    int best = -1;
    for (const auto& e : t.entities) {
      if (e.kind == EntityKind::kModule) continue;
      if (!IsAnonymous(c.name)) {
        if (e.start_line == c.line && e.name == c.name) return by_id_.at(e.id);
        continue;
      }
      if (e.start_line <= c.line && c.line <= e.end_line && e.start_line > best) {
        best = e.start_line;
        innermost = by_id_.at(e.id);
      }
    }
    if (IsAnonymous(c.name) && !innermost) return module_of_file_.at(c.path);
    return innermost;
  }

  void AddTrace(JoinStats* stats) {
    // Library modules pytest collected for their doctests are no test files: what their
    // doctests ran is kept as calls no test file owns.
    std::set<std::string> library;
    for (const auto& [name, f] : trace_->files) {
      if (tracer::DoctestsOnly(f)) {
        library.insert(name);
      } else {
        TestFile(name);
      }
    }
    // Import-time edges: each file whose static import closure holds the module that ran.
    std::vector<std::set<uint32_t>> closures(test_files_.size());
    for (size_t i = 0; i < test_files_.size(); ++i) closures[i] = Closure(test_files_[i]);
    for (const auto& [name, f] : trace_->files) {
      if (library.count(name)) {
        AddCallEdges(f.edges, {});
        continue;
      }
      AddCallEdges(f.edges, {TestFile(name)});
      for (const auto& ctx : f.fixture_contexts) {
        auto it = trace_->contexts.find(ctx);
        if (it != trace_->contexts.end()) AddCallEdges(it->second, {TestFile(name)});
      }
    }
    for (const auto& [ctx, edges] : trace_->contexts) {
      if (ctx == "<import>") {
        AddImportEdges(edges, closures);
      } else if (ctx.starts_with("<import>")) {
        if (library.count(ctx.substr(8))) {
          AddCallEdges(edges, {});
        } else {
          AddCallEdges(edges, {TestFile(ctx.substr(8))});
        }
      } else if (!ctx.starts_with("<fixture>")) {
        AddCallEdges(edges, {});
      }
    }
    if (stats) {
      for (const auto& [code, v] : mapped_) {
        ++stats->identities;
        if (v) {
          ++stats->mapped;
        } else {
          stats->unmapped.push_back(code.path + ":" + std::to_string(code.line) + ":" + code.name);
        }
      }
      std::sort(stats->unmapped.begin(), stats->unmapped.end());
    }
  }

  uint32_t TestFile(const std::string& name) {
    auto it = test_file_index_.find(name);
    if (it != test_file_index_.end()) return it->second;
    auto i = static_cast<uint32_t>(test_files_.size());
    test_files_.push_back(name);
    test_file_index_[name] = i;
    return i;
  }

  // Modules a test file imports, transitively (static import edges), with the conftest.py
  // files pytest loads for it.
  std::set<uint32_t> Closure(const std::string& test_file) const {
    std::vector<uint32_t> stack;
    auto add_file = [&](const std::string& path) {
      auto it = module_of_file_.find(path);
      if (it != module_of_file_.end()) stack.push_back(it->second);
    };
    add_file(test_file);
    std::string dir = test_file;
    for (size_t slash = dir.rfind('/');; slash = dir.rfind('/')) {
      dir = slash == std::string::npos ? "" : dir.substr(0, slash);
      add_file(dir.empty() ? "conftest.py" : dir + "/conftest.py");
      if (dir.empty()) break;
    }
    std::set<uint32_t> seen;
    while (!stack.empty()) {
      uint32_t m = stack.back();
      stack.pop_back();
      if (!seen.insert(m).second) continue;
      for (auto it = imports_from_module_.lower_bound({m, 0});
           it != imports_from_module_.end() && it->first == m; ++it) {
        stack.push_back(it->second);
      }
      // A package's __init__ runs before its submodules.
      std::string prefix;
      std::vector<std::string> parts = util::Split(files_[file_of_node_[m]].module, '.');
      for (size_t i = 0; i + 1 < parts.size(); ++i) {
        prefix += (i ? "." : "") + parts[i];
        if (auto parent = Module(prefix)) stack.push_back(*parent);
      }
    }
    return seen;
  }

  uint32_t ModuleOf(uint32_t v) const { return module_of_file_.at(nodes_[v].path); }

  void AddImportEdges(const tracer::EdgeCounts& edges,
                      const std::vector<std::set<uint32_t>>& closures) {
    for (const auto& [key, count] : edges) {
      auto callee = Map(key.second);
      std::optional<uint32_t> caller = key.first ? Map(*key.first) : std::nullopt;
      if (!callee) continue;
      uint32_t owner = ModuleOf(caller ? *caller : *callee);
      std::vector<uint32_t> files;
      for (uint32_t i = 0; i < closures.size(); ++i) {
        if (closures[i].count(owner)) files.push_back(i);
      }
      Record(caller, *callee, count, files);
    }
  }

  void AddCallEdges(const tracer::EdgeCounts& edges, const std::vector<uint32_t>& files) {
    for (const auto& [key, count] : edges) {
      auto callee = Map(key.second);
      std::optional<uint32_t> caller = key.first ? Map(*key.first) : std::nullopt;
      if (callee) Record(caller, *callee, count, files);
    }
  }

  void Record(std::optional<uint32_t> caller, uint32_t callee, int64_t count,
              const std::vector<uint32_t>& files) {
    for (uint32_t f : files) {
      reach_[callee].insert(f);
      if (caller) reach_[*caller].insert(f);
    }
    if (!caller) return;
    CallEdge& e = calls_[{*caller, callee}];
    e.count += count;
    e.files.insert(files.begin(), files.end());
  }

  DepGraph Finish() {
    // Test files sorted by name, with every index remapped.
    std::vector<uint32_t> order(test_files_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return test_files_[a] < test_files_[b]; });
    std::vector<uint32_t> rank(order.size());
    std::vector<std::string> names;
    for (uint32_t r = 0; r < order.size(); ++r) {
      rank[order[r]] = r;
      names.push_back(test_files_[order[r]]);
    }
    auto remap = [&](const std::set<uint32_t>& s) {
      std::vector<uint32_t> out;
      for (uint32_t f : s) out.push_back(rank[f]);
      std::sort(out.begin(), out.end());
      return out;
    };
    for (const auto& [v, s] : reach_) nodes_[v].test_files = remap(s);
    std::vector<Edge> edges;
    for (const auto& [from, to, kind] : static_) edges.push_back(Edge{from, to, kind, 0, {}});
    for (const auto& [key, e] : calls_) {
      edges.push_back(Edge{key.first, key.second, EdgeKind::kCall, e.count, remap(e.files)});
    }
    return DepGraph::FromParts(std::move(nodes_), std::move(edges), std::move(names));
  }

  // Module -> modules it imports, from the static import edges.
  void IndexImports() {
    for (const auto& [from, to, kind] : static_) {
      if (kind == EdgeKind::kImport) imports_from_module_.insert({ModuleOf(from), ModuleOf(to)});
    }
  }

  struct CallEdge {
    int64_t count = 0;
    std::set<uint32_t> files;
  };

  const std::vector<FileTable>& files_;
  const tracer::TraceSet* trace_;
  std::vector<Node> nodes_;
  std::vector<size_t> file_of_node_;
  std::unordered_map<std::string, uint32_t> by_id_;
  std::unordered_map<std::string, uint32_t> module_of_file_;
  std::unordered_map<std::string, size_t> file_index_;
  std::multimap<std::string, uint32_t> module_by_name_;
  std::set<std::tuple<uint32_t, uint32_t, EdgeKind>> static_;
  std::set<std::pair<uint32_t, uint32_t>> imports_from_module_;
  std::map<CodeId, std::optional<uint32_t>> mapped_;
  std::vector<std::string> test_files_;
  std::unordered_map<std::string, uint32_t> test_file_index_;
  std::map<std::pair<uint32_t, uint32_t>, CallEdge> calls_;
  std::map<uint32_t, std::set<uint32_t>> reach_;
};

}  // namespace

DepGraph DepGraph::Build(const std::vector<FileTable>& files, const tracer::TraceSet* trace,
                         JoinStats* stats) {
  Builder builder(files, trace);
  return builder.Run(stats);
}

}  // namespace fbkit::graph

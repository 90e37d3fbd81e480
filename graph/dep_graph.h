// The object dependency graph: vertices are the entities of the entity table; edges are
// traced calls (with counts and the test files that exercised them), containment, static
// imports, static references (decorators) and inheritance. Each vertex knows the test files
// that reach it. Boost.Graph stays inside graph/: this header shows fbkit's own types.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parser/entity.h"
#include "tracer/trace.h"

namespace fbkit::graph {

enum class EdgeKind : uint8_t { kCall, kContains, kImport, kReference, kInherits };
const char* EdgeKindName(EdgeKind kind);
std::optional<EdgeKind> EdgeKindFromName(std::string_view name);

struct Node {
  std::string id;
  std::string path;
  std::string qualname;
  parser::EntityKind kind = parser::EntityKind::kModule;
  int start_line = 0;
  int end_line = 0;
  std::vector<uint32_t> test_files;  // indices into DepGraph::test_files(), sorted
};

struct Edge {
  uint32_t from = 0;
  uint32_t to = 0;
  EdgeKind kind = EdgeKind::kCall;
  int64_t count = 0;                 // calls only
  std::vector<uint32_t> test_files;  // calls only: the test files whose runs made them
};

// How the trace joined the entity table.
struct JoinStats {
  size_t identities = 0;  // distinct code identities in the trace
  size_t mapped = 0;
  std::vector<std::string> unmapped;  // "path:line:name", sorted
};

class DepGraph {
 public:
  DepGraph();
  ~DepGraph();
  DepGraph(DepGraph&&) noexcept;
  DepGraph& operator=(DepGraph&&) noexcept;

  // Builds the graph of an entity table and, when given, a trace of the same repository.
  static DepGraph Build(const std::vector<parser::FileTable>& files,
                        const tracer::TraceSet* trace, JoinStats* stats);
  // Rebuilds a graph from its parts (as read back from fbkit.graph/1).
  static DepGraph FromParts(std::vector<Node> nodes, std::vector<Edge> edges,
                            std::vector<std::string> test_files);

  const std::vector<Node>& nodes() const;
  const std::vector<Edge>& edges() const;  // sorted by (from, to, kind)
  const std::vector<std::string>& test_files() const;
  std::optional<uint32_t> Find(std::string_view id) const;

  struct Hit {
    uint32_t node;
    int depth;
  };
  // What `v` needs (out-edges), transitively, breadth first, up to max_depth (<0: all).
  std::vector<Hit> Deps(uint32_t v, int max_depth) const;
  // What needs `v` (in-edges), likewise.
  std::vector<Hit> RDeps(uint32_t v, int max_depth) const;
  // A shortest chain of edges from `from` to `to` (edge indices); empty when none.
  std::vector<uint32_t> Path(uint32_t from, uint32_t to) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fbkit::graph

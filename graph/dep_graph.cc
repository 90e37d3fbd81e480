#include "graph/dep_graph.h"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/reverse_graph.hpp>

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace fbkit::graph {

// Edge property: the index of the edge in DepGraph::edges(). Outside the anonymous namespace:
// DepGraph::Impl, a member of an exported class, holds a graph of them.
struct EdgeIndex {
  uint32_t index = 0;
};

using Csr = boost::compressed_sparse_row_graph<boost::bidirectionalS, boost::no_property,
                                               EdgeIndex, boost::no_property, uint32_t, uint32_t>;

namespace {

constexpr int kUnvisited = std::numeric_limits<int>::max();

// Records each vertex's BFS depth and, optionally, the edge it was reached by.
template <typename Graph>
class DepthRecorder : public boost::default_bfs_visitor {
 public:
  DepthRecorder(std::vector<int>* depth, std::vector<uint32_t>* via)
      : depth_(depth), via_(via) {}
  void tree_edge(typename boost::graph_traits<Graph>::edge_descriptor e, const Graph& g) const {
    auto s = boost::source(e, g), t = boost::target(e, g);
    (*depth_)[t] = (*depth_)[s] + 1;
    if (via_) (*via_)[t] = g[e].index;
  }

 private:
  std::vector<int>* depth_;
  std::vector<uint32_t>* via_;
};

template <typename Graph>
std::vector<int> Bfs(const Graph& g, uint32_t start, size_t n, std::vector<uint32_t>* via) {
  std::vector<int> depth(n, kUnvisited);
  depth[start] = 0;
  std::vector<boost::default_color_type> colors(n, boost::white_color);
  auto color_map = boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, g));
  boost::breadth_first_search(g, start,
                              boost::visitor(DepthRecorder<Graph>(&depth, via)).color_map(color_map));
  return depth;
}

std::vector<DepGraph::Hit> Hits(const std::vector<int>& depth, uint32_t start, int max_depth) {
  std::vector<DepGraph::Hit> hits;
  for (uint32_t v = 0; v < depth.size(); ++v) {
    if (v == start || depth[v] == kUnvisited) continue;
    if (max_depth >= 0 && depth[v] > max_depth) continue;
    hits.push_back({v, depth[v]});
  }
  std::stable_sort(hits.begin(), hits.end(),
                   [](const DepGraph::Hit& a, const DepGraph::Hit& b) { return a.depth < b.depth; });
  return hits;
}

}  // namespace

struct DepGraph::Impl {
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<std::string> test_files;
  std::unordered_map<std::string_view, uint32_t> by_id;
  Csr csr;
};

DepGraph::DepGraph() : impl_(std::make_unique<Impl>()) {}
DepGraph::~DepGraph() = default;
DepGraph::DepGraph(DepGraph&&) noexcept = default;
DepGraph& DepGraph::operator=(DepGraph&&) noexcept = default;

DepGraph DepGraph::FromParts(std::vector<Node> nodes, std::vector<Edge> edges,
                             std::vector<std::string> test_files) {
  DepGraph g;
  Impl& im = *g.impl_;
  im.nodes = std::move(nodes);
  im.edges = std::move(edges);
  std::sort(im.edges.begin(), im.edges.end(), [](const Edge& a, const Edge& b) {
    return std::tie(a.from, a.to, a.kind) < std::tie(b.from, b.to, b.kind);
  });
  im.test_files = std::move(test_files);
  for (uint32_t i = 0; i < im.nodes.size(); ++i) im.by_id.emplace(im.nodes[i].id, i);
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  std::vector<EdgeIndex> props;
  pairs.reserve(im.edges.size());
  props.reserve(im.edges.size());
  for (uint32_t i = 0; i < im.edges.size(); ++i) {
    pairs.emplace_back(im.edges[i].from, im.edges[i].to);
    props.push_back(EdgeIndex{i});
  }
  im.csr = Csr(boost::edges_are_unsorted_multi_pass, pairs.begin(), pairs.end(), props.begin(),
               static_cast<uint32_t>(im.nodes.size()));
  return g;
}

const std::vector<Node>& DepGraph::nodes() const { return impl_->nodes; }
const std::vector<Edge>& DepGraph::edges() const { return impl_->edges; }
const std::vector<std::string>& DepGraph::test_files() const { return impl_->test_files; }

std::optional<uint32_t> DepGraph::Find(std::string_view id) const {
  auto it = impl_->by_id.find(id);
  if (it == impl_->by_id.end()) return std::nullopt;
  return it->second;
}

std::vector<DepGraph::Hit> DepGraph::Deps(uint32_t v, int max_depth) const {
  return Hits(Bfs(impl_->csr, v, impl_->nodes.size(), nullptr), v, max_depth);
}

std::vector<DepGraph::Hit> DepGraph::RDeps(uint32_t v, int max_depth) const {
  auto reversed = boost::make_reverse_graph(impl_->csr);
  return Hits(Bfs(reversed, v, impl_->nodes.size(), nullptr), v, max_depth);
}

std::vector<uint32_t> DepGraph::Path(uint32_t from, uint32_t to) const {
  std::vector<uint32_t> via(impl_->nodes.size(), 0);
  auto depth = Bfs(impl_->csr, from, impl_->nodes.size(), &via);
  if (from == to || depth[to] == kUnvisited) return {};
  std::vector<uint32_t> path;
  for (uint32_t v = to; v != from; v = impl_->edges[via[v]].from) path.push_back(via[v]);
  std::reverse(path.begin(), path.end());
  return path;
}

const char* EdgeKindName(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kCall: return "call";
    case EdgeKind::kContains: return "contains";
    case EdgeKind::kImport: return "import";
    case EdgeKind::kReference: return "reference";
    case EdgeKind::kInherits: return "inherits";
  }
  return "call";
}

std::optional<EdgeKind> EdgeKindFromName(std::string_view name) {
  for (EdgeKind k : {EdgeKind::kCall, EdgeKind::kContains, EdgeKind::kImport,
                     EdgeKind::kReference, EdgeKind::kInherits}) {
    if (name == EdgeKindName(k)) return k;
  }
  return std::nullopt;
}

}  // namespace fbkit::graph

// Graph benchmark on a synthetic object dependency graph (default: a million call edges over
// 100k entities, random but seeded). `gen` builds it (CSR) and writes it as JSON and binary;
// `load` reads one file in a fresh process and times deps/rdeps/path queries from random
// entities, with the process's peak RSS. bench/bench_graph.sh runs both in one go.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "graph/dep_graph.h"
#include "graph/graph_io.h"

using fbkit::graph::DepGraph;
using fbkit::graph::Edge;
using fbkit::graph::EdgeKind;
using fbkit::graph::Node;
using Clock = std::chrono::steady_clock;

static double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

static DepGraph Synthetic(uint32_t n, size_t m) {
  std::mt19937_64 rng(42);
  std::vector<Node> nodes;
  std::vector<std::string> files;
  for (int f = 0; f < 500; ++f) files.push_back("tests/test_" + std::to_string(f) + ".py");
  for (uint32_t i = 0; i < n; ++i) {
    std::string path = "src/pkg/m" + std::to_string(i / 100) + ".py";
    Node node{path + "::f" + std::to_string(i), path, "f" + std::to_string(i),
              fbkit::parser::EntityKind::kFunction, 1, 5, {static_cast<uint32_t>(i % 500)}};
    nodes.push_back(std::move(node));
  }
  std::vector<Edge> edges;
  std::uniform_int_distribution<uint32_t> pick(0, n - 1);
  for (size_t i = 0; i < m; ++i) {
    uint32_t a = pick(rng), b = pick(rng);
    edges.push_back(Edge{a, b, EdgeKind::kCall, 1, {static_cast<uint32_t>(i % 500)}});
  }
  return DepGraph::FromParts(std::move(nodes), std::move(edges), std::move(files));
}

static bool Write(const std::string& path, const std::string& data) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  return std::fclose(f) == 0 && ok;
}

static std::string Read(const std::string& path) {
  std::string data;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return data;
  char buf[1 << 16];
  for (size_t k; (k = std::fread(buf, 1, sizeof buf, f)) > 0;) data.append(buf, k);
  std::fclose(f);
  return data;
}

// gen DIR [ENTITIES] [EDGES]: builds the synthetic graph, writes DIR/graph.json and .fbg.
static int Gen(const std::string& dir, uint32_t n, size_t m) {
  auto t0 = Clock::now();
  DepGraph g = Synthetic(n, m);
  double build = Since(t0);
  t0 = Clock::now();
  std::string json = fbkit::graph::GraphJson(g, "/synthetic", {});
  double json_s = Since(t0);
  t0 = Clock::now();
  std::string bin = fbkit::graph::GraphBinary(g);
  double bin_s = Since(t0);
  if (!Write(dir + "/graph.json", json) || !Write(dir + "/graph.fbg", bin)) return 1;
  std::printf("graph: %u nodes, %zu edges; JSON %.1f MiB, binary %.1f MiB\n", n, g.edges().size(),
              json.size() / 1048576.0, bin.size() / 1048576.0);
  std::printf("build (incl. CSR)  %8.3f s  %6.1f ns/edge\n", build, build * 1e9 / m);
  std::printf("write JSON         %8.3f s  %6.1f ns/edge\n", json_s, json_s * 1e9 / m);
  std::printf("write binary       %8.3f s  %6.1f ns/edge\n", bin_s, bin_s * 1e9 / m);
  return 0;
}

// load FILE [QUERIES]: loads a graph file and times queries from random entities.
static int Load(const std::string& file, int queries) {
  auto t0 = Clock::now();
  std::string data = Read(file);
  auto g = fbkit::graph::ReadGraph(data);
  double load = Since(t0);
  if (!g.ok()) {
    std::fprintf(stderr, "%s\n", g.error().c_str());
    return 1;
  }
  data.clear();
  data.shrink_to_fit();
  size_t m = g->edges().size();
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint32_t> pick(0, static_cast<uint32_t>(g->nodes().size() - 1));
  double deps = 0, rdeps = 0, path = 0;
  size_t reached = 0;
  for (int q = 0; q < queries; ++q) {
    uint32_t a = pick(rng), b = pick(rng);
    t0 = Clock::now();
    reached += g->Deps(a, 3).size();
    deps += Since(t0);
    t0 = Clock::now();
    reached += g->RDeps(a, 3).size();
    rdeps += Since(t0);
    t0 = Clock::now();
    reached += g->Path(a, b).size();
    path += Since(t0);
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  std::printf("%s: load %.3f s (%.1f ns/edge); deps %.3f ms, rdeps %.3f ms, path %.3f ms per "
              "query (mean of %d); peak RSS %.1f MiB (checksum %zu)\n",
              file.c_str(), load, load * 1e9 / m, deps * 1e3 / queries, rdeps * 1e3 / queries,
              path * 1e3 / queries, queries, ru.ru_maxrss / 1024.0, reached);
  return 0;
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "gen" && argc > 2) {
    return Gen(argv[2], argc > 3 ? static_cast<uint32_t>(std::atol(argv[3])) : 100000,
               argc > 4 ? static_cast<size_t>(std::atol(argv[4])) : 1000000);
  }
  if (mode == "load" && argc > 2) return Load(argv[2], argc > 3 ? std::atoi(argv[3]) : 200);
  std::fprintf(stderr, "usage: fbkit_graph_bench gen DIR [ENTITIES] [EDGES] | load FILE [QUERIES]\n");
  return 2;
}

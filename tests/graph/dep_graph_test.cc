#include "graph/dep_graph.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "graph/graph_io.h"
#include "parser/python_parser.h"

namespace fbkit::graph {
namespace {

using tracer::CodeId;

struct Repo {
  std::vector<parser::FileTable> files;
  void Add(const std::string& path, const std::string& module, const std::string& src) {
    auto p = parser::PythonParser::Create();
    files.push_back((*p)->Parse(path, module, src, /*references=*/true));
    std::sort(files.begin(), files.end(),
              [](const auto& a, const auto& b) { return a.path < b.path; });
  }
};

bool HasEdge(const DepGraph& g, const std::string& from, const std::string& to, EdgeKind kind) {
  auto a = g.Find(from), b = g.Find(to);
  if (!a || !b) return false;
  return std::any_of(g.edges().begin(), g.edges().end(), [&](const Edge& e) {
    return e.from == *a && e.to == *b && e.kind == kind;
  });
}

Repo SmallRepo() {
  Repo r;
  r.Add("pkg/__init__.py", "pkg", "from .base import Base as Root\nfrom . import util\n");
  r.Add("pkg/base.py", "pkg.base", "class Base:\n    def run(self):\n        return 1\n");
  r.Add("pkg/util.py", "pkg.util", "LIMIT = 3\ndef helper(x):\n    return x\n");
  r.Add("pkg/sub/__init__.py", "pkg.sub", "");
  r.Add("pkg/sub/impl.py", "pkg.sub.impl",
        "import functools\n"
        "from .. import Root\n"
        "from ..util import LIMIT, helper as h\n"
        "class Impl(Root, metaclass=type):\n"
        "    @functools.lru_cache()\n"
        "    def run(self):\n"
        "        return [h(i) for i in range(LIMIT)]\n"
        "@h\n"
        "def decorated():\n"
        "    return (lambda: h(1))()\n");
  return r;
}

TEST(DepGraphTest, StaticLinks) {
  DepGraph g = DepGraph::Build(SmallRepo().files, nullptr, nullptr);
  // Relative imports through a package re-export, with aliases.
  EXPECT_TRUE(HasEdge(g, "pkg/sub/impl.py::<module>", "pkg/base.py::Base", EdgeKind::kImport));
  EXPECT_TRUE(HasEdge(g, "pkg/sub/impl.py::<module>", "pkg/util.py::helper", EdgeKind::kImport));
  EXPECT_TRUE(HasEdge(g, "pkg/sub/impl.py::<module>", "pkg/util.py::<module>", EdgeKind::kImport));
  EXPECT_TRUE(HasEdge(g, "pkg/__init__.py::<module>", "pkg/util.py::<module>", EdgeKind::kImport));
  EXPECT_TRUE(HasEdge(g, "pkg/sub/impl.py::Impl", "pkg/base.py::Base", EdgeKind::kInherits));
  EXPECT_TRUE(HasEdge(g, "pkg/sub/impl.py::decorated", "pkg/util.py::helper", EdgeKind::kReference));
  EXPECT_TRUE(HasEdge(g, "pkg/sub/impl.py::Impl.run", "pkg/util.py::helper", EdgeKind::kReference));
  // A constant imported from another module: a reference to that module.
  EXPECT_TRUE(HasEdge(g, "pkg/sub/impl.py::Impl.run", "pkg/util.py::<module>", EdgeKind::kReference));
  EXPECT_TRUE(HasEdge(g, "pkg/base.py::Base", "pkg/base.py::Base.run", EdgeKind::kContains));
  EXPECT_FALSE(HasEdge(g, "pkg/sub/impl.py::<module>", "pkg/sub/impl.py::<module>", EdgeKind::kImport));
}

TEST(DepGraphTest, TraceJoinsByCodeIdentity) {
  Repo r = SmallRepo();
  tracer::TraceSet trace;
  tracer::FileTrace& f = trace.files["tests/test_x.py"];
  f.file = "tests/test_x.py";
  CodeId run{"pkg/sub/impl.py", 5, "run"};          // decorated: the decorator's line
  CodeId comp{"pkg/sub/impl.py", 7, "<listcomp>"};  // joins its enclosing method
  CodeId helper{"pkg/util.py", 2, "helper"};
  CodeId lam{"pkg/sub/impl.py", 10, "<lambda>"};
  CodeId gone{"pkg/util.py", 99, "vanished"};
  f.edges[{std::nullopt, run}] = 1;
  f.edges[{run, comp}] = 1;
  f.edges[{comp, helper}] = 3;
  f.edges[{lam, helper}] = 1;
  f.edges[{std::nullopt, gone}] = 1;
  JoinStats stats;
  DepGraph g = DepGraph::Build(r.files, &trace, &stats);
  EXPECT_TRUE(HasEdge(g, "pkg/sub/impl.py::Impl.run", "pkg/util.py::helper", EdgeKind::kCall));
  EXPECT_TRUE(HasEdge(g, "pkg/sub/impl.py::decorated", "pkg/util.py::helper", EdgeKind::kCall));
  EXPECT_EQ(stats.identities, 5u);
  EXPECT_EQ(stats.unmapped, (std::vector<std::string>{"pkg/util.py:99:vanished"}));
  const Node& h = g.nodes()[*g.Find("pkg/util.py::helper")];
  ASSERT_EQ(h.test_files.size(), 1u);
  EXPECT_EQ(g.test_files()[h.test_files[0]], "tests/test_x.py");
  EXPECT_TRUE(g.nodes()[*g.Find("pkg/base.py::Base.run")].test_files.empty());
}

TEST(DepGraphTest, ImportTimeEdgesGoToFilesWhoseClosureHoldsTheModule) {
  Repo r = SmallRepo();
  r.Add("tests/test_a.py", "test_a", "from pkg.sub.impl import Impl\n");
  r.Add("tests/test_b.py", "test_b", "import pkg.util\n");
  tracer::TraceSet trace;
  trace.files["tests/test_a.py"].file = "tests/test_a.py";
  trace.files["tests/test_b.py"].file = "tests/test_b.py";
  // Module-level code of impl.py calls helper (the decorator) at import time.
  trace.contexts["<import>"][{CodeId{"pkg/sub/impl.py", 1, "<module>"}, CodeId{"pkg/util.py", 2, "helper"}}] = 1;
  DepGraph g = DepGraph::Build(r.files, &trace, nullptr);
  const Node& impl = g.nodes()[*g.Find("pkg/sub/impl.py::<module>")];
  ASSERT_EQ(impl.test_files.size(), 1u);
  EXPECT_EQ(g.test_files()[impl.test_files[0]], "tests/test_a.py");
}

TEST(DepGraphTest, QueriesAndRoundTrips) {
  DepGraph g = DepGraph::Build(SmallRepo().files, nullptr, nullptr);
  uint32_t impl = *g.Find("pkg/sub/impl.py::Impl");
  uint32_t base = *g.Find("pkg/base.py::Base");
  auto deps = g.Deps(impl, 1);
  EXPECT_TRUE(std::any_of(deps.begin(), deps.end(), [&](auto h) { return h.node == base && h.depth == 1; }));
  auto rdeps = g.RDeps(base, -1);
  EXPECT_TRUE(std::any_of(rdeps.begin(), rdeps.end(), [&](auto h) { return h.node == impl; }));
  auto path = g.Path(impl, base);
  ASSERT_EQ(path.size(), 1u);
  EXPECT_EQ(g.edges()[path[0]].from, impl);
  EXPECT_EQ(g.edges()[path[0]].to, base);
  EXPECT_TRUE(g.Path(base, impl).empty());
  for (const std::string& data : {GraphJson(g, "/r", {}), GraphBinary(g)}) {
    auto back = ReadGraph(data);
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(GraphJson(*back, "/r", {}), GraphJson(g, "/r", {}));
  }
  EXPECT_FALSE(ReadGraph(GraphBinary(g).substr(0, 40)).ok());
  EXPECT_FALSE(ReadGraph("{\"schema\": \"x\"}").ok());
}

}  // namespace
}  // namespace fbkit::graph

// The breadth-first extraction over a hand-made graph: what a P2P file reaches remains, and
// entities the cut found still in use (`kept`) stay: a kept function whole, a kept class as a
// shell whose members are weighed one by one.
#include "extract/select.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "parser/python_parser.h"
#include "tests/testing/fake_env.h"

namespace fbkit::extract {
namespace {

using graph::Edge;
using graph::EdgeKind;
using graph::Node;

constexpr const char* kSource =
    "class Shell:\n"              // 1
    "    def used(self):\n"       // 2
    "        return 1\n"          // 3
    "\n"                          // 4
    "    def feature(self):\n"    // 5
    "        return helper()\n"   // 6
    "\n"                          // 7
    "    def untested(self):\n"   // 8
    "        return 3\n"          // 9
    "\n"                          // 10
    "\n"                          // 11
    "def helper():\n"             // 12
    "    return 2\n"              // 13
    "\n"                          // 14
    "\n"                          // 15
    "REGISTRY = {'s': Shell}\n";  // 16

constexpr uint32_t kF2P = 0, kP2P = 1;

class SelectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = parser::PythonParser::Create();
    ASSERT_TRUE(p.ok());
    env_.AddFile("/r/pkg/m.py", kSource);
    std::vector<parser::FileTable> tables;
    tables.push_back((*p)->Parse("pkg/m.py", "pkg.m", kSource, true));
    repo_ = std::make_unique<Repo>(std::move(*Repo::Load(env_, "/r", std::move(tables))));
    // Nodes: 0 module, 1 Shell, 2 used (F2P + P2P), 3 feature (F2P), 4 untested, 5 helper.
    std::vector<Node> nodes = {
        {"pkg/m.py::<module>", "pkg/m.py", "<module>", parser::EntityKind::kModule, 1, 16, {}},
        {"pkg/m.py::Shell", "pkg/m.py", "Shell", parser::EntityKind::kClass, 1, 9, {}},
        {"pkg/m.py::Shell.used", "pkg/m.py", "Shell.used", parser::EntityKind::kMethod, 2, 3,
         {kF2P, kP2P}},
        {"pkg/m.py::Shell.feature", "pkg/m.py", "Shell.feature", parser::EntityKind::kMethod, 5,
         6, {kF2P}},
        {"pkg/m.py::Shell.untested", "pkg/m.py", "Shell.untested", parser::EntityKind::kMethod,
         8, 9, {}},
        {"pkg/m.py::helper", "pkg/m.py", "helper", parser::EntityKind::kFunction, 12, 13,
         {kF2P}},
    };
    std::vector<Edge> edges = {
        {0, 1, EdgeKind::kContains, 0, {}}, {0, 5, EdgeKind::kContains, 0, {}},
        {1, 2, EdgeKind::kContains, 0, {}}, {1, 3, EdgeKind::kContains, 0, {}},
        {1, 4, EdgeKind::kContains, 0, {}}, {3, 5, EdgeKind::kCall, 4, {kF2P}},
    };
    graph_ = graph::DepGraph::FromParts(std::move(nodes), std::move(edges),
                                        {"tests/test_a.py", "tests/test_b.py"});
    plan_.f2p = "tests/test_a.py";
    plan_.cap = 3000;
  }

  std::set<std::string> Extract(std::vector<std::string> tops, std::vector<std::string> p2p,
                                std::set<std::string> kept) {
    plan_.top_objects = std::move(tops);
    plan_.p2p = std::move(p2p);
    plan_.kept = std::move(kept);
    status_ = Reextract(*repo_, graph_, &plan_);
    return plan_.extracted;
  }

  testing::FakeEnv env_;
  std::unique_ptr<Repo> repo_;
  graph::DepGraph graph_;
  Plan plan_;
  util::Status status_;
};

TEST_F(SelectTest, AClassNoP2PFileUsesGoesWholeWithItsCallees) {
  auto got = Extract({"pkg/m.py::Shell"}, {}, {});
  EXPECT_TRUE(status_.ok()) << status_.error();
  EXPECT_EQ(got, (std::set<std::string>{"pkg/m.py::Shell", "pkg/m.py::Shell.feature",
                                        "pkg/m.py::Shell.untested", "pkg/m.py::Shell.used",
                                        "pkg/m.py::helper"}));
}

TEST_F(SelectTest, AClassAP2PFileUsesKeepsWhatThatFileReaches) {
  auto got = Extract({"pkg/m.py::Shell"}, {"tests/test_b.py"}, {});
  EXPECT_EQ(got, (std::set<std::string>{"pkg/m.py::Shell.feature", "pkg/m.py::helper"}));
}

TEST_F(SelectTest, AKeptClassStaysAsAShellWhoseTestedMembersAreStillExtracted) {
  // No P2P file uses Shell, but REGISTRY (code that stays) names it: the class remains, the
  // members the F2P file reaches go; the one no test reaches stays with the class.
  auto got = Extract({"pkg/m.py::Shell"}, {}, {"pkg/m.py::Shell"});
  EXPECT_TRUE(status_.ok()) << status_.error();
  EXPECT_EQ(got, (std::set<std::string>{"pkg/m.py::Shell.feature", "pkg/m.py::Shell.used",
                                        "pkg/m.py::helper"}));
}

TEST_F(SelectTest, AKeptFunctionStaysWholeAndItsCalleesAreNotReachedThroughIt) {
  auto got = Extract({"pkg/m.py::Shell"}, {}, {"pkg/m.py::Shell", "pkg/m.py::Shell.feature"});
  EXPECT_EQ(got, (std::set<std::string>{"pkg/m.py::Shell.used"}));
}

TEST_F(SelectTest, NothingLeftToExtractIsAnErrorThatSaysWhy) {
  auto got = Extract({"pkg/m.py::helper"}, {}, {"pkg/m.py::helper"});
  EXPECT_TRUE(got.empty());
  ASSERT_FALSE(status_.ok());
  EXPECT_NE(status_.error().find("used by code that stays"), std::string::npos);
}

TEST_F(SelectTest, TheLineCapStopsTheSearchButNeverBeforeTheFirstEntity) {
  plan_.cap = 3;  // Shell.feature (2 lines) fits, helper (2 more) does not
  auto got = Extract({"pkg/m.py::Shell"}, {"tests/test_b.py"}, {});
  EXPECT_EQ(got, (std::set<std::string>{"pkg/m.py::Shell.feature"}));
  EXPECT_TRUE(plan_.capped);
  plan_.cap = 1;
  got = Extract({"pkg/m.py::helper"}, {}, {});
  EXPECT_EQ(got, (std::set<std::string>{"pkg/m.py::helper"}));
}

}  // namespace
}  // namespace fbkit::extract

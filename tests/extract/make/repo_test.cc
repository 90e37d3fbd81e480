// An entity's one handle inside the pipeline: its position in the entity table, which is its
// vertex in a graph built from the same table; ids are resolved once and written back sorted.
#include "extract/make/repo.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "graph/dep_graph.h"
#include "parser/python_parser.h"
#include "tests/testing/fake_env.h"

namespace fbkit::extract::make {
namespace {

class RepoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = parser::PythonParser::Create();
    ASSERT_TRUE(p.ok());
    const std::vector<std::pair<std::string, std::string>> files = {
        {"pkg/a.py", "class Zed:\n    def run(self):\n        def inner():\n            pass\n\n"
                     "    def also(self):\n        pass\n\n\ndef alpha():\n    pass\n"},
        {"pkg/b.py", "def beta():\n    pass\n"}};
    for (const auto& [path, text] : files) {
      env_.AddFile("/r/" + path, text);
      std::string module = path.substr(0, path.size() - 3);
      std::replace(module.begin(), module.end(), '/', '.');
      tables_.push_back((*p)->Parse(path, module, text, true));
    }
    auto repo = Repo::Load(env_, "/r", tables_);
    ASSERT_TRUE(repo.ok()) << repo.error();
    repo_ = std::make_unique<Repo>(std::move(*repo));
  }

  Ent E(const std::string& id) const {
    auto e = repo_->Find(id);
    EXPECT_TRUE(e.has_value()) << id;
    return e.value_or(0);
  }

  testing::FakeEnv env_;
  std::vector<parser::FileTable> tables_;
  std::unique_ptr<Repo> repo_;
};

TEST_F(RepoTest, HandlesFollowTheTableAndKnowTheirPlace) {
  // Files in order, each file's entities in source order, its module first.
  EXPECT_EQ(repo_->size(), 8u);
  EXPECT_EQ(E("pkg/a.py::<module>"), 0u);
  EXPECT_EQ(E("pkg/a.py::Zed"), 1u);
  EXPECT_EQ(E("pkg/b.py::<module>"), 6u);
  EXPECT_EQ(repo_->module(1), 6u);
  EXPECT_EQ(repo_->file(E("pkg/b.py::beta")), 1u);
  EXPECT_EQ(repo_->table(E("pkg/a.py::alpha")).path, "pkg/a.py");
  EXPECT_EQ(repo_->id(E("pkg/a.py::Zed.run.inner")), "pkg/a.py::Zed.run.inner");
  EXPECT_FALSE(repo_->Find("pkg/a.py::nothing").has_value());

  EXPECT_EQ(repo_->Parent(E("pkg/a.py::Zed.run.inner")), E("pkg/a.py::Zed.run"));
  EXPECT_EQ(repo_->Parent(E("pkg/a.py::Zed")), E("pkg/a.py::<module>"));
  EXPECT_FALSE(repo_->Parent(E("pkg/a.py::<module>")).has_value());
  EXPECT_TRUE(repo_->IsTopLevel(E("pkg/a.py::Zed")));
  EXPECT_TRUE(repo_->IsTopLevel(E("pkg/a.py::alpha")));
  EXPECT_FALSE(repo_->IsTopLevel(E("pkg/a.py::Zed.run")));
  EXPECT_FALSE(repo_->IsTopLevel(E("pkg/a.py::<module>")));
  EXPECT_EQ(repo_->Children(E("pkg/a.py::Zed")),
            (std::vector<Ent>{E("pkg/a.py::Zed.run"), E("pkg/a.py::Zed.also")}));
  EXPECT_EQ(repo_->Descendants(E("pkg/a.py::Zed")),
            (std::vector<Ent>{E("pkg/a.py::Zed.run"), E("pkg/a.py::Zed.run.inner"),
                              E("pkg/a.py::Zed.also")}));
  EXPECT_TRUE(repo_->Within(E("pkg/a.py::Zed.run.inner"), E("pkg/a.py::Zed")));
  EXPECT_FALSE(repo_->Within(E("pkg/a.py::Zed"), E("pkg/a.py::Zed")));
  EXPECT_FALSE(repo_->Within(E("pkg/a.py::alpha"), E("pkg/a.py::Zed")));
}

TEST_F(RepoTest, HandlesLeaveThePipelineAsIdsInIdOrder) {
  // Table order (run before also) is not id order (also before run).
  std::set<Ent> some = {E("pkg/b.py::beta"), E("pkg/a.py::Zed.run"), E("pkg/a.py::Zed.also")};
  EXPECT_LT(E("pkg/a.py::Zed.run"), E("pkg/a.py::Zed.also"));
  EXPECT_EQ(repo_->Ids(some), (std::vector<std::string>{"pkg/a.py::Zed.also", "pkg/a.py::Zed.run",
                                                         "pkg/b.py::beta"}));
  EXPECT_EQ(repo_->ByIdOrder(some), (std::vector<Ent>{E("pkg/a.py::Zed.also"),
                                                       E("pkg/a.py::Zed.run"), E("pkg/b.py::beta")}));
  EXPECT_EQ(repo_->Resolve({"pkg/b.py::beta", "pkg/gone.py::x"}),
            (std::set<Ent>{E("pkg/b.py::beta")}));
}

TEST_F(RepoTest, AGraphOfTheSameTableMatchesAnotherOneIsRefused) {
  graph::DepGraph same = graph::DepGraph::Build(tables_, nullptr, nullptr);
  EXPECT_TRUE(repo_->CheckGraph(same).ok());
  // A graph built without pkg/b.py (other excludes): refused, with the count.
  graph::DepGraph fewer = graph::DepGraph::Build({tables_[0]}, nullptr, nullptr);
  auto s = repo_->CheckGraph(fewer);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("6 vertices for 8 entities"), std::string::npos) << s.error();
  // A graph of the same files in another order: refused, naming the first difference.
  graph::DepGraph swapped = graph::DepGraph::Build({tables_[1], tables_[0]}, nullptr, nullptr);
  s = repo_->CheckGraph(swapped);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("vertex 0 is pkg/b.py::<module>"), std::string::npos) << s.error();
}

}  // namespace
}  // namespace fbkit::extract::make

// The breadth-first extraction over a hand-made graph: what a P2P file reaches remains, and
// entities the cut found still in use (`kept`) stay: a kept function whole, a kept class as a
// shell whose members are weighed one by one.
#include "extract/make/select.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "extract/make/top_model.h"
#include "parser/python_parser.h"
#include "tests/testing/fake_env.h"

namespace fbkit::extract::make {
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
        {"pkg/m.py::Shell.used",
         "pkg/m.py",
         "Shell.used",
         parser::EntityKind::kMethod,
         2,
         3,
         {kF2P, kP2P}},
        {"pkg/m.py::Shell.feature",
         "pkg/m.py",
         "Shell.feature",
         parser::EntityKind::kMethod,
         5,
         6,
         {kF2P}},
        {"pkg/m.py::Shell.untested",
         "pkg/m.py",
         "Shell.untested",
         parser::EntityKind::kMethod,
         8,
         9,
         {}},
        {"pkg/m.py::helper", "pkg/m.py", "helper", parser::EntityKind::kFunction, 12, 13, {kF2P}},
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
    plan_.top_objects.clear();
    for (const auto& id : tops) plan_.top_objects.push_back(*repo_->Find(id));
    plan_.p2p = std::move(p2p);
    plan_.kept = repo_->Resolve(kept);
    status_ = Reextract(*repo_, graph_, &plan_);
    return repo_->IdSet(plan_.extracted);
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

TEST_F(SelectTest, AKeptFunctionNoP2PFileRunsStaysWholeAndWhatItCallsStillGoes) {
  auto got = Extract({"pkg/m.py::Shell"}, {}, {"pkg/m.py::Shell", "pkg/m.py::Shell.feature"});
  EXPECT_EQ(got, (std::set<std::string>{"pkg/m.py::Shell.used", "pkg/m.py::helper"}));
  EXPECT_TRUE(plan_.stand_ins.empty());
  // A top object that stays: the first removed object below it stands in for it.
  got = Extract({"pkg/m.py::Shell.feature"}, {}, {"pkg/m.py::Shell.feature"});
  EXPECT_EQ(got, (std::set<std::string>{"pkg/m.py::helper"}));
  EXPECT_EQ(repo_->IdSet(plan_.stand_ins), (std::set<std::string>{"pkg/m.py::helper"}));
}

TEST_F(SelectTest, NothingIsReachedThroughAKeptFunctionAP2PFileRuns) {
  std::vector<Node> nodes = graph_.nodes();
  nodes[3].test_files = {kF2P, kP2P};
  graph_ = graph::DepGraph::FromParts(std::move(nodes), graph_.edges(), graph_.test_files());
  auto got = Extract({"pkg/m.py::Shell"}, {"tests/test_b.py"},
                     {"pkg/m.py::Shell", "pkg/m.py::Shell.feature"});
  EXPECT_FALSE(got.count("pkg/m.py::helper"));
}

TEST_F(SelectTest, AHelperMoreTestFilesReachThanTheUtilityLimitStaysThoughNoP2PFileRunsIt) {
  // helper is reached by both test files (one more than the limit), yet no P2P file is
  // chosen: a P2P draw from the whole suite would run it, so it stays; the tops still go.
  std::vector<Node> nodes = graph_.nodes();
  nodes[5].test_files = {kF2P, kP2P};
  graph_ = graph::DepGraph::FromParts(std::move(nodes), graph_.edges(), graph_.test_files());
  plan_.utility_limit = 1;
  auto got = Extract({"pkg/m.py::Shell"}, {}, {});
  EXPECT_TRUE(status_.ok()) << status_.error();
  EXPECT_EQ(got, (std::set<std::string>{"pkg/m.py::Shell", "pkg/m.py::Shell.feature",
                                        "pkg/m.py::Shell.untested", "pkg/m.py::Shell.used"}));
  // Chosen as a top object itself, it goes; without a limit, it goes as a helper too.
  EXPECT_EQ(Extract({"pkg/m.py::helper"}, {}, {}), (std::set<std::string>{"pkg/m.py::helper"}));
  plan_.utility_limit = 0;
  EXPECT_TRUE(Extract({"pkg/m.py::Shell"}, {}, {}).count("pkg/m.py::helper"));
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

// The chooser and the planner on a tiny suite: test_a.py tests Shell.feature, test_b.py uses
// Shell.used, test_c.py and other/test_d.py touch nothing. Shell is used by two of four files
// (more than the share limit), so it is chosen through its member; whole_classes takes the
// class itself.
class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = parser::PythonParser::Create();
    ASSERT_TRUE(p.ok());
    const std::vector<std::pair<std::string, std::string>> files = {
        {"pkg/m.py", kSource},
        {"tests/test_a.py",
         "from pkg.m import Shell\n\n\ndef test_feature():\n    assert Shell().feature() == 2\n"},
        {"tests/test_b.py",
         "from pkg.m import Shell\n\n\ndef test_used():\n    assert Shell().used() == 1\n"},
        {"tests/test_c.py", "def test_nothing():\n    assert True\n"},
        {"tests/other/test_d.py", "def test_nothing():\n    assert True\n"}};
    std::vector<parser::FileTable> tables;
    for (const auto& [path, text] : files) {
      env_.AddFile("/r/" + path, text);
      std::string module = path.substr(0, path.size() - 3);
      std::replace(module.begin(), module.end(), '/', '.');
      tables.push_back((*p)->Parse(path, module, text, true));
    }
    repo_ = std::make_unique<Repo>(std::move(*Repo::Load(env_, "/r", std::move(tables))));
    using K = parser::EntityKind;
    // Test file indices (sorted paths): 0 other/test_d.py, 1 test_a.py, 2 test_b.py, 3 test_c.py.
    std::vector<Node> nodes = {
        {"pkg/m.py::<module>", "pkg/m.py", "<module>", K::kModule, 1, 16, {}},
        {"pkg/m.py::Shell", "pkg/m.py", "Shell", K::kClass, 1, 9, {}},
        {"pkg/m.py::Shell.used", "pkg/m.py", "Shell.used", K::kMethod, 2, 3, {2}},
        {"pkg/m.py::Shell.feature", "pkg/m.py", "Shell.feature", K::kMethod, 5, 6, {1}},
        {"pkg/m.py::Shell.untested", "pkg/m.py", "Shell.untested", K::kMethod, 8, 9, {}},
        {"pkg/m.py::helper", "pkg/m.py", "helper", K::kFunction, 12, 13, {1}},
        {"tests/test_a.py::<module>", "tests/test_a.py", "<module>", K::kModule, 1, 5, {1}},
        {"tests/test_a.py::test_feature",
         "tests/test_a.py",
         "test_feature",
         K::kFunction,
         4,
         5,
         {1}},
        {"tests/test_b.py::<module>", "tests/test_b.py", "<module>", K::kModule, 1, 5, {2}},
        {"tests/test_b.py::test_used", "tests/test_b.py", "test_used", K::kFunction, 4, 5, {2}},
        {"tests/test_c.py::<module>", "tests/test_c.py", "<module>", K::kModule, 1, 2, {3}},
        {"tests/test_c.py::test_nothing",
         "tests/test_c.py",
         "test_nothing",
         K::kFunction,
         1,
         2,
         {3}},
        {"tests/other/test_d.py::<module>",
         "tests/other/test_d.py",
         "<module>",
         K::kModule,
         1,
         2,
         {0}},
        {"tests/other/test_d.py::test_nothing",
         "tests/other/test_d.py",
         "test_nothing",
         K::kFunction,
         1,
         2,
         {0}},
    };
    std::vector<Edge> edges = {
        {0, 1, EdgeKind::kContains, 0, {}},   {0, 5, EdgeKind::kContains, 0, {}},
        {1, 2, EdgeKind::kContains, 0, {}},   {1, 3, EdgeKind::kContains, 0, {}},
        {1, 4, EdgeKind::kContains, 0, {}},   {3, 5, EdgeKind::kCall, 1, {1}},
        {6, 1, EdgeKind::kImport, 0, {}},     {6, 7, EdgeKind::kContains, 0, {}},
        {7, 3, EdgeKind::kCall, 1, {1}},      {8, 1, EdgeKind::kImport, 0, {}},
        {8, 9, EdgeKind::kContains, 0, {}},   {9, 2, EdgeKind::kCall, 1, {2}},
        {10, 11, EdgeKind::kContains, 0, {}}, {12, 13, EdgeKind::kContains, 0, {}},
    };
    graph_ = graph::DepGraph::FromParts(
        std::move(nodes), std::move(edges),
        {"tests/other/test_d.py", "tests/test_a.py", "tests/test_b.py", "tests/test_c.py"});
    passing_ = {{"tests/other/test_d.py", {"tests/other/test_d.py::test_nothing"}, 0},
                {"tests/test_a.py", {"tests/test_a.py::test_feature"}, 0},
                {"tests/test_b.py", {"tests/test_b.py::test_used"}, 0},
                {"tests/test_c.py", {"tests/test_c.py::test_nothing"}, 0}};
    options_.p2p = 1;
  }

  testing::FakeEnv env_;
  std::unique_ptr<Repo> repo_;
  graph::DepGraph graph_;
  std::vector<PassingFile> passing_;
  SelectOptions options_;
};

TEST_F(PlanTest, ASharedClassIsChosenThroughItsSpecificMethodOrWholeOnRequest) {
  auto plan = PlanTask(*repo_, graph_, passing_, passing_[1], options_, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_EQ(plan->top_objects, std::vector<Ent>{*repo_->Find("pkg/m.py::Shell.feature")});
  EXPECT_TRUE(plan->member_tops);
  EXPECT_EQ(repo_->IdSet(plan->extracted),
            (std::set<std::string>{"pkg/m.py::Shell.feature", "pkg/m.py::helper"}));

  options_.whole_classes = true;
  plan = PlanTask(*repo_, graph_, passing_, passing_[1], options_, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_EQ(plan->top_objects, std::vector<Ent>{*repo_->Find("pkg/m.py::Shell")});
  EXPECT_FALSE(plan->member_tops);
}

// A model weighing the named facts (unstandardised), choosing at p >= 0.5.
std::shared_ptr<const TopModel> ModelOf(const std::vector<std::pair<std::string, double>>& w) {
  std::string facts;
  for (const auto& [name, weight] : w) {
    facts += std::string(facts.empty() ? "" : ",") + "{\"name\":\"" + name +
             "\",\"mean\":0,\"scale\":1,\"weight\":" + std::to_string(weight) + "}";
  }
  auto m = ParseTopModel("{\"schema\":\"fbkit.top-model/1\",\"bias\":-1,\"threshold\":0.5,"
                         "\"facts\":[" + facts + "]}",
                         "test");
  EXPECT_TRUE(m.ok()) << m.error();
  return std::make_shared<const TopModel>(*m);
}

double Fact(const TopItem& item, const std::string& name) {
  const auto& names = TopFactNames();
  return item.facts[std::find(names.begin(), names.end(), name) - names.begin()];
}

TEST_F(PlanTest, EachCandidateAndReachedMethodIsAnItemWithItsFacts) {
  auto candidates = TopCandidates(*repo_, graph_, "tests/test_a.py", 5);
  auto items = TopItems(*repo_, graph_, "tests/test_a.py", candidates, options_);
  std::map<std::string, const TopItem*> by_id;
  for (const auto& it : items) by_id[repo_->id(it.entity)] = &it;
  ASSERT_TRUE(by_id.count("pkg/m.py::Shell"));
  ASSERT_TRUE(by_id.count("pkg/m.py::Shell.feature"));
  EXPECT_FALSE(by_id.count("pkg/m.py::Shell.used"));  // test_a's run never reaches it
  const TopItem& shell = *by_id["pkg/m.py::Shell"];
  const TopItem& feature = *by_id["pkg/m.py::Shell.feature"];
  EXPECT_FALSE(shell.member);
  EXPECT_TRUE(feature.member);
  EXPECT_EQ(Fact(shell, "class"), 1);
  EXPECT_EQ(Fact(feature, "method"), 1);
  EXPECT_EQ(Fact(feature, "called"), 1);
  EXPECT_EQ(Fact(feature, "rule_chosen"), 1);  // the specific rule takes it
  EXPECT_EQ(Fact(shell, "rule_chosen"), 0);    // but not the class whole
  EXPECT_EQ(Fact(shell, "named"), 1);
  EXPECT_EQ(Fact(shell, "spread_share"), 0.5);  // 2 of the 4 test files
  EXPECT_EQ(Fact(feature, "in_test_names"), 1);  // test_feature
  EXPECT_EQ(Fact(feature, "in_source"), 1);
}

TEST_F(PlanTest, TheLearnedChoiceFollowsItsModelAndSaysWhy) {
  options_.chooser = TopRule::kLearned;
  auto candidates = TopCandidates(*repo_, graph_, "tests/test_a.py", 5);
  options_.model = ModelOf({{"called", 3}, {"method", 1}});
  auto choices = ChooseTopObjects(*repo_, graph_, "tests/test_a.py", candidates, options_);
  ASSERT_FALSE(choices.empty());
  EXPECT_EQ(repo_->id(choices[0].entity), "pkg/m.py::Shell");
  EXPECT_TRUE(choices[0].chosen);
  EXPECT_EQ(choices[0].members, std::vector<Ent>{*repo_->Find("pkg/m.py::Shell.feature")});
  EXPECT_NE(choices[0].why.find("feature p 0.95: called +3.00"), std::string::npos)
      << choices[0].why;

  // Methods weighed down, classes up: the class whole.
  options_.model = ModelOf({{"class", 3}, {"method", -3}});
  choices = ChooseTopObjects(*repo_, graph_, "tests/test_a.py", candidates, options_);
  EXPECT_TRUE(choices[0].chosen);
  EXPECT_TRUE(choices[0].members.empty());

  // Nothing at the threshold: the best item all the same.
  options_.model = ModelOf({{"class", -5}, {"method", -2}});
  auto plan = PlanTask(*repo_, graph_, passing_, passing_[1], options_, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_FALSE(plan->top_objects.empty());
}

TEST_F(PlanTest, TheLearnedRetryTakesTheNextBestItemsInOrder) {
  options_.chooser = TopRule::kLearned;
  auto candidates = TopCandidates(*repo_, graph_, "tests/test_a.py", 5);
  options_.model = ModelOf({{"class", -5}, {"method", -2}});
  auto taken = [&](int more) {
    options_.learned_more = more;
    size_t n = 0;
    for (const auto& c : ChooseTopObjects(*repo_, graph_, "tests/test_a.py", candidates, options_)) {
      n += c.members.empty() ? (c.chosen ? 1 : 0) : c.members.size();
    }
    return n;
  };
  size_t items = TopItems(*repo_, graph_, "tests/test_a.py", candidates, options_).size();
  ASSERT_GE(items, 3u);
  // The best item only; then more, never fewer (a class taken whole and through a member
  // shows the member), never more than there are.
  EXPECT_EQ(taken(0), 1u);
  EXPECT_EQ(taken(1), 2u);
  size_t last = 0;
  for (int more : {0, 1, 2, 4, 8, 1000}) {
    EXPECT_GE(taken(more), last) << more;
    last = taken(more);
  }
  EXPECT_LE(last, items);

  // A class taken whole stays whole: its methods are passed over, never shrinking the cut.
  options_.model = ModelOf({{"class", 6}, {"method", -3}});
  for (int more : {0, 1, 2, 8}) {
    options_.learned_more = more;
    auto choices = ChooseTopObjects(*repo_, graph_, "tests/test_a.py", candidates, options_);
    for (const auto& c : choices) {
      if (repo_->id(c.entity) != "pkg/m.py::Shell") continue;
      EXPECT_TRUE(c.chosen) << more;
      EXPECT_TRUE(c.members.empty()) << more << ": " << c.why;
    }
  }
}

TEST(TopModelTest, BadModelsAreRefusedWithTheReason) {
  auto bad = [](const std::string& text) {
    auto m = ParseTopModel(text, "m.json");
    return m.ok() ? std::string("accepted") : m.error();
  };
  EXPECT_EQ(bad("[1]"), "m.json: not a JSON object");
  EXPECT_EQ(bad("{\"schema\":\"x\"}"), "m.json: schema is not fbkit.top-model/1");
  EXPECT_EQ(bad("{\"schema\":\"fbkit.top-model/1\",\"bias\":0,\"threshold\":0.5,\"facts\":"
                "[{\"name\":\"colour\",\"mean\":0,\"scale\":1,\"weight\":1}]}"),
            "m.json: unknown fact colour");
  EXPECT_EQ(bad("{\"schema\":\"fbkit.top-model/1\",\"bias\":0,\"threshold\":0.5,\"facts\":"
                "[{\"name\":\"called\",\"mean\":0,\"scale\":0,\"weight\":1}]}"),
            "m.json: fact called has scale <= 0");
  EXPECT_NE(bad("{\"schema\":\"fbkit.top-model/1\",\"facts\":[]}").find("m.json: "),
            std::string::npos);
}

TEST(TopModelTest, TheShippedModelParsesAndWeighsEveryFact) {
  const TopModel& m = DefaultTopModel();
  EXPECT_EQ(std::set<std::string>(m.facts.begin(), m.facts.end()),
            std::set<std::string>(TopFactNames().begin(), TopFactNames().end()));
  EXPECT_GT(m.threshold, 0);
  EXPECT_LT(m.threshold, 1);
}

TEST_F(PlanTest, TheF2PFilesXpassedTestsAreLeftOutOfTheTask) {
  PassingFile f2p = passing_[1];
  f2p.tests.push_back("tests/test_a.py::test_marked");
  f2p.xfail_marked = {"tests/test_a.py::test_marked"};
  auto plan = PlanTask(*repo_, graph_, passing_, f2p, options_, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_EQ(plan->f2p_tests, std::vector<std::string>{"tests/test_a.py::test_feature"});
  f2p.tests = f2p.xfail_marked;  // nothing left to score
  plan = PlanTask(*repo_, graph_, passing_, f2p, options_, nullptr);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error(), "tests/test_a.py has no test the harness can score");
}

TEST_F(PlanTest, P2PFilesBesideTheF2PFileComeFirstWhateverTheSeed) {
  options_.whole_classes = true;  // test_b.py uses Shell: test_c.py and other/test_d.py remain
  auto p2p_for = [&](uint64_t seed) {
    options_.seed = seed;
    auto plan = PlanTask(*repo_, graph_, passing_, passing_[1], options_, nullptr);
    EXPECT_TRUE(plan.ok()) << plan.error();
    return plan.ok() ? plan->p2p : std::vector<std::string>{};
  };
  for (uint64_t seed = 0; seed < 16; ++seed) {
    EXPECT_EQ(p2p_for(seed), std::vector<std::string>{"tests/test_c.py"}) << seed;
  }
  // --p2p-least-overlap orders by shared entities only: both share none with test_a.py, so
  // the seed decides, and some seed picks the file of the other directory.
  options_.least_overlap = true;
  std::set<std::string> picked;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    auto p2p = p2p_for(seed);
    picked.insert(p2p.begin(), p2p.end());
  }
  EXPECT_EQ(picked, (std::set<std::string>{"tests/other/test_d.py", "tests/test_c.py"}));
}

// As FeatureBench's min_p2p_files: fewer eligible files than --p2p make a task with those
// files; only fewer than --min-p2p leave no plan.
TEST_F(PlanTest, FewerEligibleFilesThanP2PAreAllTakenAndOnlyMinP2PRefuses) {
  options_.whole_classes = true;  // test_c.py and other/test_d.py use nothing of Shell
  options_.p2p = 5;
  auto plan = PlanTask(*repo_, graph_, passing_, passing_[1], options_, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_EQ(plan->p2p, (std::vector<std::string>{"tests/other/test_d.py", "tests/test_c.py"}));
  EXPECT_TRUE(plan->demoted.empty());

  options_.min_p2p = 3;
  plan = PlanTask(*repo_, graph_, passing_, passing_[1], options_, nullptr);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error(),
            "only 2 passing test files share no top-level object (--min-p2p 3)");
}

// By default the P2P runs alone decide what stays, as in FeatureBench; --keep-share keeps
// the helpers more than that share of the 4 test files reach.
TEST_F(PlanTest, HelpersStayForTheirSpreadOnlyWithKeepShare) {
  auto plan = PlanTask(*repo_, graph_, passing_, passing_[1], options_, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_EQ(plan->utility_limit, 0u);
  options_.keep_share = 0.5;
  plan = PlanTask(*repo_, graph_, passing_, passing_[1], options_, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_EQ(plan->utility_limit, 2u);
}

TEST_F(PlanTest, TheShareRuleLeavesTheSharedClassOut) {
  options_.chooser = TopRule::kShare;
  auto choices = ChooseTopObjects(*repo_, graph_, "tests/test_a.py",
                                  TopCandidates(*repo_, graph_, "tests/test_a.py"), options_);
  ASSERT_EQ(choices.size(), 1u);
  EXPECT_EQ(repo_->id(choices[0].entity), "pkg/m.py::Shell");
  EXPECT_FALSE(choices[0].chosen);
}

// A class a P2P file uses stays; its implementation of an abstract method of its base stays
// with it, even when only the F2P file calls it (without it the class is abstract).
TEST(AbstractTest, AnImplementationOfAnAbstractMethodStaysWithItsClass) {
  constexpr const char* kAbc =
      "import abc\n"               // 1
      "\n"                         // 2
      "\n"                         // 3
      "class Base(abc.ABC):\n"     // 4
      "    @abc.abstractmethod\n"  // 5
      "    def run(self):\n"       // 6
      "        ...\n"              // 7
      "\n"                         // 8
      "\n"                         // 9
      "class Impl(Base):\n"        // 10
      "    def run(self):\n"       // 11
      "        return 1\n"         // 12
      "\n"                         // 13
      "    def extra(self):\n"     // 14
      "        return 2\n"         // 15
      "\n"                         // 16
      "    def shared(self):\n"    // 17
      "        return 3\n";        // 18
  auto p = parser::PythonParser::Create();
  ASSERT_TRUE(p.ok());
  testing::FakeEnv env;
  env.AddFile("/r/pkg/a.py", kAbc);
  std::vector<parser::FileTable> tables;
  tables.push_back((*p)->Parse("pkg/a.py", "pkg.a", kAbc, true));
  auto repo = Repo::Load(env, "/r", std::move(tables));
  ASSERT_TRUE(repo.ok());
  using K = parser::EntityKind;
  std::vector<Node> nodes = {
      {"pkg/a.py::<module>", "pkg/a.py", "<module>", K::kModule, 1, 18, {}},
      {"pkg/a.py::Base", "pkg/a.py", "Base", K::kClass, 4, 7, {}},
      {"pkg/a.py::Base.run", "pkg/a.py", "Base.run", K::kMethod, 5, 7, {}},
      {"pkg/a.py::Impl", "pkg/a.py", "Impl", K::kClass, 10, 18, {}},
      {"pkg/a.py::Impl.run", "pkg/a.py", "Impl.run", K::kMethod, 11, 12, {kF2P}},
      {"pkg/a.py::Impl.extra", "pkg/a.py", "Impl.extra", K::kMethod, 14, 15, {kF2P}},
      {"pkg/a.py::Impl.shared", "pkg/a.py", "Impl.shared", K::kMethod, 17, 18, {kF2P, kP2P}},
  };
  std::vector<Edge> edges = {
      {0, 1, EdgeKind::kContains, 0, {}}, {0, 3, EdgeKind::kContains, 0, {}},
      {1, 2, EdgeKind::kContains, 0, {}}, {3, 1, EdgeKind::kInherits, 0, {}},
      {3, 4, EdgeKind::kContains, 0, {}}, {3, 5, EdgeKind::kContains, 0, {}},
      {3, 6, EdgeKind::kContains, 0, {}},
  };
  auto g = graph::DepGraph::FromParts(std::move(nodes), std::move(edges),
                                      {"tests/test_a.py", "tests/test_b.py"});
  Plan plan;
  plan.f2p = "tests/test_a.py";
  plan.cap = 3000;
  plan.top_objects = {*repo->Find("pkg/a.py::Impl")};
  plan.p2p = {"tests/test_b.py"};
  ASSERT_TRUE(Reextract(*repo, g, &plan).ok());
  EXPECT_EQ(repo->IdSet(plan.extracted), (std::set<std::string>{"pkg/a.py::Impl.extra"}));
  // No P2P file uses Impl: the class goes whole, its implementation with it.
  plan.p2p = {};
  ASSERT_TRUE(Reextract(*repo, g, &plan).ok());
  EXPECT_EQ(repo->IdSet(plan.extracted).count("pkg/a.py::Impl.run"), 1u);
}

}  // namespace
}  // namespace fbkit::extract::make

namespace fbkit::extract::make {
namespace {

// Ids that name the checkout's absolute path (parametrised with it) are left out: in another
// copy the same test has another id. The rest of the file still counts.
TEST(PassingFilesTest, TestsWhoseIdsNameTheCheckoutsPathAreLeftOut) {
  tracer::TraceSet trace;
  trace.root = "/tmp/optuna";
  tracer::FileTrace& f = trace.files["tests/test_log.py"];
  f.file = "tests/test_log.py";
  const std::string plain = "tests/test_log.py::test_plain";
  const std::string pathy = "tests/test_log.py::test_read[/tmp/optuna/tests/assets/a.log]";
  f.nodeids = {plain, pathy};
  for (const auto& id : f.nodeids) f.tests[id].outcome = runner::Outcome::kPassed;
  std::map<std::string, std::string> rejected;
  auto passing = PassingFiles(trace, &rejected);
  ASSERT_EQ(passing.size(), 1u);
  EXPECT_EQ(passing[0].tests, std::vector<std::string>{plain});
  EXPECT_EQ(passing[0].path_ids, 1u);
  // Only such tests: nothing can be graded.
  f.nodeids = {pathy};
  passing = PassingFiles(trace, &rejected);
  EXPECT_TRUE(passing.empty());
  EXPECT_EQ(rejected["tests/test_log.py"],
            "its tests' ids name the checkout's path (they differ in every copy)");
}

}  // namespace
}  // namespace fbkit::extract::make

namespace fbkit::extract::make {
namespace {

// The tables of `files` (path, source), each also a file of `env` under /r.
std::vector<parser::FileTable> ParseFiles(
    parser::PythonParser& parser, testing::FakeEnv& env,
    const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<parser::FileTable> tables;
  for (const auto& [path, text] : files) {
    env.AddFile("/r/" + path, text);
    std::string module = path.substr(0, path.size() - 3);
    std::replace(module.begin(), module.end(), '/', '.');
    if (module.ends_with(".__init__")) module.resize(module.size() - 9);
    tables.push_back(parser.Parse(path, module, text, true));
  }
  return tables;
}

// The static graph of `tables` with a trace of the one test file `test_file`: each call
// (caller id, callee id) made in its run, and both ends reached by it.
graph::DepGraph TracedGraph(const std::vector<parser::FileTable>& tables, const Repo& repo,
                            const std::vector<std::pair<std::string, std::string>>& calls,
                            const std::string& test_file) {
  graph::DepGraph built = graph::DepGraph::Build(tables, nullptr, nullptr);
  std::vector<Node> nodes = built.nodes();
  std::vector<Edge> edges = built.edges();
  for (const auto& [from, to] : calls) {
    Ent f = *repo.Find(from), t = *repo.Find(to);
    nodes[f].test_files = nodes[t].test_files = {0};
    edges.push_back({f, t, EdgeKind::kCall, 1, {0}});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return std::tie(a.from, a.to, a.kind) < std::tie(b.from, b.to, b.kind);
  });
  return graph::DepGraph::FromParts(nodes, edges, {test_file});
}

// What FeatureBench's masking never removes stays from the start, in the files whose module
// bodies the P2P runs ran (by the trace), and nowhere else.
TEST(ImportTimeKeptTest, NamesReadAtImportTimeExportsProtocolsAndOpenClassesStay) {
  const std::string m =
      "from .base import Base\n"
      "__all__ = ['exported']\n"
      "def register(name):\n"
      "    return lambda f: f\n"
      "class Local(Base):\n"
      "    def __len__(self):\n"
      "        return 0\n"
      "    def plain(self):\n"
      "        return 1\n"
      "    @property\n"
      "    def x(self):\n"
      "        return 2\n"
      "    @x.setter\n"
      "    def x(self, v):\n"
      "        pass\n"
      "class Own:\n"
      "    arity = 2\n"  // a name bound, not read
      "    def method(self, a=default_value()):\n"  // a method's defaults are read
      "        return 3\n"
      "class Listy(list):\n"
      "    def method(self):\n"
      "        return 4\n"
      "try:\n"
      "    ExceptionGroup\n"
      "except NameError:\n"  // never ran on this interpreter: its body did not run
      "    class ExceptionGroup(Exception):\n"
      "        def __init__(self, message):\n"
      "            pass\n"
      "class Typed(Generic[T]):\n"  // a subscripted base parametrises: not followed
      "    def method(self):\n"
      "        return 4\n"
      "def exported():\n"
      "    return 5\n"
      "def default_value():\n"
      "    return 6\n"
      "def arity():\n"
      "    return 2\n"
      "def registered():\n"
      "    return 7\n"
      "@register('free')\n"
      "def decorated():\n"
      "    return 8\n"
      "def free():\n"
      "    return 9\n"
      "HANDLERS = {'r': registered}\n"
      "class Api:\n"  // pyjwt's api_jws.py: an instance's methods bound at import time
      "    def decode(self):\n"
      "        return 10\n"
      "    def encode(self):\n"
      "        return 11\n"
      "_api = Api()\n"
      "decode = _api.decode\n";
  const std::string other = "__all__ = ['lonely']\ndef lonely():\n    return 1\n";
  auto p = parser::PythonParser::Create();
  ASSERT_TRUE(p.ok());
  testing::FakeEnv env;
  std::vector<std::pair<std::string, std::string>> files = {
      {"pkg/__init__.py", "from . import m\n"},
      {"pkg/base.py", "class Base:\n    pass\n"},
      {"pkg/m.py", m},
      {"pkg/other.py", other},
      {"tests/test_p.py", "import pkg\ndef test_p():\n    assert pkg\n"}};
  std::vector<parser::FileTable> tables = ParseFiles(**p, env, files);
  auto repo = Repo::Load(env, "/r", std::move(tables));
  ASSERT_TRUE(repo.ok()) << repo.error();
  // The trace: test_p.py's run imported the package and pkg/m.py and ran its class bodies
  // but ExceptionGroup's; pkg/other.py was never imported.
  graph::DepGraph built = graph::DepGraph::Build(repo->files(), nullptr, nullptr);
  std::vector<Node> nodes = built.nodes();
  for (auto& n : nodes) {
    bool module_ran = n.kind == parser::EntityKind::kModule && n.path != "pkg/other.py";
    bool class_ran = n.kind == parser::EntityKind::kClass && n.path == "pkg/m.py" &&
                     n.qualname != "ExceptionGroup";
    if (module_ran || class_ran) n.test_files = {0};
  }
  auto g = graph::DepGraph::FromParts(nodes, built.edges(), {"tests/test_p.py"});
  std::set<std::string> kept = repo->IdSet(ImportTimeKept(*repo, g, {"tests/test_p.py"}));
  std::set<std::string> in_m;
  for (const auto& id : kept) {
    EXPECT_TRUE(id.starts_with("pkg/m.py::")) << id << " is in a file P2P collection never imports";
    in_m.insert(id.substr(10));
  }
  EXPECT_EQ(in_m, (std::set<std::string>{"Api", "Api.decode", "Local.__len__", "Local.plain", "Local.x", "Local.x#2",
                                         "Listy.method", "default_value", "exported",
                                         "register", "registered"}));
  // No P2P file: nothing is kept.
  EXPECT_TRUE(ImportTimeKept(*repo, g, {}).empty());
}

// A module's `__dir__` is what `dir(module)` calls: a protocol hook, not a private name, so a
// test file that calls it tests it; a private helper it does not name is reached through it.
TEST(ChooseTopObjectsTest, AModulesDunderIsNoPrivateName) {
  auto p = parser::PythonParser::Create();
  ASSERT_TRUE(p.ok());
  testing::FakeEnv env;
  const std::vector<std::pair<std::string, std::string>> files = {
      {"pkg/__init__.py", ""},
      {"pkg/lazy.py", "def __dir__():\n    return _names()\n\n\ndef _names():\n    return ['x']\n"},
      {"tests/test_lazy.py",
       "import pkg.lazy as lazy\n\n\ndef test_dir():\n    assert dir(lazy) == ['x']\n"}};
  std::vector<parser::FileTable> tables = ParseFiles(**p, env, files);
  auto repo = Repo::Load(env, "/r", tables);
  ASSERT_TRUE(repo.ok()) << repo.error();
  // The trace: test_dir calls __dir__ (through dir()), which calls _names.
  auto g = TracedGraph(tables, *repo,
                       {{"tests/test_lazy.py::test_dir", "pkg/lazy.py::__dir__"},
                        {"pkg/lazy.py::__dir__", "pkg/lazy.py::_names"}},
                       "tests/test_lazy.py");
  SelectOptions options;
  auto candidates = TopCandidates(*repo, g, "tests/test_lazy.py", 5);
  auto choices = ChooseTopObjects(*repo, g, "tests/test_lazy.py", candidates, options);
  std::map<std::string, bool> chosen;
  for (const auto& c : choices) chosen[repo->id(c.entity)] = c.chosen;
  ASSERT_TRUE(chosen.count("pkg/lazy.py::__dir__"));
  EXPECT_TRUE(chosen["pkg/lazy.py::__dir__"]);
  EXPECT_FALSE(chosen["pkg/lazy.py::_names"]) << "reached through __dir__ only";
}

// FeatureBench's classifier takes nothing a package's __init__.py defines, as a top object or
// as a helper (neither top nor specific): it stays, and nothing is followed through it.
TEST(PackageInitTest, WhatAnInitDefinesIsNeverACandidateNorExtracted) {
  auto p = parser::PythonParser::Create();
  ASSERT_TRUE(p.ok());
  testing::FakeEnv env;
  const std::vector<std::pair<std::string, std::string>> files = {
      {"pkg/__init__.py",
       "def init_feature():\n    return _deeper()\n\n\ndef _deeper():\n    return 1\n\n\n"
       "def shared():\n    return 2\n"},
      {"pkg/m.py", "from pkg import shared\n\n\ndef feature():\n    return shared()\n"},
      {"tests/test_m.py",
       "from pkg import init_feature\nfrom pkg.m import feature\n\n\ndef test_feature():\n"
       "    assert feature() + init_feature() == 3\n"}};
  std::vector<parser::FileTable> tables = ParseFiles(**p, env, files);
  auto repo = Repo::Load(env, "/r", tables);
  ASSERT_TRUE(repo.ok()) << repo.error();
  auto g = TracedGraph(tables, *repo,
                       {{"tests/test_m.py::test_feature", "pkg/m.py::feature"},
                        {"tests/test_m.py::test_feature", "pkg/__init__.py::init_feature"},
                        {"pkg/__init__.py::init_feature", "pkg/__init__.py::_deeper"},
                        {"pkg/m.py::feature", "pkg/__init__.py::shared"}},
                       "tests/test_m.py");
  Ent feature = *repo->Find("pkg/m.py::feature");
  Ent init_feature = *repo->Find("pkg/__init__.py::init_feature");
  std::set<std::string> candidates;
  for (const auto& c : TopCandidates(*repo, g, "tests/test_m.py", 5)) {
    candidates.insert(repo->id(c.entity));
  }
  EXPECT_EQ(candidates, std::set<std::string>{"pkg/m.py::feature"});
  Plan plan;
  plan.f2p = "tests/test_m.py";
  plan.cap = 3000;
  plan.top_objects = {feature};
  ASSERT_TRUE(Reextract(*repo, g, &plan).ok());
  EXPECT_EQ(repo->IdSet(plan.extracted), std::set<std::string>{"pkg/m.py::feature"});
  // Handed one as a top object (a model's choice), nothing of it goes.
  plan.top_objects = {init_feature};
  EXPECT_FALSE(Reextract(*repo, g, &plan).ok());
  EXPECT_TRUE(plan.extracted.empty());
}

// A test file that links to nothing defined outside its package's __init__.py (cachetools'
// caches live there) weighs what the __init__.py defines, its module hooks aside, and such
// a feature is extracted with its helpers there; --no-init-tops keeps FeatureBench's rule.
TEST(PackageInitTest, AFileTestingOnlyWhatAnInitDefinesGetsItsCandidates) {
  auto p = parser::PythonParser::Create();
  ASSERT_TRUE(p.ok());
  testing::FakeEnv env;
  const std::vector<std::pair<std::string, std::string>> files = {
      {"pkg/__init__.py",
       "def init_feature():\n    return _deeper()\n\n\ndef _deeper():\n    return 1\n\n\n"
       "def __getattr__(name):\n    return name\n"},
      {"tests/test_m.py",
       "import pkg\nfrom pkg import init_feature\n\n\ndef test_feature():\n"
       "    assert init_feature() == 1 and pkg.lazy == 'lazy'\n"}};
  std::vector<parser::FileTable> tables = ParseFiles(**p, env, files);
  auto repo = Repo::Load(env, "/r", tables);
  ASSERT_TRUE(repo.ok()) << repo.error();
  auto g = TracedGraph(tables, *repo,
                       {{"tests/test_m.py::test_feature", "pkg/__init__.py::init_feature"},
                        {"tests/test_m.py::test_feature", "pkg/__init__.py::__getattr__"},
                        {"pkg/__init__.py::init_feature", "pkg/__init__.py::_deeper"}},
                       "tests/test_m.py");
  std::vector<std::pair<std::string, int>> candidates;  // the direct one, then one 2 calls deep
  for (const auto& c : TopCandidates(*repo, g, "tests/test_m.py", 5)) {
    candidates.emplace_back(repo->id(c.entity), c.depth);
  }
  EXPECT_EQ(candidates, (std::vector<std::pair<std::string, int>>{
                            {"pkg/__init__.py::init_feature", 1}, {"pkg/__init__.py::_deeper", 2}}));
  EXPECT_TRUE(TopCandidates(*repo, g, "tests/test_m.py", 5, false).empty());
  Plan plan;
  plan.f2p = "tests/test_m.py";
  plan.cap = 3000;
  plan.top_objects = {*repo->Find("pkg/__init__.py::init_feature")};
  plan.package_init = true;
  ASSERT_TRUE(Reextract(*repo, g, &plan).ok());
  EXPECT_EQ(repo->IdSet(plan.extracted),
            (std::set<std::string>{"pkg/__init__.py::_deeper", "pkg/__init__.py::init_feature"}));
}

}  // namespace
}  // namespace fbkit::extract::make

namespace fbkit::extract::make {
namespace {

// A top class whose constructor other test files use (more than two: how they build their
// inputs) stays as a shell: its methods go, its constructor stays; with fewer users the class
// goes whole.
TEST(ReextractTest, AClassOthersBuildStaysAsAShell) {
  auto p = parser::PythonParser::Create();
  ASSERT_TRUE(p.ok());
  testing::FakeEnv env;
  const std::string box =
      "class Box:\n    def __init__(self, v):\n        self.v = v\n\n"
      "    def feature(self):\n        return self.v + 1\n";
  std::vector<parser::FileTable> tables;
  tables.push_back((*p)->Parse("pkg/m.py", "pkg.m", box, true));
  env.AddFile("/r/pkg/m.py", box);
  auto repo = Repo::Load(env, "/r", tables);
  ASSERT_TRUE(repo.ok()) << repo.error();
  const std::vector<std::string> tests = {"tests/test_a.py", "tests/test_b.py", "tests/test_c.py",
                                          "tests/test_d.py"};
  auto plan_with_builders = [&](std::vector<uint32_t> init_reach) {
    graph::DepGraph built = graph::DepGraph::Build(tables, nullptr, nullptr);
    std::vector<Node> nodes = built.nodes();
    nodes[*repo->Find("pkg/m.py::Box.__init__")].test_files = init_reach;
    nodes[*repo->Find("pkg/m.py::Box.feature")].test_files = {0};
    auto g = graph::DepGraph::FromParts(nodes, built.edges(), tests);
    Plan plan;
    plan.f2p = "tests/test_a.py";
    plan.cap = 3000;
    plan.top_objects = {*repo->Find("pkg/m.py::Box")};
    plan.p2p = {"tests/test_b.py"};  // reaches nothing of Box
    EXPECT_TRUE(Reextract(*repo, g, &plan).ok());
    return repo->IdSet(plan.extracted);
  };
  EXPECT_EQ(plan_with_builders({0, 2, 3}), (std::set<std::string>{"pkg/m.py::Box.feature"}));
  EXPECT_EQ(plan_with_builders({0, 2}),
            (std::set<std::string>{"pkg/m.py::Box", "pkg/m.py::Box.__init__",
                                   "pkg/m.py::Box.feature"}));
}

}  // namespace
}  // namespace fbkit::extract::make

namespace fbkit::extract::make {
namespace {

// seaborn's marks: a test file builds a decorated dataclass of the module it is named after
// and hands it to the library, which runs its methods. The class is chosen though the tests
// run none of its code themselves; where it must stay (another class inherits it), its plain
// methods go alone (a decorator reads special methods, not these), and the problem statement
// shows those the library calls.
TEST(AppDrivenTest, AMarkOfTheTestedModuleIsChosenAndLosesItsMethodsAsAShell) {
  auto p = parser::PythonParser::Create();
  ASSERT_TRUE(p.ok());
  testing::FakeEnv env;
  const std::vector<std::pair<std::string, std::string>> files = {
      {"pkg/__init__.py", ""},
      {"pkg/marks.py",
       "from dataclasses import dataclass\n\n\ndef register(cls):\n    return cls\n\n\n"
       "@register\n@dataclass\nclass Path:\n    width: int = 1\n\n"
       "    def __post_init__(self):\n        self.width = int(self.width)\n\n"
       "    def _plot(self, ax):\n        return self._style(ax) + self.width\n\n"
       "    def _style(self, ax):\n        return ax\n\n\n"
       "@dataclass\nclass Line(Path):\n    pass\n"},
      {"pkg/plot.py",
       "class Plot:\n    def __init__(self, mark):\n        self.mark = mark\n\n"
       "    def plot(self):\n        return self.mark._plot(1)\n"},
      {"tests/test_marks.py",
       "from pkg.marks import Path\nfrom pkg.plot import Plot\n\n\ndef test_path():\n"
       "    assert Plot(Path()).plot() == 2\n"}};
  std::vector<parser::FileTable> tables = ParseFiles(**p, env, files);
  auto repo = Repo::Load(env, "/r", tables);
  ASSERT_TRUE(repo.ok()) << repo.error();
  auto g = TracedGraph(tables, *repo,
                       {{"tests/test_marks.py::test_path", "pkg/plot.py::Plot.__init__"},
                        {"tests/test_marks.py::test_path", "pkg/plot.py::Plot.plot"},
                        {"pkg/plot.py::Plot.plot", "pkg/marks.py::Path._plot"},
                        {"pkg/marks.py::Path._plot", "pkg/marks.py::Path._style"}},
                       "tests/test_marks.py");
  Ent path = *repo->Find("pkg/marks.py::Path");
  auto candidates = TopCandidates(*repo, g, "tests/test_marks.py", 5);
  SelectOptions options;
  bool chosen = false;
  for (const auto& c : ChooseTopObjects(*repo, g, "tests/test_marks.py", candidates, options)) {
    if (c.entity == path) chosen = c.chosen;
  }
  EXPECT_TRUE(chosen);
  Plan plan;
  plan.f2p = "tests/test_marks.py";
  plan.cap = 3000;
  plan.top_objects = {path};
  plan.kept = {path};  // Line inherits it
  ASSERT_TRUE(Reextract(*repo, g, &plan).ok());
  EXPECT_EQ(repo->IdSet(plan.extracted),
            (std::set<std::string>{"pkg/marks.py::Path._plot", "pkg/marks.py::Path._style"}));
  auto shown = Interfaces(*repo, g, "tests/test_marks.py", plan.top_objects, plan.extracted, 5);
  EXPECT_EQ(repo->IdSet(shown), std::set<std::string>{"pkg/marks.py::Path._plot"});
  // A method chosen as a top object is shown when it goes, however deep the library reaches
  // it (FeatureBench shows every top object it removes; a model may choose methods).
  Ent style = *repo->Find("pkg/marks.py::Path._style");
  shown = Interfaces(*repo, g, "tests/test_marks.py", {style}, {style}, 5);
  EXPECT_EQ(repo->IdSet(shown), std::set<std::string>{"pkg/marks.py::Path._style"});
}

}  // namespace
}  // namespace fbkit::extract::make

namespace fbkit::extract::make {
namespace {

// A graph whose traced calls each belong to one test file's run (index into `test_files`).
graph::DepGraph TracedFiles(const std::vector<parser::FileTable>& tables, const Repo& repo,
                            const std::vector<std::tuple<std::string, std::string, uint32_t>>&
                                calls,
                            const std::vector<std::string>& test_files) {
  graph::DepGraph built = graph::DepGraph::Build(tables, nullptr, nullptr);
  std::vector<Node> nodes = built.nodes();
  std::map<std::pair<Ent, Ent>, std::set<uint32_t>> runs;
  for (const auto& [from, to, file] : calls) {
    Ent f = *repo.Find(from), t = *repo.Find(to);
    runs[{f, t}].insert(file);
    for (Ent v : {f, t}) {
      auto& reach = nodes[v].test_files;
      if (std::find(reach.begin(), reach.end(), file) == reach.end()) reach.push_back(file);
      std::sort(reach.begin(), reach.end());
    }
  }
  std::vector<Edge> edges = built.edges();
  for (const auto& [pair, files] : runs) {
    edges.push_back({pair.first, pair.second, EdgeKind::kCall, 1, {files.begin(), files.end()}});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return std::tie(a.from, a.to, a.kind) < std::tie(b.from, b.to, b.kind);
  });
  return graph::DepGraph::FromParts(nodes, edges, test_files);
}

std::map<std::string, bool> Chosen(const Repo& repo, const graph::DepGraph& g,
                                   const std::string& f2p) {
  SelectOptions options;
  std::map<std::string, bool> out;
  for (const auto& c : ChooseTopObjects(repo, g, f2p, TopCandidates(repo, g, f2p, 5), options)) {
    out[repo.id(c.entity)] = c.chosen;
  }
  return out;
}

// sphinx's test_domain_c: the tests call the parser through helpers of their file (`parse`,
// and a `check` defined in a test): what the helpers call, the tests call. A fixture is
// called by pytest, not by the tests: what it builds is an input.
TEST(TestHelperTest, WhatTheFilesHelpersCallTheTestsCall) {
  auto p = parser::PythonParser::Create();
  ASSERT_TRUE(p.ok());
  testing::FakeEnv env;
  const std::vector<std::pair<std::string, std::string>> files = {
      {"pkg/__init__.py", ""},
      {"pkg/parser.py",
       "class Parser:\n    def __init__(self, s):\n        self.s = s\n\n"
       "    def parse(self):\n        return self.s\n"},
      {"pkg/app.py", "class App:\n    def __init__(self):\n        self.n = 1\n"},
      {"tests/test_parser.py",
       "import pytest\nfrom pkg.app import App\nfrom pkg.parser import Parser\n\n\n"
       "@pytest.fixture\ndef app():\n    return App()\n\n\n"
       "def parse(s):\n    return Parser(s).parse()\n\n\n"
       "def test_parse(app):\n    assert parse('x') == 'x'\n\n\n"
       "def test_nested(app):\n    def check(s):\n        return Parser(s).parse()\n\n"
       "    assert check('y') == 'y'\n"}};
  std::vector<parser::FileTable> tables = ParseFiles(**p, env, files);
  auto repo = Repo::Load(env, "/r", tables);
  ASSERT_TRUE(repo.ok()) << repo.error();
  const std::string t = "tests/test_parser.py";
  auto g = TracedFiles(tables, *repo,
                       {{t + "::test_parse", t + "::parse", 0},
                        {t + "::parse", "pkg/parser.py::Parser.__init__", 0},
                        {t + "::parse", "pkg/parser.py::Parser.parse", 0},
                        {t + "::test_nested", t + "::test_nested.check", 0},
                        {t + "::test_nested.check", "pkg/parser.py::Parser.parse", 0},
                        {t + "::app", "pkg/app.py::App.__init__", 0}},
                       {t});
  auto chosen = Chosen(*repo, g, t);
  ASSERT_TRUE(chosen.count("pkg/parser.py::Parser"));
  EXPECT_TRUE(chosen["pkg/parser.py::Parser"]);
  ASSERT_TRUE(chosen.count("pkg/app.py::App"));
  EXPECT_FALSE(chosen["pkg/app.py::App"]) << "built by a fixture";
}

// The library's test support (a `testing` / `_testing` module or package) is no feature of a
// test file that only uses it; it is of one inside that package or named after it.
TEST(TestSupportTest, TestingModulesAreNoFeatureOfTheFilesThatUseThem) {
  EXPECT_TRUE(IsTestSupport("sphinx/testing/util.py", "tests/test_ext_math.py"));
  EXPECT_TRUE(IsTestSupport("seaborn/_testing.py", "tests/test_distributions.py"));
  EXPECT_TRUE(IsTestSupport("src/pkg/testing/a/b.py", "tests/test_b.py"));
  EXPECT_FALSE(IsTestSupport("sympy/testing/runtests_pytest.py",
                             "sympy/testing/tests/test_runtests_pytest.py"));
  EXPECT_FALSE(IsTestSupport("seaborn/_testing.py", "tests/test_testing.py"));
  EXPECT_FALSE(IsTestSupport("xarray/testing/assertions.py", "xarray/tests/test_testing.py"));
  EXPECT_FALSE(IsTestSupport("pkg/testing_tools.py", "tests/test_b.py"));
  EXPECT_FALSE(IsTestSupport("pkg/core.py", "tests/test_b.py"));
  EXPECT_FALSE(IsTestSupport("pkg/testingx/core.py", "tests/test_b.py"));
}

// A file whose tests check the feature with the library's own assertion helper: the
// helper, which its tests call directly and no other file's do, is not chosen; a class of
// the testing module that the tests exercise (click.testing's stream wrappers) is.
TEST(TestSupportTest, AnAssertionHelperOfTheLibraryIsNoTopObject) {
  auto p = parser::PythonParser::Create();
  ASSERT_TRUE(p.ok());
  testing::FakeEnv env;
  const std::vector<std::pair<std::string, std::string>> files = {
      {"pkg/__init__.py", ""},
      {"pkg/core.py", "def area(w, h):\n    return w * h\n"},
      {"pkg/testing.py",
       "def assert_close(a, b):\n    assert abs(a - b) < 1e-9\n\n\n"
       "class Capture:\n    def text(self):\n        return ''\n"},
      {"tests/test_core.py",
       "from pkg.core import area\nfrom pkg.testing import Capture, assert_close\n\n\n"
       "def test_area():\n    assert_close(area(2, 3), 6)\n\n\n"
       "def test_capture():\n    assert Capture().text() == ''\n"},
      {"tests/test_other.py", "def test_nothing():\n    assert True\n"}};
  std::vector<parser::FileTable> tables = ParseFiles(**p, env, files);
  auto repo = Repo::Load(env, "/r", tables);
  ASSERT_TRUE(repo.ok()) << repo.error();
  const std::string t = "tests/test_core.py";
  auto g = TracedFiles(tables, *repo,
                       {{t + "::test_area", "pkg/core.py::area", 0},
                        {t + "::test_area", "pkg/testing.py::assert_close", 0},
                        {t + "::test_capture", "pkg/testing.py::Capture.text", 0}},
                       {t, "tests/test_other.py"});
  auto chosen = Chosen(*repo, g, t);
  ASSERT_TRUE(chosen.count("pkg/core.py::area"));
  EXPECT_TRUE(chosen["pkg/core.py::area"]);
  ASSERT_TRUE(chosen.count("pkg/testing.py::assert_close"));
  EXPECT_FALSE(chosen["pkg/testing.py::assert_close"]);
  ASSERT_TRUE(chosen.count("pkg/testing.py::Capture"));
  EXPECT_TRUE(chosen["pkg/testing.py::Capture"]);
}

// A function only this file's tests call directly is chosen however many files reach it,
// unless more than half of them do: then every test runs it (sphinx's
// `compile_linkcheck_allowed_redirects`, connected to every build). One other files' tests
// call too, but this file most, is still tested here.
TEST(TestHelperTest, AFunctionMostOfTheSuiteRunsIsNoTopObject) {
  auto p = parser::PythonParser::Create();
  ASSERT_TRUE(p.ok());
  testing::FakeEnv env;
  const std::vector<std::pair<std::string, std::string>> files = {
      {"pkg/__init__.py", ""},
      {"pkg/app.py",
       "def hook(c):\n    return c\n\n\ndef make_id(s):\n    return s\n\n\n"
       "def build():\n    return hook(1) + make_id(2) + say(3)\n\n\n"
       "def say(x):\n    return x\n\n\n"
       "def __getattr__(name):\n    raise AttributeError(name)\n"}};
  std::vector<std::string> tests;
  std::vector<std::pair<std::string, std::string>> all = files;
  for (int i = 0; i < 5; ++i) {
    tests.push_back("tests/test_" + std::to_string(i) + ".py");
    all.push_back({tests.back(), "from pkg import app\n"
                                 "from pkg.app import build, hook, make_id\n\n\n"
                                 "def test_it():\n"
                                 "    assert build() and hook(1) and make_id(2)\n\n\n"
                                 "def test_more():\n    assert say(1)\n"});
  }
  std::vector<parser::FileTable> tables = ParseFiles(**p, env, all);
  auto repo = Repo::Load(env, "/r", tables);
  ASSERT_TRUE(repo.ok()) << repo.error();
  std::vector<std::tuple<std::string, std::string, uint32_t>> calls = {
      {tests[0] + "::test_it", "pkg/app.py::hook", 0},
      {tests[0] + "::test_it", "pkg/app.py::make_id", 0},
      {tests[0] + "::test_it", "pkg/app.py::__getattr__", 0},
      {tests[0] + "::test_it", "pkg/app.py::say", 0},
      {tests[0] + "::test_more", "pkg/app.py::say", 0},
      {tests[1] + "::test_more", "pkg/app.py::say", 1}};
  for (uint32_t i = 1; i < 5; ++i) {
    // Python probes the module for names wherever it is imported.
    calls.push_back({tests[i] + "::<module>", "pkg/app.py::__getattr__", i});
    calls.push_back({tests[i] + "::test_it", "pkg/app.py::build", i});
    calls.push_back({"pkg/app.py::build", "pkg/app.py::hook", i});
    if (i == 1) calls.push_back({"pkg/app.py::build", "pkg/app.py::make_id", i});
    calls.push_back({"pkg/app.py::build", "pkg/app.py::say", i});
  }
  auto g = TracedFiles(tables, *repo, calls, tests);
  auto chosen = Chosen(*repo, g, tests[0]);
  EXPECT_TRUE(chosen["pkg/app.py::make_id"]) << "2 of 5 files reach it";
  ASSERT_TRUE(chosen.count("pkg/app.py::hook"));
  EXPECT_FALSE(chosen["pkg/app.py::hook"]) << "all 5 files reach it";
  EXPECT_TRUE(chosen["pkg/app.py::__getattr__"]) << "a protocol hook: its reach says nothing";
  // Other files' tests call it too, this file most (click's `echo` in test_echo.py).
  EXPECT_TRUE(chosen["pkg/app.py::say"]) << "tested here though every file runs it";
}

// sphinx's test_ext_math: the `app` fixture builds the application every file uses, and one
// test calls a method of it that no other file reaches (`set_html_assets_policy`). The file
// neither names the class nor calls it, but it calls that method: the class is chosen
// through it.
TEST(TestHelperTest, AMethodOfAFixturesObjectOnlyThisFileCallsIsChosen) {
  auto p = parser::PythonParser::Create();
  ASSERT_TRUE(p.ok());
  testing::FakeEnv env;
  std::vector<std::pair<std::string, std::string>> files = {
      {"pkg/__init__.py", ""},
      {"pkg/app.py",
       "class App:\n    def build(self):\n        return 1\n\n"
       "    def set_policy(self, p):\n        self.p = p\n"},
      {"pkg/runner.py", "def run(app):\n    return app.build()\n"}};
  std::vector<std::string> tests;
  for (int i = 0; i < 5; ++i) {
    tests.push_back("tests/test_" + std::to_string(i) + ".py");
    files.push_back({tests.back(), "from pkg.runner import run\n\n\n"
                                   "def test_it(app):\n    app.set_policy(1)\n    run(app)\n"});
  }
  std::vector<parser::FileTable> tables = ParseFiles(**p, env, files);
  auto repo = Repo::Load(env, "/r", tables);
  ASSERT_TRUE(repo.ok()) << repo.error();
  std::vector<std::tuple<std::string, std::string, uint32_t>> calls = {
      {tests[0] + "::test_it", "pkg/app.py::App.set_policy", 0}};
  for (uint32_t i = 0; i < 5; ++i) {
    calls.push_back({tests[i] + "::test_it", "pkg/runner.py::run", i});
    calls.push_back({"pkg/runner.py::run", "pkg/app.py::App.build", i});
  }
  auto g = TracedFiles(tables, *repo, calls, tests);
  auto chosen = Chosen(*repo, g, tests[0]);
  ASSERT_TRUE(chosen.count("pkg/app.py::App"));
  EXPECT_TRUE(chosen["pkg/app.py::App"]);
  // The retry that takes such classes whole (their methods left too few lines) keeps this
  // one to its method: every file builds it.
  std::vector<PassingFile> passing;
  for (const auto& t : tests) passing.push_back({t, {t + "::test_it"}});
  SelectOptions whole;
  whole.whole_classes = true;
  auto plan = PlanTask(*repo, g, passing, passing[0], whole, nullptr);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_EQ(repo->IdSet(std::set<Ent>(plan->top_objects.begin(), plan->top_objects.end())),
            std::set<std::string>{"pkg/app.py::App.set_policy"});
}

// A test marked xfail (xpassed or xfailed) is a passing test of its file, yet no F2P point:
// the harness counts an F2P test as passing only when it passed.
TEST(PassingFilesTest, ATestMarkedXfailPassesButIsNoF2PTest) {
  tracer::TraceSet trace;
  tracer::FileTrace& f = trace.files["tests/test_x.py"];
  f.file = "tests/test_x.py";
  const std::string plain = "tests/test_x.py::test_plain";
  const std::string xpass = "tests/test_x.py::test_xpass";
  const std::string xfail = "tests/test_x.py::test_xfail";
  f.nodeids = {plain, xpass, xfail};
  f.tests[plain].outcome = runner::Outcome::kPassed;
  f.tests[xpass].outcome = runner::Outcome::kXpassed;
  f.tests[xfail].outcome = runner::Outcome::kXfailed;
  std::map<std::string, std::string> rejected;
  auto passing = PassingFiles(trace, &rejected);
  ASSERT_EQ(passing.size(), 1u);
  EXPECT_EQ(passing[0].tests, (std::vector<std::string>{plain, xpass, xfail}));
  EXPECT_EQ(passing[0].xfail_marked, (std::vector<std::string>{xpass, xfail}));
}

}  // namespace
}  // namespace fbkit::extract::make

// Mining's rules (a commit's intent, the issues it names and closes) and mining itself over a
// history without pull requests (fixtures/race_mine/make_commits.sh, built per test with real
// git): commits that close an issue, --commits ranges and lists, their funnels and errors.
#include "groundtruth/mine.h"

#include <gtest/gtest.h>

#include <memory>

#include "parser/python_parser.h"
#include "sandbox/process.h"
#include "tests/testing/run.h"
#include "util/env.h"
#include "util/strings.h"

namespace fbkit::groundtruth {
namespace {

using testing::ReadFileOrDie;
using testing::RunCommand;
using testing::ScratchDir;

TEST(MineRules, IntentByRule) {
  std::string why;
  EXPECT_EQ(IntentByRule("feat(core): stream rows", {}, &why), "new feature");
  EXPECT_EQ(why, "conventional prefix \"feat:\"");
  EXPECT_EQ(IntentByRule("Fix crash when adding rows", {}, &why), "bug fix") << "fix before add";
  EXPECT_EQ(IntentByRule("Add support for tabs", {}, &why), "new feature");
  EXPECT_EQ(IntentByRule("Refactor the parser", {"p.py::New"}, &why), "refactor");
  EXPECT_EQ(IntentByRule("Streaming rows", {"p.py::stream"}, &why), "new feature");
  EXPECT_EQ(why, "adds public p.py::stream");
  EXPECT_EQ(IntentByRule("Streaming rows", {}, &why), "other");
}

TEST(MineRules, IssueNumbers) {
  EXPECT_EQ(IssueNumbers("Fixes #12, closes #7 (#30)\nsee https://github.com/o/r/issues/9", 30),
            (std::vector<int>{7, 9, 12}));
  EXPECT_TRUE(IssueNumbers("color: &#35; a#1", 0).empty()) << "no reference inside words";
}

TEST(MineRules, ClosingIssueTakesGithubKeywordsOnly) {
  EXPECT_EQ(ClosingIssue("Fix #357: Add cache_info() support").number, 357);
  for (const char* kw : {"close", "Closes", "CLOSED", "fix", "Fixes", "fixed", "resolve",
                         "Resolves", "resolved"}) {
    EXPECT_EQ(ClosingIssue(std::string("Tidy up\n\n") + kw + " #12").number, 12) << kw;
  }
  EXPECT_EQ(ClosingIssue("closes: #7").number, 7) << "GitHub allows a colon";
  EXPECT_EQ(ClosingIssue("see #9, then fixes #4").number, 4) << "the first closing one";
  auto ref = ClosingIssue("Add x (fixes #21)");
  EXPECT_EQ(ref.begin, 7u);
  EXPECT_EQ(ref.end, 16u);
  for (const char* no : {"see #9", "Fix#3", "prefix #3", "bugfix #3", "fixes #3abc", "fixing #3",
                         "fixes #0", "fixes o/r#3", "fixes # 3", "fixes #1234567890"}) {
    EXPECT_EQ(ClosingIssue(no).number, 0) << no;
  }
}

TEST(MineRules, TitleWithoutClosing) {
  EXPECT_EQ(TitleWithoutClosing("Fix #357: Add cache_info() support for @cachedmethod."),
            "Add cache_info() support for @cachedmethod.");
  EXPECT_EQ(TitleWithoutClosing("Add x (fixes #21)"), "Add x");
  EXPECT_EQ(TitleWithoutClosing("Add x, closes #2"), "Add x");
  EXPECT_EQ(TitleWithoutClosing("Fixes #12 crash on empty input"), "crash on empty input");
  EXPECT_EQ(TitleWithoutClosing("Fixed #10"), "Fixed #10") << "nothing else left";
  EXPECT_EQ(TitleWithoutClosing("Stack.size (see #9)"), "Stack.size (see #9)");
}

// The make_commits.sh history, built once per test, and Mine over it.
class MineHistory : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = RunCommand({std::string(FBKIT_SOURCE_DIR) + "/fixtures/race_mine/make_commits.sh",
                            dir_.path()});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    for (const auto& h : util::Split(ReadFileOrDie(dir_ / "commits"), '\n')) {
      if (!h.empty()) first_parent_.push_back(h);
    }
    ASSERT_EQ(first_parent_.size(), 7u);
    drain_ = util::Trim(ReadFileOrDie(dir_ / "drain"));
    auto parser = parser::PythonParser::Create();
    ASSERT_TRUE(parser.ok()) << parser.error();
    parser_ = std::move(*parser);
  }

  util::Expected<MineResult> Run(MineOptions o) {
    o.repo_name = "acme/stack";
    return Mine(util::RealEnv(), sandbox::RealLauncher(), *parser_, dir_ / "repo", o,
                dir_ / "work");
  }

  // The first-parent commit `i` places from the newest.
  const std::string& Commit(size_t i) const { return first_parent_[i]; }

  static std::vector<int> Counts(const MineReport& r) {
    std::vector<int> out;
    for (const auto& s : r.stages) out.push_back(s.count);
    return out;
  }

  static std::vector<std::string> Ids(const MineResult& r) {
    std::vector<std::string> out;
    for (const auto& p : r.prs) out.push_back(p.instance_id);
    return out;
  }

  ScratchDir dir_;
  std::vector<std::string> first_parent_;
  std::string drain_;
  std::unique_ptr<parser::PythonParser> parser_;
};

TEST_F(MineHistory, ACommitClosingAnIssueIsACandidateAndAPrNumberWins) {
  auto r = Run({});
  ASSERT_TRUE(r.ok()) << r.error();
  const std::string fix3 = Commit(5);
  EXPECT_EQ(Ids(*r),
            (std::vector<std::string>{"acme__stack-7", "acme__stack-" + fix3.substr(0, 12)}));
  EXPECT_EQ(Counts(r->report), (std::vector<int>{7, 4, 3, 2, 2}));
  EXPECT_EQ(r->report.stages[1].name,
            "pull requests (merge #N or squash (#N)) or commits closing an issue");
  EXPECT_EQ(r->report.dropped["merge without a PR number"], 1);
  EXPECT_EQ(r->report.dropped["no PR number or closing issue reference"], 2)
      << "the root and 'Stack.size (see #9)'";
  EXPECT_EQ(r->report.dropped["no test file changed"], 1) << "'Fixed #10' changes README.md";
  EXPECT_EQ(r->report.dropped["intent: bug fix"], 1) << "'Resolve crash', closing #5 in its body";
  const auto& squash = r->prs[0];
  EXPECT_EQ(squash.kind, "squash");
  EXPECT_EQ(squash.pr, 7);
  EXPECT_EQ(squash.issues, (std::vector<int>{6}));
  const auto& issue = r->prs[1];
  EXPECT_EQ(issue.kind, "issue");
  EXPECT_EQ(issue.pr, 0);
  EXPECT_EQ(issue.commit, fix3);
  EXPECT_EQ(issue.base, Commit(6));
  EXPECT_EQ(issue.issues, (std::vector<int>{3}));
  EXPECT_EQ(issue.title, "Add Stack.peek support");
  EXPECT_EQ(issue.intent_reason, "title word \"add\"") << "the keyword 'Fix' is no bug word here";
  EXPECT_EQ(issue.source_files, (std::vector<std::string>{"stack/core.py"}));
  EXPECT_EQ(issue.test_files, (std::vector<std::string>{"tests/test_core.py"}));
  EXPECT_NE(issue.patch.find("+    def peek(self):"), std::string::npos);
  EXPECT_NE(issue.test_patch.find("+def test_peek():"), std::string::npos);
  auto jsonl = MinedJsonl(r->prs, "/r");
  EXPECT_NE(jsonl.find("\"kind\":\"issue\""), std::string::npos);
  EXPECT_NE(jsonl.find("\"pull_number\":null"), std::string::npos);
  EXPECT_NE(jsonl.find("\"pull_number\":7"), std::string::npos);
}

TEST_F(MineHistory, RequireIssueKeepsIssueCommits) {
  MineOptions o;
  o.require_issue = true;
  o.intents.clear();
  auto r = Run(o);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(Ids(*r).size(), 3u) << "#7 (issue 6), 'Resolve crash' (#5), 'Fix #3'";
  EXPECT_EQ(Counts(r->report), (std::vector<int>{7, 4, 3, 3, 3, 3}));
}

TEST_F(MineHistory, ARangeMinesEveryNonMergeCommitWhateverItsSubject) {
  MineOptions o;
  o.commits = {Commit(6) + ".."};
  auto r = Run(o);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->report.stages[0].name, "commits (--commits)");
  EXPECT_EQ(Counts(r->report), (std::vector<int>{7, 6, 5, 4, 4}))
      << "merge dropped, 'Fixed #10' changes no test, 'Resolve crash' is a bug fix";
  EXPECT_EQ(r->report.dropped["merge commit (--commits takes single commits)"], 1);
  std::vector<std::string> kinds;
  for (const auto& p : r->prs) kinds.push_back(p.kind + " " + p.title);
  EXPECT_EQ(kinds, (std::vector<std::string>{"issue Add Stack.drain", "squash Add Stack.clear",
                                             "commit Stack.size (see #9)",
                                             "issue Add Stack.peek support"}));
  EXPECT_EQ(r->prs[0].commit, drain_) << "a branch's commit is in the range too";
  EXPECT_EQ(r->prs[0].instance_id, "acme__stack-" + drain_.substr(0, 12));
  EXPECT_EQ(r->prs[2].intent_reason, "adds public stack/core.py::Stack.size");
  EXPECT_EQ(r->prs[2].issues, (std::vector<int>{9}));
}

TEST_F(MineHistory, AListKeepsItsOrderOnceAndStillDropsMerges) {
  MineOptions o;
  o.intents.clear();
  o.commits = {Commit(5), Commit(3), Commit(5).substr(0, 8), Commit(0), Commit(6)};
  auto r = Run(o);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(Counts(r->report), (std::vector<int>{4, 3, 2, 2, 2})) << "a prefix of fix #3 is fix #3";
  EXPECT_EQ(r->report.dropped["merge commit (--commits takes single commits)"], 1);
  EXPECT_EQ(r->report.dropped["root commit"], 1);
  ASSERT_EQ(r->prs.size(), 2u);
  EXPECT_EQ(r->prs[0].commit, Commit(5));
  EXPECT_EQ(r->prs[1].commit, Commit(3));
  EXPECT_EQ(r->prs[1].kind, "commit");
}

TEST_F(MineHistory, BadCommitsNameTheOptionAndTheValue) {
  auto error = [&](std::vector<std::string> commits) {
    MineOptions o;
    o.commits = std::move(commits);
    auto r = Run(o);
    return r.ok() ? std::string("(mined)") : r.error();
  };
  EXPECT_EQ(error({"nope"}), "--commits nope: unknown revision 'nope'");
  EXPECT_EQ(error({"HEAD..nope"}), "--commits HEAD..nope: unknown revision 'nope'");
  EXPECT_EQ(error({"HEAD~1..HEAD~1"}), "--commits HEAD~1..HEAD~1: the range holds no commit");
  EXPECT_EQ(error({"HEAD~2...HEAD"}),
            "--commits HEAD~2...HEAD: a symmetric difference (A...B); give A..B");
  EXPECT_EQ(error({"HEAD", ""}), "--commits: an empty value");
  EXPECT_EQ(error({"--output=x"}), "--commits --output=x: '--output=x' is no revision");
}

}  // namespace
}  // namespace fbkit::groundtruth

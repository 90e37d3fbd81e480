// Candidate feature changes from a repository's local history (RACE-bench's collection and
// attribute filter, without GitHub). Two ways to pick candidates (stage 1):
//   the default walks the first-parent history of `ref` newest first: merge commits "Merge
//     pull request #N ..." and commits (merge or squash) whose subject ends in "(#N)" are
//     pull requests; titles "Merge ..." (a branch merged through a PR: many PRs at once) are
//     dropped; a non-merge commit without a PR number whose subject or body closes an issue
//     with one of GitHub's keywords ("Fix #357: ...", "Closes #7") is a candidate too;
//   `commits` (--commits) names ranges "A..B" and single revisions: every non-merge commit
//     they name is a candidate whatever its subject (merges are dropped).
// A candidate's change is the diff against its first parent; a PR number wins over an issue
// reference. Then, for both:
//   stage 2 (tests and source): the change touches a test file (IsTestPath) and a non-test,
//     non-documentation Python file;
//   with require_issue, a stage (issue): the messages refer to an issue (IssueNumbers);
//   stage 3 (intent): the intent is one of the kept intents (default "new feature").
// Intent by rule (IntentByRule) or by --llm-cmd (fbkit.llm-mine/1):
//   {"schema", "task": "classify_intent", "title", "body", "files"} -> {"intent": one of
//   Intents()}.
// Every kept candidate becomes an instance fb-race validate/gt read unchanged: base = first
// parent, `patch` = the non-test files' diff, `test_patch` = the test files' diff, the problem
// statement from the messages; the PR number, issue numbers, intent and its reason recorded.
// Instance ids: owner__name-N for a PR (N its number), owner__name-<the commit's first 12 hex
// digits> for a single commit (several commits may close one issue).
#pragma once

#include <map>
#include <string_view>
#include <string>
#include <vector>

#include "parser/python_parser.h"
#include "runner/git.h"
#include "model/model.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::groundtruth {

// "new feature", "bug fix", "refactor", "docs", "other".
const std::vector<std::string>& Intents();

struct MineOptions {
  std::string since, until;  // git dates (e.g. 2023-01-01), empty: unbounded
  int last = 0;              // only the newest N first-parent commits (0: all)
  int max = 0;               // stop after N kept PRs (0: no limit)
  std::vector<std::string> intents = {"new feature"};  // empty: every intent
  bool require_issue = false;  // keep only PRs whose messages refer to an issue
  model::Model* model = nullptr;  // intent by model when set (not owned)
  std::string repo_name;  // "owner/name" for instance ids ("local/dir" when unknown)
  std::string ref = "HEAD";
  // --commits: ranges "A..B" (an empty side is HEAD) and single revisions; when not empty,
  // the commits they name (each once, in the order given, a range newest first) replace the
  // first-parent walk, and ref, last, since and until are not used.
  std::vector<std::string> commits;
};

struct MinedPr {
  std::string instance_id;
  // kind: merge or squash (a PR), issue (a single commit closing an issue), commit (a single
  // commit --commits named that is neither)
  std::string commit, base, kind;
  std::string date;  // committer date, ISO 8601
  int pr = 0;        // 0: no PR
  std::vector<int> issues;  // numbers in "fixes #N", "#N", .../issues/N (not the PR's own)
  std::string title, body, problem_statement;
  std::vector<std::string> source_files, test_files, other_files;
  std::vector<std::string> new_public;  // public functions/classes the change adds
  std::string intent, intent_source, intent_reason;
  std::string patch, test_patch;
};

struct MineStage {
  std::string name;
  int count = 0;
};

struct MineReport {
  std::string repository;
  std::vector<MineStage> stages;       // in funnel order
  std::map<std::string, int> intents;  // intent -> PRs (stage 2 survivors)
  std::map<std::string, int> dropped;  // reason -> commits
  std::vector<std::string> warnings;   // e.g. an --llm-cmd answer that was not understood
};

struct MineResult {
  std::vector<MinedPr> prs;
  MineReport report;
};

// The intent of a PR from its title words (conventional-commit prefixes first, then fix,
// feature, refactor and docs words) and, when the title says nothing, from `new_public`
// (a new public function or class: new feature). `reason` says which rule decided.
std::string IntentByRule(const std::string& title, const std::vector<std::string>& new_public,
                         std::string* reason);

// Issue numbers a message refers to (sorted, unique, `pr` left out).
std::vector<int> IssueNumbers(const std::string& text, int pr);

// An issue a message closes the way GitHub reads it: one of close, closes, closed, fix, fixes,
// fixed, resolve, resolves, resolved (any case, a whole word), then blanks or a colon, then
// "#N" ("Fix #357: ...", "Closes: #7"); the first one, number 0 when none. [begin, end) spans
// the keyword to the last digit.
struct IssueReference {
  int number = 0;
  size_t begin = 0, end = 0;
};
IssueReference ClosingIssue(std::string_view text);

// A commit's subject without its closing reference, as a PR's title is without its "(#N)":
// "Fix #357: Add cache_info() support" -> "Add cache_info() support", "Add x (fixes #2)" ->
// "Add x"; the subject itself when nothing else is left or it closes no issue.
std::string TitleWithoutClosing(const std::string& subject);

// Mines `repo` (only read). `work_dir` is scratch; `progress` (may be null) gets a line now
// and then. A candidate whose commits git cannot diff or show is dropped with a warning; only
// an unreadable history is an error, and with `commits` a revision git does not know, a range
// that holds no commit, or an empty value (each error names --commits and the value).
util::Expected<MineResult> Mine(util::Env& env, sandbox::Launcher& launcher,
                                parser::PythonParser& parser, const std::string& repo,
                                const MineOptions& options, const std::string& work_dir,
                                void (*progress)(const std::string&) = nullptr);

// One instance per line (keys sorted): the fields fb-race reads plus the mining record.
std::string MinedJsonl(const std::vector<MinedPr>& prs, const std::string& repo);
// fbkit.race-mine/1: the funnel, intents and drop reasons (keys sorted).
std::string MineReportJson(const MineReport& report);
// The funnel as text lines for stderr.
std::string MineReportText(const MineReport& report);

}  // namespace fbkit::groundtruth

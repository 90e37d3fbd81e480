// Candidate feature PRs from a repository's local history (RACE-bench's collection and
// attribute filter, without GitHub): the first-parent history is walked newest first and
//   stage 1 (pull requests): merge commits "Merge pull request #N ..." and commits (merge or
//     squash) whose subject ends in "(#N)"; the PR is the change against the first parent;
//     titles "Merge ..." (a branch merged through a PR: many PRs at once) are dropped;
//   stage 2 (tests and source): the change touches a test file (IsTestPath) and a non-test,
//     non-documentation Python file;
//   with require_issue, a stage (issue): the messages refer to an issue (IssueNumbers);
//   stage 3 (intent): the intent is one of the kept intents (default "new feature").
// Intent by rule (IntentByRule) or by --llm-cmd (fbkit.llm-mine/1):
//   {"schema", "task": "classify_intent", "title", "body", "files"} -> {"intent": one of
//   Intents()}.
// Every kept PR becomes an instance fb-race validate/gt read unchanged: base = first parent,
// `patch` = the non-test files' diff, `test_patch` = the test files' diff, the problem
// statement from the messages; the PR number, issue numbers, intent and its reason recorded.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "parser/python_parser.h"
#include "runner/git.h"
#include "runner/model.h"
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
  runner::Model* model = nullptr;  // intent by model when set (not owned)
  std::string repo_name;  // "owner/name" for instance ids ("local/dir" when unknown)
  std::string ref = "HEAD";
};

struct MinedPr {
  std::string instance_id;
  std::string commit, base, kind;  // kind: merge or squash
  std::string date;                // committer date, ISO 8601
  int pr = 0;
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

// Mines `repo` (only read). `work_dir` is scratch; `progress` (may be null) gets a line now
// and then. A PR whose commits git cannot diff or show is dropped with a warning; only an
// unreadable history is an error.
util::Expected<MineResult> Mine(util::Env& env, runner::Launcher& launcher,
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

// fb-race mine: candidate feature PRs (and commits that close an issue, or the commits
// --commits names) from a repository's local git history, written as the instances validate
// and gt read, with the mining funnel on stderr.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/model_options.h"
#include "groundtruth/prompts.h"
#include "cli/race/commands.h"
#include "cli/race/race_common.h"
#include "groundtruth/mine.h"
#include "parser/python_parser.h"
#include "runner/git.h"
#include "sandbox/process.h"
#include "util/env.h"

namespace fbkit::cli::race {
namespace {

struct MineArgs {
  std::string repo;
  std::string output = "-";
  std::string report;
  std::string work_dir;
  std::string name;
  std::vector<std::string> intents = {"new feature"};
  groundtruth::MineOptions options;
  ModelArgs model;
  bool quiet = false;
};

void MineProgress(const std::string& line) {
  std::fprintf(stderr, "fb-race mine: %s\n", line.c_str());
}

int RunMine(MineArgs& a) {
  util::Env& env = util::RealEnv();
  auto repo = env.RealPath(a.repo);
  if (!repo.ok()) return Fail(kWho, a.repo + ": " + repo.error()), kExitUsage;
  auto parser = parser::PythonParser::Create();
  if (!parser.ok()) return Fail(kWho, parser.error());
  if (auto m = MakeModel(a.model, ""); !m.ok()) return Fail(kWho, m.error()), kExitUsage;
  auto scratch = ScratchDir(a.work_dir, "mine");
  if (!scratch.ok()) return Fail(kWho, scratch.error());
  std::string work = *scratch;
  auto model = MakeModel(a.model, util::JoinPath(work, "llm"));
  if (!model.ok()) return (void)env.RemoveAll(work), Fail(kWho, model.error()), kExitUsage;
  a.options.model = model->get();
  runner::GitProgram git(env, sandbox::RealLauncher(), work);
  if (auto top = git.Run(*repo, {"rev-parse", "--git-dir"}); !top.ok()) {
    (void)env.RemoveAll(work);
    // git's own words: "not a git repository", or why fbkit runs no git over it.
    return Fail(kWho, a.repo + ": " + top.error()), kExitUsage;
  }
  a.options.repo_name = a.name.empty() ? runner::RepoName(git, *repo) : a.name;
  a.options.intents.clear();
  for (const auto& i : a.intents) {
    if (i != "any") a.options.intents.push_back(i);
  }
  auto r = groundtruth::Mine(env, sandbox::RealLauncher(), **parser, *repo, a.options, work,
                             a.quiet ? nullptr : MineProgress);
  (void)env.RemoveAll(work);
  ReportModel(kWho, model->get());
  if (!r.ok()) return Fail(kWho, a.repo + ": " + r.error()), kExitUsage;
  if (!a.quiet) std::fputs(groundtruth::MineReportText(r->report).c_str(), stderr);
  int rc = kExitOk;
  for (const auto& w : r->report.warnings) {
    std::fprintf(stderr, "fb-race mine: %s\n", w.c_str());
    rc = kExitFileErrors;
  }
  if (auto s = WriteOutput(env, a.output, groundtruth::MinedJsonl(r->prs, *repo)); !s.ok()) {
    return Fail(kWho, s.error());
  }
  if (!a.report.empty()) {
    if (auto s = WriteOutput(env, a.report, groundtruth::MineReportJson(r->report)); !s.ok()) {
      return Fail(kWho, s.error());
    }
  }
  return rc;
}

}  // namespace

void AddMine(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<MineArgs>();
  CLI::App* cmd = app.add_subcommand(
      "mine",
      "Candidate feature PRs and commits from a repository's local history, as instances "
      "validate/gt read");
  cmd->footer(
      "A PR is a merge commit 'Merge pull request #N' or a commit (merge or squash) whose subject\n"
      "ends in '(#N)', on the first-parent history of --ref; a non-merge commit there without a\n"
      "PR number is a candidate too when its subject or body closes an issue the way GitHub\n"
      "reads it (close/closes/closed, fix/fixes/fixed, resolve/resolves/resolved, any case,\n"
      "then '#N': 'Fix #357: Add cache_info() support'; its title is the subject without the\n"
      "reference). --commits A..B or SHA1,SHA2 (repeatable) instead takes every non-merge commit\n"
      "it names, whatever its subject. A candidate's change is the diff against its first\n"
      "parent. It is kept when it changes a test file and a non-test Python source file, and its\n"
      "intent is one of --intent. Intent rule (without a model): a conventional prefix (feat:,\n"
      "fix:, docs:, refactor:, chore:) decides; else title words: fix/bug/crash/regression\n"
      "-> bug fix; add/support/new/allow/implement/introduce/enable -> new feature; refactor/\n"
      "rename/move/simplify/cleanup -> refactor; doc/docs/typo -> docs; else a new public\n"
      "function or class in the source files -> new feature; else other. Instance ids:\n"
      "owner__name-N for PR #N, owner__name-<first 12 hex digits of the commit> for a single\n"
      "commit. The funnel goes to stderr (and --report).");
  cmd->add_option("REPO", a->repo, "Git repository (only read)")->required();
  cmd->add_option("-o,--output", a->output, "Instances, JSON Lines (default: stdout)");
  cmd->add_option("--report", a->report, "The funnel as JSON (fbkit.race-mine/1)");
  auto* since = cmd->add_option("--since", a->options.since,
                                 "Only commits after this date (git's --since)");
  auto* until = cmd->add_option("--until", a->options.until,
                                 "Only commits before this date (git's --until)");
  auto* last = cmd->add_option("--last", a->options.last, "Only the newest N first-parent commits")
                   ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max", a->options.max, "Write at most N candidates, newest first (default: all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--intent", a->intents,
                  "Intents kept, repeatable: 'new feature' (default), 'bug fix', refactor, docs, "
                  "other, or any")
      ->check(CLI::IsMember({"new feature", "bug fix", "refactor", "docs", "other", "any"}));
  cmd->add_option("--name", a->name,
                  "owner/name for instance ids (owner__name-PR or owner__name-SHA12; default: "
                  "from the origin remote)");
  cmd->add_flag("--require-issue", a->options.require_issue,
                "Keep only candidates whose messages refer to an issue (#N, fixes #N, .../issues/N)");
  auto* ref = cmd->add_option("--ref", a->options.ref, "The history to walk (default HEAD)");
  cmd->add_option("--commits", a->options.commits,
                  "Mine these commits instead of the first-parent history: a range A..B (an "
                  "empty side is HEAD) or revisions, comma-separated or repeated; every "
                  "non-merge commit named is a candidate, whatever its subject")
      ->delimiter(',')
      ->excludes(since)
      ->excludes(until)
      ->excludes(last)
      ->excludes(ref);
  AddModelOptions(cmd, &a->model, "the intent (fbkit.llm-mine/1 classify_intent)",
                  groundtruth::StepPrompts());
  cmd->add_option("--work-dir", a->work_dir, "Scratch directory (default: under $TMPDIR)");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress or funnel on stderr");
  cmd->callback([a, exit_code] { *exit_code = RunMine(*a); });
}

}  // namespace fbkit::cli::race

#include "groundtruth/mine.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string_view>

#include "groundtruth/entity_changes.h"
#include "groundtruth/paths.h"
#include "model/model.h"
#include "util/json_writer.h"
#include "util/strings.h"

namespace fbkit::groundtruth {
namespace {

using json = nlohmann::json;

struct Commit {
  std::string hash, date, subject, body;
  std::vector<std::string> parents;
};

constexpr const char* kLogFormat = "--format=%x1e%H%x1f%P%x1f%cI%x1f%s%x1f%b";

// Commits out of `git log` with kLogFormat ("\x1e" between records, "\x1f" between fields).
std::vector<Commit> ParseLog(const std::string& out) {
  std::vector<Commit> commits;
  for (const auto& rec : util::Split(out, '\x1e')) {
    auto f = util::Split(rec, '\x1f');
    if (f.size() < 5) continue;
    Commit c;
    c.hash = util::Trim(f[0]);
    for (const auto& p : util::Split(util::Trim(f[1]), ' ')) {
      if (!p.empty()) c.parents.push_back(p);
    }
    c.date = util::Trim(f[2]);
    c.subject = util::Trim(f[3]);
    c.body = util::Trim(f[4]);
    commits.push_back(std::move(c));
  }
  return commits;
}

// The first-parent history, newest first.
util::Expected<std::vector<Commit>> FirstParentHistory(runner::Git& git, const std::string& repo,
                                                       const MineOptions& o) {
  std::vector<std::string> args = {"log", "--first-parent", kLogFormat};
  if (o.last > 0) args.push_back("-n" + std::to_string(o.last));
  if (!o.since.empty()) args.push_back("--since=" + o.since);
  if (!o.until.empty()) args.push_back("--until=" + o.until);
  args.push_back(o.ref);
  args.push_back("--");
  auto out = git.Run(repo, args);
  if (!out.ok()) return out.failure();
  return ParseLog(*out);
}

// The full hash of the commit `rev` names; an error naming --commits when git knows none.
util::Expected<std::string> ResolveCommit(runner::Git& git, const std::string& repo,
                                          const std::string& value, const std::string& rev) {
  std::string what = "--commits " + value + ": ";
  if (rev.starts_with("-")) return util::Error{what + "'" + rev + "' is no revision"};
  auto out = git.Run(repo, {"rev-parse", "--verify", "--quiet", "--end-of-options",
                            rev + "^{commit}"});
  std::string hash = out.ok() ? util::Trim(*out) : "";
  if (hash.empty()) return util::Error{what + "unknown revision '" + rev + "'"};
  return hash;
}

// The commits one --commits value names, newest first: "A..B" (an empty side is HEAD) or one
// revision.
util::Expected<std::vector<std::string>> CommitsOf(runner::Git& git, const std::string& repo,
                                                   const std::string& value) {
  std::string what = "--commits " + value + ": ";
  if (util::Trim(value).empty()) return util::Error{"--commits: an empty value"};
  size_t dots = value.find("..");
  if (dots == std::string::npos) {
    auto one = ResolveCommit(git, repo, value, value);
    if (!one.ok()) return one.failure();
    return std::vector<std::string>{*one};
  }
  if (value.compare(dots, 3, "...") == 0) {
    return util::Error{what + "a symmetric difference (A...B); give A..B"};
  }
  std::string from = value.substr(0, dots), to = value.substr(dots + 2);
  auto a = ResolveCommit(git, repo, value, from.empty() ? "HEAD" : from);
  if (!a.ok()) return a.failure();
  auto b = ResolveCommit(git, repo, value, to.empty() ? "HEAD" : to);
  if (!b.ok()) return b.failure();
  auto out = git.Run(repo, {"rev-list", *a + ".." + *b, "--"});
  if (!out.ok()) return util::Error{what + out.error()};
  std::vector<std::string> hashes;
  for (const auto& h : util::Split(*out, '\n')) {
    if (!util::Trim(h).empty()) hashes.push_back(util::Trim(h));
  }
  if (hashes.empty()) return util::Error{what + "the range holds no commit"};
  return hashes;
}

// The commits --commits names, each once, in the order given.
util::Expected<std::vector<Commit>> NamedCommits(runner::Git& git, const std::string& repo,
                                                 const std::vector<std::string>& values) {
  std::vector<std::string> hashes;
  std::set<std::string> seen;
  for (const auto& v : values) {
    auto some = CommitsOf(git, repo, v);
    if (!some.ok()) return some.failure();
    for (auto& h : *some) {
      if (seen.insert(h).second) hashes.push_back(std::move(h));
    }
  }
  std::vector<Commit> commits;
  constexpr size_t kChunk = 500;  // hashes per git command line
  for (size_t i = 0; i < hashes.size(); i += kChunk) {
    std::vector<std::string> args = {"log", "--no-walk=unsorted", kLogFormat};
    size_t end = std::min(hashes.size(), i + kChunk);
    args.insert(args.end(), hashes.begin() + i, hashes.begin() + end);
    args.push_back("--");
    auto out = git.Run(repo, args);
    if (!out.ok()) return out.failure();
    for (auto& c : ParseLog(*out)) commits.push_back(std::move(c));
  }
  return commits;
}

// The PR number of a merge ("Merge pull request #N from ...") or squash ("... (#N)")
// commit; 0 when it is neither.
int PrNumber(const Commit& c, std::string* kind) {
  static const std::regex kMerge(R"(^Merge pull request #(\d+)\b)");
  static const std::regex kSquash(R"(\(#(\d+)\)\s*$)");
  std::smatch m;
  *kind = c.parents.size() > 1 ? "merge" : "squash";
  // A subject is short; a long one (a repository's) is no PR's, and the regex engine
  // recurses per character (red team round 12). Numbers past an int are no PR's either.
  if (c.subject.size() > 1000) return 0;
  auto number = [](const std::string& digits) {
    long long n = std::strtoll(digits.c_str(), nullptr, 10);
    return n > 0 && n <= INT32_MAX ? static_cast<int>(n) : 0;
  };
  if (*kind == "merge" && std::regex_search(c.subject, m, kMerge)) return number(m[1]);
  return std::regex_search(c.subject, m, kSquash) ? number(m[1]) : 0;
}

// Title and body of the candidate: a merge's title is its body's first line (GitHub writes
// the PR title there); another PR's title is its subject without "(#N)"; a single commit's
// its subject without the issue reference it closes.
void TitleAndBody(const Commit& c, MinedPr* pr) {
  if (c.subject.starts_with("Merge pull request #")) {
    size_t nl = c.body.find('\n');
    pr->title = util::Trim(c.body.substr(0, nl));
    pr->body = nl == std::string::npos ? "" : util::Trim(c.body.substr(nl + 1));
    if (pr->title.empty()) pr->title = c.subject;
  } else if (pr->pr > 0) {
    static const std::regex kSuffix(R"(\s*\(#\d+\)\s*$)");
    pr->title = c.subject.size() > 1000 ? c.subject : std::regex_replace(c.subject, kSuffix, "");
    pr->body = c.body;
  } else {
    pr->title = TitleWithoutClosing(c.subject);
    pr->body = c.body;
  }
}

// Drops trailer lines (Co-authored-by:, Signed-off-by: ...) and squash bullet noise.
std::string CleanBody(const std::string& body) {
  static const std::regex kTrailer(R"(^[A-Za-z-]+-by:\s)");
  std::string out;
  for (const auto& line : util::Split(body, '\n')) {
    if (std::regex_search(line, kTrailer)) continue;
    out += line + "\n";
  }
  return util::Trim(out);
}

bool IsPythonSource(const std::string& path) {
  return path.ends_with(".py") && !IsTestPath(path) && !IsDocPath(path);
}

void Classify(const std::vector<std::string>& files, MinedPr* pr) {
  for (const auto& f : files) {
    if (IsTestPath(f)) {
      pr->test_files.push_back(f);
    } else if (IsPythonSource(f)) {
      pr->source_files.push_back(f);
    } else {
      pr->other_files.push_back(f);
    }
  }
}

// Public functions, methods and classes new in the source files (names with no '_' part).
util::Expected<std::vector<std::string>> NewPublic(runner::Git& git, parser::PythonParser& parser,
                                                   const std::string& repo, const MinedPr& pr) {
  std::vector<FileVersions> versions;
  for (const auto& f : pr.source_files) {
    auto before = git.Show(repo, pr.base, f);
    if (!before.ok()) return before.failure();
    auto after = git.Show(repo, pr.commit, f);
    if (!after.ok()) return after.failure();
    versions.push_back({f, *before, *after});
  }
  std::vector<std::string> out;
  for (const auto& ch : DiffEntities(parser, versions).entities) {
    if (ch.change != Change::kNew) continue;
    bool is_public = true;
    for (const auto& part : util::Split(ch.qualname, '.')) {
      if (part.starts_with("_")) is_public = false;
    }
    if (is_public) out.push_back(ch.entity);
  }
  return out;
}

bool HasWord(const std::set<std::string>& words, std::initializer_list<const char*> list,
             std::string* which) {
  for (const char* w : list) {
    if (words.count(w)) return *which = w, true;
  }
  return false;
}

std::string ProblemStatement(const MinedPr& pr, const std::vector<std::string>& commit_subjects) {
  std::string s = pr.title + "\n";
  std::string body = CleanBody(pr.body);
  if (!body.empty()) s += "\n" + body + "\n";
  if (!commit_subjects.empty()) {
    s += "\nCommits of the pull request:\n";
    for (const auto& c : commit_subjects) s += "- " + c + "\n";
  }
  return s;
}

// The intent from the model, or an error saying why the answer was not used.
util::Expected<std::string> IntentByModel(model::Model& model, const MinedPr& pr) {
  json files = json::array();
  for (const auto* list : {&pr.source_files, &pr.test_files, &pr.other_files}) {
    for (const auto& f : *list) files.push_back(f);
  }
  json req = {{"schema", "fbkit.llm-mine/1"},
              {"task", "classify_intent"},
              {"title", pr.title},
              {"body", pr.body},
              {"files", files},
              {"intents", Intents()}};
  std::function<util::Expected<std::string>(const std::string&)> read =
      [](const std::string& out) -> util::Expected<std::string> {
    json ans = json::parse(out, nullptr, false);
    if (!ans.is_object() || !ans.contains("intent") || !ans["intent"].is_string()) {
      return util::Error{"answer has no \"intent\" string"};
    }
    std::string intent = util::AsciiLower(ans["intent"].get<std::string>());
    const auto& all = Intents();
    if (std::find(all.begin(), all.end(), intent) == all.end()) {
      return util::Error{"unknown intent \"" + intent + "\""};
    }
    return intent;
  };
  auto intent = model::AskFor(model, req.dump(), read);
  if (!intent.ok()) return intent.failure();
  if (!*intent) return util::Error{model.source() + ": its answers stayed invalid"};
  return **intent;
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Everything about one PR commit past stage 1; false (with `drop`) when a stage drops it.
struct Miner {
  util::Env& env;
  sandbox::Launcher& launcher;
  parser::PythonParser& parser;
  runner::Git& git;
  const std::string& repo;
  const MineOptions& o;
  const std::string& work_dir;
  MineReport& report;

  // Stage indices into report.stages (issue: -1 unless --require-issue).
  int tests_stage = 2, issue_stage = -1, intent_stage = 3;

  util::Expected<bool> Fill(const Commit& c, MinedPr* pr, std::string* drop) {
    auto names = git.Run(repo, {"diff", "--name-only", "--no-renames", pr->base, pr->commit});
    if (!names.ok()) return names.failure();
    std::vector<std::string> files;
    for (const auto& f : util::Split(*names, '\n')) {
      if (!util::Trim(f).empty()) files.push_back(util::Trim(f));
    }
    std::sort(files.begin(), files.end());
    Classify(files, pr);
    if (pr->test_files.empty() || pr->source_files.empty()) {
      *drop = pr->test_files.empty() ? "no test file changed" : "no Python source file changed";
      return false;
    }
    report.stages[tests_stage].count++;
    auto subjects = Messages(c, pr);
    if (!subjects.ok()) return subjects.failure();
    if (issue_stage >= 0) {
      if (pr->issues.empty()) return *drop = "no issue reference", false;
      report.stages[issue_stage].count++;
    }
    auto pub = NewPublic(git, parser, repo, *pr);
    if (!pub.ok()) return pub.failure();
    pr->new_public = std::move(*pub);
    Decide(pr);
    report.intents[pr->intent]++;
    if (!o.intents.empty() &&
        std::find(o.intents.begin(), o.intents.end(), pr->intent) == o.intents.end()) {
      *drop = "intent: " + pr->intent;
      return false;
    }
    report.stages[intent_stage].count++;
    return Patches(pr);
  }

  // Issue numbers and the problem statement from the PR's messages (a merge's commits too).
  util::Expected<std::vector<std::string>> Messages(const Commit& c, MinedPr* pr) {
    std::vector<std::string> subjects;
    if (pr->kind == "merge") {
      auto log = git.Run(
          repo, {"log", "--no-merges", "--reverse", "--format=%s", pr->base + ".." + pr->commit});
      if (!log.ok()) return log.failure();
      for (const auto& s : util::Split(*log, '\n')) {
        if (!util::Trim(s).empty()) subjects.push_back(util::Trim(s));
      }
    }
    std::string all_text = c.subject + "\n" + c.body + "\n" + Join(subjects, "\n");
    pr->issues = IssueNumbers(all_text, pr->pr);
    pr->problem_statement = ProblemStatement(*pr, subjects);
    return subjects;
  }

  // `patch` (source and other files) and `test_patch` (test files) against the base.
  util::Expected<bool> Patches(MinedPr* pr) {
    std::vector<std::string> rest = pr->source_files;
    rest.insert(rest.end(), pr->other_files.begin(), pr->other_files.end());
    std::sort(rest.begin(), rest.end());
    auto diff = [&](const std::vector<std::string>& paths) -> util::Expected<std::string> {
      std::vector<std::string> args = {"diff",   "--binary", "--no-renames",
                                       pr->base, pr->commit, "--"};
      args.insert(args.end(), paths.begin(), paths.end());
      return git.Run(repo, args);
    };
    auto patch = diff(rest);
    if (!patch.ok()) return patch.failure();
    auto test_patch = diff(pr->test_files);
    if (!test_patch.ok()) return test_patch.failure();
    pr->patch = std::move(*patch);
    pr->test_patch = std::move(*test_patch);
    return true;
  }

  void Decide(MinedPr* pr) {
    if (o.model) {
      auto intent = IntentByModel(*o.model, *pr);
      if (intent.ok()) {
        pr->intent = *intent;
        pr->intent_source = "llm";
        return;
      }
      report.warnings.push_back(pr->instance_id + ": " + intent.error() +
                                " (the rule decides)");
    }
    pr->intent = IntentByRule(pr->title, pr->new_public, &pr->intent_reason);
    pr->intent_source = "rule";
  }
};

// owner__name-SUFFIX: SUFFIX is a PR's number, or a single commit's first 12 hex digits.
std::string InstanceId(const std::string& repo_name, const std::string& suffix) {
  std::string id = repo_name;
  if (id.starts_with("local/")) id = id.substr(6);
  size_t slash = id.find('/');
  if (slash != std::string::npos) id = id.substr(0, slash) + "__" + id.substr(slash + 1);
  return id + "-" + suffix;
}

bool IsWordChar(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }
bool IsBlank(char ch) { return ch == ' ' || ch == '\t'; }

// The closing keyword ending at `end` in `text` (blanks and one colon before `end` skipped):
// its first byte, or npos when the word there is none.
size_t KeywordBefore(std::string_view text, size_t end) {
  static const std::set<std::string> kKeywords = {"close",   "closes",  "closed",
                                                  "fix",     "fixes",   "fixed",
                                                  "resolve", "resolves", "resolved"};
  size_t k = end;
  while (k > 0 && IsBlank(text[k - 1])) --k;
  if (k > 0 && text[k - 1] == ':') --k;
  while (k > 0 && IsBlank(text[k - 1])) --k;
  if (k == end) return std::string_view::npos;  // "Fix#3": no separator
  size_t w = k;
  while (w > 0 && std::isalpha(static_cast<unsigned char>(text[w - 1]))) --w;
  if (w == k || (w > 0 && IsWordChar(text[w - 1]))) return std::string_view::npos;
  if (!kKeywords.count(util::AsciiLower(std::string(text.substr(w, k - w))))) {
    return std::string_view::npos;
  }
  return w;
}

}  // namespace

const std::vector<std::string>& Intents() {
  static const std::vector<std::string> kIntents = {"new feature", "bug fix", "refactor", "docs",
                                                    "other"};
  return kIntents;
}

std::string IntentByRule(const std::string& title, const std::vector<std::string>& new_public,
                         std::string* reason) {
  static const std::regex kConventional(R"(^\s*(\w+)(\([^)]*\))?!?:)");
  std::smatch m;
  std::string lower = util::AsciiLower(title);
  if (std::regex_search(lower, m, kConventional)) {
    std::string type = m[1];
    *reason = "conventional prefix \"" + type + ":\"";
    if (type == "feat" || type == "feature") return "new feature";
    if (type == "fix" || type == "bugfix") return "bug fix";
    if (type == "refactor" || type == "perf" || type == "style") return "refactor";
    if (type == "docs" || type == "doc") return "docs";
    if (type == "chore" || type == "ci" || type == "build" || type == "test") return "other";
  }
  std::set<std::string> words;
  static const std::regex kWord(R"([a-z]+)");
  for (auto it = std::sregex_iterator(lower.begin(), lower.end(), kWord);
       it != std::sregex_iterator(); ++it) {
    words.insert(it->str());
  }
  std::string w;
  if (HasWord(words,
              {"fix", "fixes", "fixed", "fixing", "bug", "bugs", "crash", "regression", "incorrect",
               "wrong", "broken"},
              &w)) {
    return *reason = "title word \"" + w + "\"", "bug fix";
  }
  if (HasWord(
          words,
          {"add", "adds", "added", "adding", "support", "supports", "new", "allow", "allows",
           "implement", "implements", "introduce", "introduces", "enable", "enables", "feature"},
          &w)) {
    return *reason = "title word \"" + w + "\"", "new feature";
  }
  if (HasWord(words,
              {"refactor", "refactoring", "cleanup", "clean", "rename", "renames", "move", "moves",
               "simplify", "reorganize", "typing", "annotations"},
              &w)) {
    return *reason = "title word \"" + w + "\"", "refactor";
  }
  if (HasWord(words,
              {"doc", "docs", "docstring", "docstrings", "documentation", "typo", "typos", "readme",
               "changelog"},
              &w)) {
    return *reason = "title word \"" + w + "\"", "docs";
  }
  if (!new_public.empty()) {
    return *reason = "adds public " + new_public.front(), "new feature";
  }
  *reason = "no rule matched";
  return "other";
}

std::vector<int> IssueNumbers(const std::string& text, int pr) {
  static const std::regex kRef(R"((?:^|[^\w&/])#(\d+)\b|/issues/(\d+)\b)");
  std::set<int> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kRef); it != std::sregex_iterator();
       ++it) {
    std::string n = (*it)[1].matched ? (*it)[1].str() : (*it)[2].str();
    if (n.size() > 9) continue;
    int v = std::stoi(n);
    if (v != pr) out.insert(v);
  }
  return {out.begin(), out.end()};
}

IssueReference ClosingIssue(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '#') continue;
    size_t d = i + 1;
    while (d < text.size() && std::isdigit(static_cast<unsigned char>(text[d]))) ++d;
    if (d == i + 1 || d - i - 1 > 9 || (d < text.size() && IsWordChar(text[d]))) continue;
    size_t w = KeywordBefore(text, i);
    if (w == std::string_view::npos) continue;
    int n = std::atoi(std::string(text.substr(i + 1, d - i - 1)).c_str());
    if (n > 0) return {n, w, d};
  }
  return {};
}

std::string TitleWithoutClosing(const std::string& subject) {
  IssueReference ref = ClosingIssue(subject);
  if (ref.number == 0) return subject;
  std::string before = util::Trim(subject.substr(0, ref.begin));
  std::string after = util::Trim(subject.substr(ref.end));
  while (!before.empty() && std::string_view("(,;:-").find(before.back()) != std::string::npos) {
    before = util::Trim(before.substr(0, before.size() - 1));
  }
  while (!after.empty() && std::string_view("):-,;.").find(after.front()) != std::string::npos) {
    after = util::Trim(after.substr(1));
  }
  std::string title = before.empty() || after.empty() ? before + after : before + " " + after;
  return title.empty() ? subject : title;
}

namespace {

// Why `c` is a candidate, set in `pr` (its PR number and kind), or the reason it is dropped:
// a PR (merge or squash) first; else a non-merge commit that closes an issue (issue); else,
// when --commits named it, any non-merge commit (commit). --commits drops merges.
std::string Candidate(const Commit& c, bool named, MinedPr* pr) {
  bool merge = c.parents.size() > 1;
  if (named && merge) return "merge commit (--commits takes single commits)";
  pr->pr = PrNumber(c, &pr->kind);
  if (pr->pr > 0) return "";
  if (merge) return "merge without a PR number";
  if (ClosingIssue(c.subject + "\n" + c.body).number > 0) {
    pr->kind = "issue";
    return "";
  }
  if (named) {
    pr->kind = "commit";
    return "";
  }
  return "no PR number or closing issue reference";
}

// One commit: the candidate it is kept in r->prs, or counted in the report's dropped
// reasons (one commit git cannot diff or show never stops the others).
void MinePr(Miner& miner, const Commit& c, const MineOptions& o, MineResult* r) {
  MinedPr pr;
  if (std::string drop = Candidate(c, !o.commits.empty(), &pr); !drop.empty()) {
    r->report.dropped[drop]++;
    return;
  }
  pr.commit = c.hash;
  pr.base = c.parents.empty() ? "" : c.parents.front();
  pr.date = c.date;
  pr.instance_id =
      InstanceId(o.repo_name, pr.pr > 0 ? std::to_string(pr.pr) : c.hash.substr(0, 12));
  TitleAndBody(c, &pr);
  // "Merge stable into main (#N)": many PRs at once.
  if (pr.pr > 0 && pr.title.starts_with("Merge ")) {
    r->report.dropped["branch merge"]++;
    return;
  }
  r->report.stages[1].count++;
  if (pr.base.empty()) {
    r->report.dropped["root commit"]++;
    return;
  }
  std::string drop;
  auto kept = miner.Fill(c, &pr, &drop);
  if (!kept.ok()) {
    r->report.dropped["error (see the warnings)"]++;
    r->report.warnings.push_back(pr.instance_id + " (" + c.hash.substr(0, 12) + "): " + kept.error());
    return;
  }
  if (!*kept) {
    r->report.dropped[drop]++;
    return;
  }
  if (o.max > 0 && static_cast<int>(r->prs.size()) >= o.max) {
    r->report.dropped["beyond --max"]++;
    return;
  }
  r->prs.push_back(std::move(pr));
}

}  // namespace

util::Expected<MineResult> Mine(util::Env& env, sandbox::Launcher& launcher,
                                parser::PythonParser& parser, const std::string& repo,
                                const MineOptions& o, const std::string& work_dir,
                                void (*progress)(const std::string&)) {
  runner::GitProgram git(env, launcher, work_dir);
  auto commits = o.commits.empty() ? FirstParentHistory(git, repo, o)
                                    : NamedCommits(git, repo, o.commits);
  if (!commits.ok()) return commits.failure();
  MineResult r;
  r.report.repository = o.repo_name;
  if (o.commits.empty()) {
    r.report.stages = {{"first-parent commits"},
                       {"pull requests (merge #N or squash (#N)) or commits closing an issue"}};
  } else {
    r.report.stages = {{"commits (--commits)"}, {"single commits (merges dropped)"}};
  }
  r.report.stages.push_back({"changes tests and Python source"});
  Miner miner{env, launcher, parser, git, repo, o, work_dir, r.report};
  if (o.require_issue) {
    miner.issue_stage = static_cast<int>(r.report.stages.size());
    r.report.stages.push_back({"refers to an issue"});
  }
  miner.intent_stage = static_cast<int>(r.report.stages.size());
  r.report.stages.push_back({"intent kept"});
  r.report.stages.push_back({"written (--max)"});
  r.report.stages[0].count = static_cast<int>(commits->size());
  size_t done = 0;
  for (const auto& c : *commits) {
    if (progress && ++done % 50 == 0) {
      progress(std::to_string(done) + "/" + std::to_string(commits->size()) + " commits, " +
               std::to_string(r.prs.size()) + " kept");
    }
    MinePr(miner, c, o, &r);
  }
  r.report.stages.back().count = static_cast<int>(r.prs.size());
  return r;
}

std::string MinedJsonl(const std::vector<MinedPr>& prs, const std::string& repo) {
  std::string out;
  for (const auto& p : prs) {
    util::JsonWriter w(&out);
    w.BeginObject();
    w.Key("base_commit"), w.String(p.base);
    w.Key("commit"), w.String(p.commit);
    w.Key("created_at"), w.String(p.date);
    w.Key("files");
    w.BeginObject();
    w.Key("other"), w.StringArray(p.other_files);
    w.Key("source"), w.StringArray(p.source_files);
    w.Key("test"), w.StringArray(p.test_files);
    w.EndObject();
    w.Key("hints_text"), w.String("");
    w.Key("instance_id"), w.String(p.instance_id);
    w.Key("intent"), w.String(p.intent);
    w.Key("intent_reason"), w.String(p.intent_reason);
    w.Key("intent_source"), w.String(p.intent_source);
    w.Key("issue_numbers");
    w.BeginArray();
    for (int n : p.issues) w.Int(n);
    w.EndArray();
    w.Key("kind"), w.String(p.kind);
    w.Key("new_public"), w.StringArray(p.new_public);
    w.Key("patch"), w.String(p.patch);
    w.Key("problem_statement"), w.String(p.problem_statement);
    w.Key("pull_number");
    if (p.pr > 0) {
      w.Int(p.pr);
    } else {
      w.Null();
    }
    w.Key("repo"), w.String(repo);
    w.Key("test_patch"), w.String(p.test_patch);
    w.Key("title"), w.String(p.title);
    w.EndObject();
    out += "\n";
  }
  return out;
}

std::string MineReportJson(const MineReport& report) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("dropped");
  w.BeginObject();
  for (const auto& [k, v] : report.dropped) w.Key(k), w.Int(v);
  w.EndObject();
  w.Key("intents");
  w.BeginObject();
  for (const auto& [k, v] : report.intents) w.Key(k), w.Int(v);
  w.EndObject();
  w.Key("repository"), w.String(report.repository);
  w.Key("schema"), w.String("fbkit.race-mine/1");
  w.Key("stages");
  w.BeginArray();
  for (const auto& s : report.stages) {
    w.BeginObject();
    w.Key("count"), w.Int(s.count);
    w.Key("stage"), w.String(s.name);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out + "\n";
}

std::string MineReportText(const MineReport& report) {
  std::string out = "funnel of " + report.repository + ":\n";
  for (const auto& s : report.stages) {
    out += "  " + std::to_string(s.count) + "\t" + s.name + "\n";
  }
  out += "intents (of the PRs classified):";
  for (const auto& [k, v] : report.intents) out += " " + k + " " + std::to_string(v) + ";";
  out += "\ndropped:";
  for (const auto& [k, v] : report.dropped) out += " " + k + " " + std::to_string(v) + ";";
  return out + "\n";
}

}  // namespace fbkit::groundtruth

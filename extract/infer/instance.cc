#include "extract/infer/instance.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>
#include <nlohmann/json.hpp>

#include "extract/infer/patch.h"
#include "extract/taskdir/task_dir.h"
#include "agents/trajectory.h"
#include "runner/confine.h"
#include "runner/git.h"
#include "util/hash.h"
#include "util/json_read.h"
#include "util/strings.h"
#include "util/utf8.h"
#include "agents/run_dir.h"

namespace fbkit::extract::infer {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The instance's paths: what the agent sees and what only fbkit sees.
struct Layout {
  std::string inst;       // RUN_DIR/<id> (writable for the agent)
  std::string workspace;  // inst/workspace
  std::string statement;  // inst/input/problem_statement.md
  std::string output;     // inst/output ($FBKIT_OUTPUT_DIR)
  std::string agent_log;  // inst/agent.log (fbkit's)
  std::string patch;      // inst/patch.diff (fbkit's)
  std::string base;       // RUN_DIR/.fbkit/base/<id>.git: the starting state (hidden)
  std::string scratch;    // RUN_DIR/.fbkit/work/<id>: git logs
  std::string trash;      // RUN_DIR/.fbkit/trash: earlier runs that could not be removed
};

Layout LayoutOf(const std::string& run_dir, const std::string& id) {
  agents::InferRunDir run{run_dir};
  agents::InferInstanceDir inst = run.instance(id);
  Layout l;
  l.inst = inst.dir;
  l.workspace = inst.workspace();
  l.statement = inst.statement();
  l.output = inst.output();
  l.agent_log = inst.agent_log();
  l.patch = inst.patch();
  l.base = run.base(id);
  l.scratch = run.scratch(id);
  l.trash = run.trash();
  return l;
}

// `git --git-dir=BASE --work-tree=WORKSPACE ARGS`: fbkit's own record of the workspace,
// outside the agent's reach (whatever it does to workspace/.git).
util::Expected<std::string> Base(runner::Git& git, const Layout& l,
                                 std::vector<std::string> args, const std::string& input = "") {
  args.insert(args.begin(), {"--git-dir=" + l.base, "--work-tree=" + l.workspace});
  return git.Run(l.workspace, args, input);
}
// Fetches into `workspace` the tags of `presolved` that point at its HEAD (the version tag
// fbkit's presolved commit carries), no other.
util::Status FetchHeadTags(runner::Git& git, const std::string& presolved,
                           const std::string& workspace) {
  auto tags = git.Run(presolved, {"tag", "--points-at", "HEAD"});
  if (!tags.ok()) return util::Status::Ok();  // no tag to show
  for (const auto& tag : util::Split(*tags, '\n')) {
    if (tag.empty() || tag.starts_with("-")) continue;
    std::string ref = "refs/tags/" + tag;
    if (!git.Run(presolved, {"check-ref-format", ref}).ok()) continue;
    if (auto r = git.Run(workspace, {"fetch", "-q", "--no-tags", presolved, ref + ":" + ref}); !r.ok()) {
      return r.failure();
    }
  }
  return util::Status::Ok();
}

// The workspace as the benchmark defines it, and fbkit's snapshot of it. `git` runs
// confined (the task directory is no more trusted than its code).
util::Status PrepareWorkspace(util::Env& env, runner::Git& git, const Layout& l,
                              const std::string& task_dir, int level) {
  if (auto s = env.MakeDirs(util::DirName(l.base)); !s.ok()) return s;
  if (level == 1) {
    auto checked = taskdir::PlainPresolved(env, taskdir::TaskDir{task_dir});
    if (!checked.ok()) return checked.failure();
    const std::string& presolved = *checked;
    // Fetched into a fresh repository rather than cloned: the workspace has no remote
    // pointing back at the task directory (its patch.diff is the answer), and confined git
    // writes no configuration of a work copy.
    auto head = git.Run(l.inst, {"ls-remote", "--symref", presolved, "HEAD"});
    if (!head.ok()) return head.failure();
    std::string branch = "main";
    if (head->starts_with("ref: refs/heads/")) {
      std::string named = head->substr(16, head->find_first_of("\t\n") - 16);
      bool plain = !named.empty() && named[0] != '-' &&
                   std::all_of(named.begin(), named.end(), [](char ch) {
                     return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' ||
                            ch == '_' || ch == '-' || ch == '/';
                   });
      if (plain) branch = named;
    }
    if (auto s = env.MakeDirs(l.workspace); !s.ok()) return s;
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"init", "-q", "-b", branch},
             {"fetch", "-q", "--no-tags", "--update-head-ok", presolved,
              "+HEAD:refs/heads/" + branch},
             {"reset", "-q", "--hard"}}) {
      if (auto r = git.Run(l.workspace, args); !r.ok()) return r.failure();
    }
    // The tag the task's one commit carries (the original's release), as eval's clone has
    // it: a version from git (setuptools-scm) reads the same in the agent's runs.
    if (auto s = FetchHeadTags(git, presolved, l.workspace); !s.ok()) return s;
  } else {
    if (auto s = env.MakeDirs(l.workspace); !s.ok()) return s;
    if (auto s = git.InitEmpty(l.workspace, "empty project"); !s.ok()) return s;
  }
  if (auto r = Base(git, l, {"init", "-q"}); !r.ok()) return r.failure();
  // The snapshot stores every file's bytes as they are, whatever .gitattributes the tree
  // holds (the agent writes them): no re-encoding (a working-tree-encoding git cannot convert
  // failed the whole patch, one it can tripled it: red team rounds 11 and 12), no filter,
  // no line-end conversion. $GIT_DIR/info/attributes comes before any .gitattributes.
  if (auto s = env.WriteFileAtomic(util::JoinPath(l.base, "info/attributes"),
                                   "* -working-tree-encoding -filter -ident -text -eol\n");
      !s.ok()) {
    return s;
  }
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"add", "-A"}, {"commit", "-q", "--allow-empty", "-m", "start"}}) {
    if (auto r = Base(git, l, args); !r.ok()) return r.failure();
  }
  return util::Status::Ok();
}

// Before the patch is collected, inside `sandbox`: what the agent made unreadable to itself
// is opened up (a chmod 000 directory failed `git add` for the whole patch: red team round
// 12), the FIFOs and sockets the agent left go
// (no patch holds them, and a FIFO where git reads a file would block it for ever), and so
// does every `.git` at any depth (directories and gitdir files): the agent wrote them, and
// git reads programs from more of one than a configuration file (commondir, worktrees,
// includes, hooks); a user's `git status` anywhere in the kept workspace must run nothing the
// agent left (red team round 12: a nested repository's fsmonitor ran on the host), and a
// nested repository's files are the agent's change like any other (a gitlink hid them, one
// without a commit made `git add` fail the whole patch). The patch is fbkit's record of the
// change (patch.diff).
util::Status DefuseWorkspace(util::Env& env, sandbox::Launcher& launcher, const Layout& l,
                             sandbox::Sandbox sandbox) {
  sandbox::ProcessSpec spec;
  // What would make git take the workspace, or a directory in it, for a repository when a
  // user types `git status` there (a bare repository's HEAD beside objects/ and refs/ runs
  // its config's core.fsmonitor): every .git and every such HEAD goes, whether its objects/
  // and refs/ are there or links to what exists only on the host (red team: links to /var/lib
  // dangled here and the HEAD stayed); and so do the setuid and setgid bits and the
  // write permission for others the agent set (another local user ran a setuid copy as the
  // agent, or changed the kept workspace); the group's write too, which is also the mask of
  // any ACL the agent set (red team f: a named user's rwx ACL let another local user write it).
  spec.argv = {"/bin/sh", "-c",
               "chmod -R u+rwX,ug-s,go-w . 2>/dev/null; "
               "find . \\( -type p -o -type s \\) -delete && "
               "find . -name .git -prune -exec rm -rf {} + && "
               "find . -name HEAD -exec sh -c 'for h; do d=${h%/HEAD}; "
               "for m in objects refs commondir; do "
               "if [ -e \"$d/$m\" ] || [ -h \"$d/$m\" ]; then rm -rf \"$h\" || exit 1; fi; done; "
               "done' defuse-head {} + && "
               "! find . \\( -perm /6000 -o -perm -0002 \\) \\! -type l | grep -q .",
               "defuse"};
  spec.cwd = l.workspace;
  spec.log_path = util::JoinPath(l.scratch, "defuse.log");
  spec.sandbox = std::move(sandbox);
  auto exit = sandbox::RunToCompletion(launcher, spec, runner::Git::kConfinedSeconds);
  if (!exit.ok()) return exit.failure();
  if (exit->code != 0 || exit->timed_out) {
    auto log = env.ReadTail(spec.log_path, 2000);
    return util::Error{"clearing the workspace's FIFOs, sockets, repositories and setuid bits failed: " +
                       (log.ok() ? *log : "")};
  }
  return util::Status::Ok();
}

// Asks git, in one batch through its stdin, for what `ask` lists (one object id a line) and
// returns its answer (`format`: --batch-check's, or "" for --batch's contents).
util::Expected<std::string> CatFile(util::Env& env, runner::Git& git, const Layout& l,
                                    const std::string& ask, const std::string& format) {
  if (ask.empty()) return std::string();
  std::string input = util::JoinPath(l.scratch, "blobs");
  if (auto s = env.WriteFileAtomic(input, ask); !s.ok()) return s.failure();
  auto out = Base(git, l, {"cat-file", format.empty() ? "--batch" : "--batch-check=" + format},
                  input);
  (void)env.RemoveAll(input);
  return out;
}

bool IsBlob(const std::string& oid) { return oid.find_first_not_of('0') != std::string::npos; }

// The blob ids of both sides of `files` (of those `wanted` takes), one a line: what CatFile
// asks for.
std::string BlobsOf(const std::vector<ChangedFile>& files,
                    const std::function<bool(size_t)>& wanted) {
  std::string ask;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!wanted(i)) continue;
    for (const std::string* oid : {&files[i].old_blob, &files[i].new_blob}) {
      if (IsBlob(*oid)) ask += *oid + "\n";
    }
  }
  return ask;
}

// Fills each file's stored sizes (old and new blob): what the patch carries (a
// .gitattributes' working-tree-encoding makes it up to twelve times the file: red team
// round 11), not the file's size.
util::Status FillSizes(util::Env& env, runner::Git& git, const Layout& l,
                       std::vector<ChangedFile>* files) {
  auto answer = CatFile(env, git, l, BlobsOf(*files, [](size_t) { return true; }),
                        "%(objectname) %(objectsize)");
  if (!answer.ok()) return answer.failure();
  std::unordered_map<std::string, uint64_t> sizes;
  for (const auto& line : util::Split(*answer, '\n')) {
    size_t space = line.find(' ');
    if (space != std::string::npos) {
      sizes[line.substr(0, space)] = std::strtoull(line.c_str() + space + 1, nullptr, 10);
    }
  }
  for (auto& f : *files) {
    if (auto it = sizes.find(f.old_blob); it != sizes.end()) f.old_bytes = it->second;
    if (auto it = sizes.find(f.new_blob); it != sizes.end()) f.new_bytes = it->second;
  }
  return util::Status::Ok();
}

// Marks the files (not yet left out) whose contents on either side are no valid UTF-8:
// git prints a text file's bytes as they are, and a JSON string cannot carry them (they
// became U+FFFD: red team round 11, L1). Reads the blobs, so only when the patch showed such
// bytes.
util::Status MarkNotUtf8(util::Env& env, runner::Git& git, const Layout& l,
                         const std::vector<LeftOut>& out, std::vector<ChangedFile>* files) {
  std::vector<bool> left(files->size());
  for (const auto& o : out) left[o.index] = true;
  auto answer = CatFile(env, git, l, BlobsOf(*files, [&](size_t i) {
                          return !left[i] && !(*files)[i].binary;
                        }), "");
  if (!answer.ok()) return answer.failure();
  std::set<std::string> invalid;  // blob ids
  std::string_view rest = *answer;
  while (!rest.empty()) {  // "<oid> blob <size>\n<contents>\n"
    size_t eol = rest.find('\n');
    if (eol == std::string_view::npos) break;
    auto head = util::Split(std::string(rest.substr(0, eol)), ' ');
    if (head.size() < 3) {  // "<oid> missing": a nested repository's commit
      rest.remove_prefix(eol + 1);
      continue;
    }
    uint64_t size = std::strtoull(head[2].c_str(), nullptr, 10);
    if (rest.size() < eol + 1 + size) break;
    if (util::FindInvalidUtf8(rest.substr(eol + 1, size)) != std::string_view::npos) {
      invalid.insert(head[0]);
    }
    rest.remove_prefix(std::min(rest.size(), eol + 2 + size));
  }
  for (auto& f : *files) {
    if (invalid.count(f.old_blob) || invalid.count(f.new_blob)) f.not_utf8 = true;
  }
  return util::Status::Ok();
}

// The most git may write or print while the patch is collected (MiB): past the patch's own
// bound (64 MiB) and the blobs it checks (twice that), far below a listing that would hold
// fbkit's memory for minutes.
constexpr int64_t kMaxCollectMb = 256;

// How many left-out files the result names one by one; the rest are counted.
constexpr size_t kMaxListedExclusions = 100;

void ListLeftOut(const std::vector<ChangedFile>& files, const std::vector<LeftOut>& out,
                 InferResult* r) {
  r->excluded.clear();
  for (const auto& o : out) {
    if (r->excluded.size() == kMaxListedExclusions) break;
    r->excluded.push_back(files[o.index].path + ": " + o.why);
  }
  if (out.size() > kMaxListedExclusions) {
    r->excluded.push_back("(" + std::to_string(out.size() - kMaxListedExclusions) +
                          " more files left out, not listed)");
  }
}

// The index's diff against the start, the left-out files first put back as they were
// (through a list git reads on its stdin: any number of them, each found by its path, not
// matched against a pattern).
util::Expected<std::string> DiffWithout(util::Env& env, runner::Git& git, const Layout& l,
                                        const std::vector<ChangedFile>& files,
                                        const std::vector<LeftOut>& out) {
  if (std::string restore = RestoreInput(files, out); !restore.empty()) {
    std::string input = util::JoinPath(l.scratch, "left-out.index-info");
    if (auto s = env.WriteFileAtomic(input, restore); !s.ok()) return s.failure();
    auto put_back = Base(git, l, {"update-index", "-z", "--index-info"}, input);
    (void)env.RemoveAll(input);
    if (!put_back.ok()) return put_back.failure();
  }
  return Base(git, l, {"diff", "--cached", "--no-renames", "--no-color", "--no-ext-diff", "HEAD", "--"});
}

// The workspace's changes against its start, without the files ChooseLeftOut leaves out.
util::Status CollectPatch(util::Env& env, runner::Git& git, const Layout& l, int64_t max_kb,
                          int64_t max_mb, InferResult* r) {
  uint64_t max_total = std::min<uint64_t>(static_cast<uint64_t>(std::max<int64_t>(max_mb, 0)) << 20,
                                          taskdir::kMaxAgentPatchBytes);
  if (auto a = Base(git, l, {"add", "-A"}); !a.ok()) return a.failure();
  auto listed = Base(git, l, {"diff", "--cached", "--no-renames", "--raw", "--numstat",
                              "--no-abbrev", "-z", "HEAD", "--"});
  if (!listed.ok()) return listed.failure();
  auto parsed = ParseChangedFiles(*listed);
  if (!parsed.ok()) return parsed.failure();
  std::vector<ChangedFile> files = std::move(*parsed);
  if (auto s = FillSizes(env, git, l, &files); !s.ok()) return s;
  std::vector<LeftOut> out = ChooseLeftOut(files, max_kb, max_total);
  auto diff = DiffWithout(env, git, l, files, out);
  if (!diff.ok()) return diff.failure();
  if (util::FindInvalidUtf8(*diff) != std::string::npos) {
    if (auto s = MarkNotUtf8(env, git, l, out, &files); !s.ok()) return s;
    // Those left out already stay out (the first diff put them back); these join them.
    std::vector<bool> left(files.size());
    for (const auto& o : out) left[o.index] = true;
    for (size_t i = 0; i < files.size(); ++i) {
      if (!left[i] && files[i].not_utf8) out.push_back({i, kNotUtf8});
    }
    std::sort(out.begin(), out.end(),
              [](const LeftOut& a, const LeftOut& b) { return a.index < b.index; });
    diff = DiffWithout(env, git, l, files, out);
    if (!diff.ok()) return diff.failure();
  }
  ListLeftOut(files, out, r);
  r->patch = std::move(*diff);
  return util::Status::Ok();
}

int64_t Int(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
}

std::optional<double> Number(const json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return std::nullopt;
}

// SWE-agent's .traj: info.model_stats {tokens_sent, tokens_received, instance_cost,
// api_calls} (sweagent/agent/agents.py, save_trajectory).
std::optional<Usage> SweAgentUsage(const json& j) {
  if (!j.is_object() || !j.contains("info") || !j["info"].is_object()) return std::nullopt;
  const json& info = j["info"];
  if (!info.contains("model_stats") || !info["model_stats"].contains("tokens_sent")) {
    return std::nullopt;
  }
  const json& m = info["model_stats"];
  Usage u;
  u.input_tokens = Int(m, "tokens_sent");
  u.output_tokens = Int(m, "tokens_received");
  u.cost = Number(m, "instance_cost");
  if (m.contains("api_calls") && m["api_calls"].is_number_integer()) u.api_calls = Int(m, "api_calls");
  return u;
}

// mini-swe-agent's .traj.json: no totals of tokens; each assistant message carries its API
// response's usage (extra.response.usage {prompt_tokens, completion_tokens}, or for
// Responses-API models the message itself: usage {input_tokens, output_tokens}); cost and
// calls in info.model_stats {instance_cost, api_calls} (minisweagent/agents/default.py).
std::optional<Usage> MiniSweAgentUsage(const json& j) {
  if (!j.is_object() || !j.contains("messages") || !j["messages"].is_array()) return std::nullopt;
  if (!j.value("trajectory_format", "").starts_with("mini-swe-agent")) return std::nullopt;
  Usage u;
  for (const auto& m : j["messages"]) {
    if (!m.is_object()) continue;
    if (m.contains("extra") && m["extra"].is_object() && m["extra"].contains("response")) {
      const json& r = m["extra"]["response"];
      if (r.is_object() && r.contains("usage")) {
        u.input_tokens += Int(r["usage"], "prompt_tokens");
        u.output_tokens += Int(r["usage"], "completion_tokens");
      }
    } else if (m.contains("usage")) {
      u.input_tokens += Int(m["usage"], "input_tokens");
      u.output_tokens += Int(m["usage"], "output_tokens");
    }
  }
  if (j.contains("info") && j["info"].is_object() && j["info"].contains("model_stats")) {
    const json& s = j["info"]["model_stats"];
    u.cost = Number(s, "instance_cost");
    if (s.contains("api_calls") && s["api_calls"].is_number_integer()) u.api_calls = Int(s, "api_calls");
  }
  return u;
}

// OpenHands' evaluation output.jsonl (one EvalOutput per line): metrics
// {accumulated_cost, accumulated_token_usage {prompt_tokens, completion_tokens},
// token_usages: one per call} (evaluation/utils/shared.py, openhands/llm/metrics.py).
std::optional<Usage> OpenHandsUsage(const json& j) {
  if (!j.is_object() || !j.contains("metrics") || !j["metrics"].is_object()) return std::nullopt;
  const json& m = j["metrics"];
  if (!m.contains("accumulated_token_usage")) return std::nullopt;
  Usage u;
  u.input_tokens = Int(m["accumulated_token_usage"], "prompt_tokens");
  u.output_tokens = Int(m["accumulated_token_usage"], "completion_tokens");
  u.cost = Number(m, "accumulated_cost");
  if (m.contains("token_usages") && m["token_usages"].is_array()) {
    u.api_calls = static_cast<int64_t>(m["token_usages"].size());
  }
  return u;
}

// AutoCodeRover's cost.json: {model, total_input_tokens, total_output_tokens, total_cost}
// (app/main.py, nus-apr/auto-code-rover 3536ac29); it counts no calls.
std::optional<Usage> AutoCodeRoverUsage(const json& j) {
  if (!j.is_object() || !j.contains("total_input_tokens") || !j.contains("total_output_tokens")) {
    return std::nullopt;
  }
  Usage u;
  u.input_tokens = Int(j, "total_input_tokens");
  u.output_tokens = Int(j, "total_output_tokens");
  u.cost = Number(j, "total_cost");
  return u;
}

// The usage in a trajectory file of a format fbkit reads (a JSON document, or JSON Lines
// whose first record with usage counts).
std::optional<Usage> TrajectoryUsage(const std::string& text) {
  auto one = [](const json& j) -> std::optional<Usage> {
    for (auto reader : {SweAgentUsage, MiniSweAgentUsage, OpenHandsUsage, AutoCodeRoverUsage}) {
      if (auto u = reader(j)) return u;
    }
    return std::nullopt;
  };
  json whole = util::ParseUntrustedJson(text);
  if (!whole.is_discarded()) return one(whole);
  for (size_t b = 0, e; b < text.size(); b = e + 1) {
    e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    json line = util::ParseUntrustedJson(text.substr(b, e - b));
    if (line.is_discarded()) continue;
    if (auto u = one(line)) return u;
  }
  return std::nullopt;
}

// The usage in an agent CLI's event stream output/REL (claude-code, codex, gemini-cli: the
// formats agents/trajectory.h reads), when it reports tokens.
std::optional<Usage> AgentCliUsage(util::Env& env, const std::string& output, const std::string& rel,
                                   const std::string& text) {
  auto format = agents::DetectFormat(text, rel);
  if (!format || !agents::IsAgentCliFormat(*format)) return std::nullopt;
  auto t = agents::ReadAgentStream(env, text, util::JoinPath(output, rel), rel, *format);
  if (!t.ok() || !t->prompt_tokens || !t->completion_tokens) return std::nullopt;
  Usage u;
  u.input_tokens = *t->prompt_tokens;
  u.output_tokens = *t->completion_tokens;
  u.cost = t->cost;
  u.api_calls = t->api_calls.value_or(-1);
  return u;
}

// What the sandbox shows an agent of `options` (its workspace and output aside).
sandbox::Sandbox AgentView(const InferOptions& options) {
  sandbox::Sandbox view;
  view.kind = options.sandbox;
  view.read_only = options.read_only;
  view.hidden = options.hidden;
  view.hidden.push_back(options.run_dir);
  return view;
}

const char* kSandboxShows =
    "the agent's sandbox shows the system's programs and libraries (/usr/bin, /usr/lib/<arch>, "
    "/etc; no other part of /usr, nor /opt), the task's interpreter, its workspace and output, "
    "and the paths given with --read-only; /tmp, /var/tmp and home directories are private and "
    "empty";

// The words of `cmd` that name programs or paths: the first word of each simple command
// (after VAR=value and `exec`) and every other word starting with '/' but a redirection's
// target. Words with expansions are left out.
std::vector<std::pair<std::string, bool>> CommandWords(const std::string& cmd) {
  std::vector<std::pair<std::string, bool>> out;  // (word, is a command's first word)
  std::string word;
  bool first = true, quoted = false, redirected = false;
  char quote = 0;
  auto flush = [&] {
    if (!word.empty() && word.find_first_of("$`{*?") == std::string::npos) {
      bool assignment = !quoted && word.find('=') != std::string::npos && word[0] != '/';
      bool wanted = first || (word[0] == '/' && !redirected);
      if (!assignment && wanted) out.emplace_back(word, first);
      if (!assignment && word != "exec") first = false;
    }
    if (!word.empty()) redirected = false;
    word.clear();
    quoted = false;
  };
  for (char c : cmd) {
    if (quote) {
      if (c == quote) quote = 0;
      else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      quoted = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      flush();
    } else if (c == ';' || c == '|' || c == '&' || c == '(' || c == ')') {
      flush();
      first = true;
    } else if (c == '<' || c == '>') {
      flush();
      first = false;
      redirected = true;
    } else {
      word += c;
    }
  }
  flush();
  return out;
}

// A program on PATH that the sandbox shows (the sandbox has the host's PATH).
bool VisibleOnPath(const sandbox::Sandbox& view, const std::string& name) {
  return !sandbox::FindProgram(name, [&](const std::string& candidate) {
            return sandbox::VisibleInSandbox(view, candidate);
          }).empty();
}

// The outer shell's own message when the command could not start (exit 126/127): the log's
// last line, "sh: ..." or "/bin/sh: ..." saying not found or not executable; "" otherwise
// (an agent that ran and exited 127 by itself says something else last).
std::string StartFailure(util::Env& env, const std::string& log_path) {
  auto log = env.ReadTail(log_path, 4096);
  if (!log.ok()) return "";
  const std::string& tail = *log;
  std::string last;
  for (const auto& [n, line] : util::NumberedLines(tail)) {
    if (!util::Trim(line).empty()) last = line;
  }
  if (!last.starts_with("sh: ") && !last.starts_with("/bin/sh: ")) return "";
  for (const char* what : {": not found", ": Permission denied", ": No such file or directory",
                           ": Can't open", ": can't open"}) {
    if (last.find(what) != std::string::npos) return last;
  }
  return "";
}

}  // namespace

util::Status CheckAgentCommand(util::Env& env, const InferOptions& options) {
  if (options.sandbox == sandbox::SandboxKind::kNone) return util::Status::Ok();
  // Paths compared as they resolve: a link must not show what its name does not.
  auto real = [&env](const std::string& p) {
    auto r = env.RealPath(p);
    return r.ok() ? *r : p;
  };
  auto overlaps = [](const std::string& a, const std::string& b) {
    return a == b || (a + "/").starts_with(b == "/" ? b : b + "/") ||
           (b + "/").starts_with(a == "/" ? a : a + "/");
  };
  for (const auto& p : options.read_only) {
    std::string shown = real(p);
    if (!options.run_dir.empty() && overlaps(real(options.run_dir), shown)) {
      return util::Error{"--read-only " + p + " would show the agent the run directory " +
                         options.run_dir + " (other instances, fbkit's records of their starts)"};
    }
    for (const auto& h : options.hidden) {
      if (overlaps(real(h), shown)) {
        return util::Error{"--read-only " + p + " would show the agent the task directory " + h +
                           " (its gold patch and tests)"};
      }
    }
  }
  // A container shows its image's system, which the host cannot check the command against.
  if (options.sandbox == sandbox::SandboxKind::kContainer) return util::Status::Ok();
  sandbox::Sandbox view = AgentView(options);
  for (const auto& [word, is_command] : CommandWords(options.agent_cmd)) {
    std::string why;
    if (word[0] == '/') {
      if (env.Stat(word, true).ok() && !sandbox::VisibleInSandbox(view, word)) why = word;
    } else if (is_command && word.find('/') == std::string::npos) {
      std::string host = sandbox::FindProgram(word);
      if (!host.empty() && !VisibleOnPath(view, word)) why = word + " (" + host + " on the host)";
    }
    if (!why.empty()) {
      return util::Error{"the agent command names " + why + ", which the agent will not see: " +
                         kSandboxShows + ". Expose it with --read-only PATH (its installation "
                         "directory), or install it under a system path"};
    }
  }
  return util::Status::Ok();
}

std::string SubstituteCommand(const std::string& cmd, const std::string& instance_id,
                              const std::string& workspace, const std::string& statement) {
  std::string out;
  for (size_t i = 0; i < cmd.size();) {
    bool hit = false;
    for (const auto& [key, value] : {std::pair<std::string, const std::string*>{"{instance_id}", &instance_id},
                                     {"{workspace}", &workspace},
                                     {"{problem_statement}", &statement}}) {
      if (cmd.compare(i, key.size(), key) == 0) {
        out += *value;
        i += key.size();
        hit = true;
        break;
      }
    }
    if (!hit) out += cmd[i++];
  }
  return out;
}

std::optional<Usage> ReadUsage(util::Env& env, const std::string& instance_dir) {
  std::string output = agents::InferInstanceDir{instance_dir}.output();
  auto text = env.ReadUntrusted(output, "usage.json", 1 << 20);
  if (text.ok()) {
    if (auto u = agents::ParseUsage(*text, "usage.json")) return u;
  }
  // What the agent left there is read within a budget: its own files first, then the first
  // of those below (a walk in name order that looks at no more than kMaxEntries entries, so
  // the caches of a home directory there cannot stall it), kMaxFiles in all, read in name
  // order, kMaxBytes together; a directory it cannot list is passed over.
  constexpr size_t kMaxFiles = 1000, kMaxEntries = 10 * kMaxFiles;
  constexpr uint64_t kMaxBytes = 64u << 20;
  std::vector<std::string> files;
  size_t seen = 0;
  auto take = [&](const std::string& rel, util::FileType type) {
    if (files.size() >= kMaxFiles || ++seen > kMaxEntries) return false;
    if (type == util::FileType::kRegular) files.push_back(rel);
    return type == util::FileType::kDirectory;
  };
  auto top = env.ListDir(output);
  std::vector<std::string> dirs;
  for (const auto& e : top.ok() ? *top : std::vector<util::DirEntry>{}) {
    if (take(e.name, e.type)) dirs.push_back(e.name);
  }
  for (const auto& dir : dirs) {
    util::WalkTree(env, util::JoinPath(output, dir), [&](const std::string& rel, util::FileType type) {
      return take(util::JoinPath(dir, rel), type);
    });
  }
  std::sort(files.begin(), files.end());
  uint64_t budget = kMaxBytes;
  for (const auto& rel : files) {
    if (rel == "usage.json" || budget == 0) continue;
    auto data = env.ReadUntrusted(output, rel, budget);
    if (!data.ok()) continue;
    budget -= std::min<uint64_t>(budget, data->size());
    if (auto u = rel.find('/') == std::string::npos ? AgentCliUsage(env, output, rel, *data)
                                                    : std::nullopt) {
      u->source = "output/" + rel;
      return u;
    }
    if (auto u = TrajectoryUsage(*data)) {
      u->source = "output/" + rel;
      return u;
    }
  }
  return std::nullopt;
}

namespace {

// The instance's directories made afresh, the workspace prepared, the problem statement and
// the preset's output files written; an error says which step failed. `spec`: the task's
// (its image and engine, for a container's git).
util::Status PrepareInstance(util::Env& env, runner::Git& git, const Layout& l,
                             const std::string& task_dir, const runner::RepoSpec& spec, int level,
                             const InferOptions& options) {
  // An earlier run's leftovers must go entirely: its output/ was the agent's (a link left
  // there would be written through below). A tree its agent made too deep or locked for
  // fbkit to remove is moved aside, under RUN_DIR/.fbkit/trash/ (red team round
  // 12: a 300-level chain ending in a locked directory failed every re-run).
  if (auto s = env.RemoveAll(l.inst); !s.ok()) {
    const std::string& trash = l.trash;
    std::string id = l.inst.substr(l.inst.rfind('/') + 1);
    std::string aside = util::JoinPath(trash, id + "." + std::to_string(env.NowNs()));
    if (!env.MakeDirs(trash).ok() || !env.Rename(l.inst, aside).ok()) {
      return util::Error{"removing the earlier run's " + l.inst + ": " + s.error()};
    }
  }
  (void)env.RemoveAll(l.base);
  (void)env.RemoveAll(l.scratch);
  for (const auto& dir : {l.inst, util::DirName(l.statement), l.output}) {
    if (auto s = env.MakeDirs(dir); !s.ok()) return s;
  }
  runner::RepoSpec tools;
  tools.sandbox = options.sandbox;
  tools.image_name = spec.image_name;
  tools.container_engine = spec.container_engine;
  auto real = env.RealPath(task_dir);  // the path git sees inside its sandbox
  const std::string task = real.ok() ? *real : task_dir;
  git.Confine(runner::ToolSandbox(tools, {l.inst, util::DirName(l.base)}, {task}));
  if (auto s = PrepareWorkspace(env, git, l, task, level); !s.ok()) {
    return util::Error{"preparing the workspace: " + s.error()};
  }
  // The task's file, never what a link there names on the host (it reaches the agent).
  auto statement = env.ReadUntrusted(task_dir, "problem_statement.md", 16u << 20);
  if (!statement.ok()) return statement.failure();
  if (auto s = env.WriteFileAtomic(l.statement, *statement); !s.ok()) return s;
  for (const auto& [rel, content] : options.output_files) {
    std::string path = util::JoinPath(l.output, rel);
    if (auto s = env.MakeDirs(util::DirName(path)); !s.ok()) return s;
    if (auto s = env.WriteFileAtomic(path, content); !s.ok()) return s;
  }
  return util::Status::Ok();
}

// The agent's network: --network's, else the model's endpoints when the task's spec allows
// the network (an agent talks to its model; the tests' network is no licence for more).
AgentNetwork NetworkOf(const InferOptions& options, const taskdir::Instance& info) {
  return options.network.value_or(info.spec.network ? AgentNetwork::kModel : AgentNetwork::kNone);
}

// Under --network model: fbkit's proxy on a unix socket of its own, bound into the sandbox,
// and the agent's command preceded by the forwarder that carries its loopback port there;
// the proxy variables name that port. Nothing (and no network) without endpoints.
constexpr int kProxyPort = 3128;
constexpr char kProxySocket[] = "/run/fbkit/model.sock";

util::Expected<std::unique_ptr<sandbox::ModelProxy>> StartModelProxy(
    const InferOptions& options, const taskdir::Instance& info, std::string* dir,
    sandbox::ProcessSpec* spec) {
  if (NetworkOf(options, info) != AgentNetwork::kModel || options.endpoints.empty() ||
      options.sandbox == sandbox::SandboxKind::kNone) {
    return std::unique_ptr<sandbox::ModelProxy>();
  }
  // In a container the forwarder is the image's interpreter (the spec's, found on its PATH).
  std::string python = options.sandbox == sandbox::SandboxKind::kContainer ? info.spec.python
                                                                          : sandbox::FindProgram(info.spec.python);
  if (python.empty()) {
    return util::Error{"--network model: the task's interpreter " + info.spec.python +
                       " (which runs the proxy's forwarder in the sandbox) is not found"};
  }
  auto made = sandbox::SocketDir();
  if (!made.ok()) return util::Error{"--network model: " + made.error()};
  *dir = *made;
  std::string socket = util::JoinPath(*dir, "s");
  auto proxy = sandbox::ModelProxy::Start(socket, options.endpoints);
  if (!proxy.ok()) return util::Error{"--network model: " + proxy.error()};
  spec->sandbox.binds.push_back({socket, kProxySocket, false});
  std::string url = "http://127.0.0.1:" + std::to_string(kProxyPort);
  for (const char* name : {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"}) {
    spec->vars.emplace_back(name, url);
  }
  spec->vars.emplace_back("NO_PROXY", "");
  spec->vars.emplace_back("no_proxy", "");
  spec->argv.back() = sandbox::ForwarderCommand(python, kProxyPort, kProxySocket) +
                      " || echo 'fbkit: the model proxy forwarder did not start' >&2\n" +
                      spec->argv.back();
  return proxy;
}

// The agent's process: its command in the workspace, fbkit's variables, and a sandbox that
// may write only the workspace and output/.
sandbox::ProcessSpec AgentSpec(const InferOptions& options, const Layout& l,
                              const taskdir::Instance& info) {
  sandbox::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c",
               SubstituteCommand(options.agent_cmd, info.instance_id, l.workspace, l.statement)};
  spec.cwd = l.workspace;
  // git in the workspace (which belongs to fbkit's user, not the agent's) not refused as
  // "dubious ownership"; the agent's own variables come after and may say otherwise.
  spec.vars = {{"GIT_CONFIG_COUNT", "1"},
              {"GIT_CONFIG_KEY_0", "safe.directory"},
              {"GIT_CONFIG_VALUE_0", "*"}};
  spec.vars.insert(spec.vars.end(), options.vars.begin(), options.vars.end());
  spec.vars.insert(spec.vars.end(), {{"FBKIT_INSTANCE_ID", info.instance_id},
                                   {"FBKIT_PROBLEM_STATEMENT", l.statement},
                                   {"FBKIT_WORKSPACE", l.workspace},
                                   {"FBKIT_LEVEL", std::to_string(info.level)},
                                   {"FBKIT_USAGE", util::JoinPath(l.output, "usage.json")},
                                   {"FBKIT_OUTPUT_DIR", l.output}});
  spec.log_path = l.agent_log;
  spec.sandbox.kind = options.sandbox;
  if (options.sandbox == sandbox::SandboxKind::kContainer) {
    spec.sandbox.container = {info.spec.container_engine, info.spec.image_name};
  }
  spec.sandbox.network = NetworkOf(options, info) == AgentNetwork::kFull;
  spec.sandbox.limits = info.spec.limits;
  if (options.memory_mb >= 0) spec.sandbox.limits.memory_mb = options.memory_mb;
  if (options.processes >= 0) spec.sandbox.limits.processes = options.processes;
  spec.sandbox.hidden = options.hidden;
  spec.sandbox.hidden.push_back(options.run_dir);  // other instances and fbkit's snapshots
  // A container's image's own project (an L1 image's pre-solved tree) is not the workspace.
  if (options.sandbox == sandbox::SandboxKind::kContainer) spec.sandbox.hidden.push_back(sandbox::kImageTestbed);
  spec.sandbox.read_only = options.read_only;
  spec.sandbox.read_only.push_back(util::DirName(l.statement));
  // The task's interpreter (its standard library and packages), as its tests run it; a
  // container's is its image's.
  if (options.sandbox != sandbox::SandboxKind::kContainer) {
    for (const auto& dir : sandbox::InterpreterDirs(info.spec.python)) spec.sandbox.read_only.push_back(dir);
  }
  // Only its workspace and output: its log, result and patch beside them are fbkit's.
  spec.sandbox.writable = {l.workspace, l.output};
  return spec;
}

// The task's packages as no copy the agent's sandbox may show beside its workspace (a
// vendored copy, another interpreter's site-packages): refused, hidden or allowed as the
// task's spec says (sandbox/exposure.h).
util::Status GuardAgentView(util::Env& env, sandbox::Launcher& launcher, const std::string& task_dir,
                            const Layout& l, const taskdir::Instance& info, const InferOptions& options,
                            sandbox::Sandbox* sandbox, InferResult* r) {
  // The original tree: the task's presolved/, an L2 task's L1 sibling's (its own is empty).
  taskdir::TaskDir task{task_dir};
  if (info.level == 2) {
    if (auto l1 = taskdir::Level1Task(env, task); l1.ok()) task = *l1;
  }
  auto presolved = taskdir::PlainPresolved(env, task);
  std::string tree = presolved.ok() ? *presolved : "";
  auto packages = taskdir::OriginalPackagesIn(env, info.top_objects, tree);
  auto copies = sandbox::GuardCopies(env, sandbox, sandbox::CurrentHost(), packages,
                                    {l.workspace, l.output},
                                    options.exposed_copies.value_or(info.spec.exposed_copies),
                                    "the agent's sandbox of " + info.instance_id, &launcher, l.scratch);
  if (!copies.ok()) return copies.failure();
  for (const auto& c : *copies) r->exposed_copies.push_back(c.path);
  return util::Status::Ok();
}

// An agent command the shell could not start (126, 127): an error naming the first line of
// its log, and what the sandbox shows.
void ExplainStartFailure(util::Env& env, const std::string& log_path, int code, InferResult* r) {
  if (code != 126 && code != 127) return;
  std::string line = StartFailure(env, log_path);
  if (line.empty()) return;
  r->status = InferStatus::kError;
  r->could_not_start = true;
  r->error = "the agent command could not start (exit " + std::to_string(code) + ": " + line +
             "); " + kSandboxShows + ". Expose what it needs with --read-only PATH";
  if (line.find("Permission denied") != std::string::npos && ::geteuid() == 0) {
    r->error += " (when fbkit runs as root the agent runs as nobody, uid " +
                std::to_string(sandbox::kSandboxUid) + ": its files must be readable, and its "
                "programs executable, by others)";
  }
}

// What the agent left: the workspace defused, its patch collected and written, its usage.
void CollectRun(util::Env& env, sandbox::Launcher& launcher, runner::Git& git, const Layout& l,
                const runner::RepoSpec& spec, const InferOptions& options, InferResult* r) {
  // From here on git reads a tree the agent wrote: inside the sandbox, the workspace
  // read-only, only fbkit's snapshot (whose configuration is fixed) writable.
  runner::RepoSpec tools = spec;
  tools.sandbox = options.sandbox;
  // What git writes and prints here is bounded well below a test run's files: a listing of
  // the agent's changes past it is an error, not a gigabyte read into memory (red team round
  // 12: 100,000 files with 4 KiB paths took fbkit 1.8 GB).
  if (tools.limits.file_size_mb <= 0 || tools.limits.file_size_mb > kMaxCollectMb) {
    tools.limits.file_size_mb = kMaxCollectMb;
  }
  git.Confine(runner::ToolSandbox(tools, {l.base}, {l.workspace}));
  util::Status defused = options.sandbox != sandbox::SandboxKind::kNone
                             ? DefuseWorkspace(env, launcher, l, runner::ToolSandbox(tools, {l.workspace}, {}))
                             : util::Status::Ok();
  if (!defused.ok()) {
    r->status = InferStatus::kError;
    r->error = defused.error();
  } else if (auto s = CollectPatch(env, git, l, options.max_file_kb, options.max_patch_mb, r); !s.ok()) {
    r->status = InferStatus::kError;
    r->error = "collecting the patch: " + s.error();
  }
  r->patch_sha256 = util::Sha256Hex(r->patch);
  if (auto s = env.WriteFileAtomic(l.patch, r->patch); !s.ok()) {
    r->status = InferStatus::kError;
    r->error = "writing patch.diff: " + s.error();
  }
  r->usage = ReadUsage(env, l.inst);
}

// What of the task's repo_settings the agent's sandbox takes (its network, unless --network
// says, and its limits, unless given) may not widen it unless the user vouches for the task.
util::Status CheckAgentSettings(const std::string& task_dir, const taskdir::Instance& info,
                                const InferOptions& options) {
  runner::RepoSpec taken;  // never the host's network: a task's asks for the model's at most
  taken.limits = info.spec.limits;
  if (options.memory_mb >= 0) taken.limits.memory_mb = runner::RepoSpec{}.limits.memory_mb;
  if (options.processes >= 0) taken.limits.processes = runner::RepoSpec{}.limits.processes;
  return taskdir::CheckTaskSettings(taskdir::TaskDir{task_dir}, taken, options.trust_settings);
}

}  // namespace

InferResult RunAgent(util::Env& env, sandbox::Launcher& launcher, const std::string& task_dir,
                     const InferOptions& options) {
  auto start = Clock::now();
  InferResult r;
  r.status = InferStatus::kError;
  auto info = taskdir::ReadInstance(env, taskdir::TaskDir{task_dir});
  if (!info.ok()) return r.error = info.error(), r;
  if (auto s = CheckAgentSettings(task_dir, *info, options); !s.ok()) {
    return r.error = s.error(), r;
  }
  r.instance_id = info->instance_id;
  r.level = info->level;
  if (options.sandbox == sandbox::SandboxKind::kContainer) {
    auto used = runner::UseContainerImage(options.images, options.engine, info->instance_id, "task",
                                          &info->spec);
    if (!used.ok()) return r.error = used.error(), r;
  }
  Layout l = LayoutOf(options.run_dir, r.instance_id);
  runner::GitProgram git(env, launcher, l.scratch);
  if (auto s = PrepareInstance(env, git, l, task_dir, info->spec, r.level, options); !s.ok()) {
    return r.error = s.error(), r;
  }
  sandbox::ProcessSpec spec = AgentSpec(options, l, *info);
  if (auto s = GuardAgentView(env, launcher, task_dir, l, *info, options, &spec.sandbox, &r); !s.ok()) {
    return r.error = s.error(), r;
  }
  std::string proxy_dir;
  auto proxy = StartModelProxy(options, *info, &proxy_dir, &spec);
  if (!proxy.ok()) return r.error = proxy.error(), r;
  AgentNetwork had = NetworkOf(options, *info);
  if (options.sandbox == sandbox::SandboxKind::kNone) had = AgentNetwork::kFull;  // the host's
  if (had == AgentNetwork::kModel && !*proxy) had = AgentNetwork::kNone;  // no endpoint named
  r.network = AgentNetworkName(had);
  double prepared = Since(start);
  auto agent_start = Clock::now();
  auto exit = sandbox::RunToCompletion(launcher, spec, options.timeout);
  if (*proxy) {
    r.network_refused = (*proxy)->Refused();
    proxy->reset();
    (void)env.RemoveAll(proxy_dir);
  }
  r.agent_seconds = Since(agent_start);
  auto collect_start = Clock::now();
  if (!exit.ok()) return r.error = "the agent could not be started: " + exit.error(), r;
  r.exit_code = exit->code;
  r.signal = exit->signal;
  r.status = exit->timed_out ? InferStatus::kTimedOut : InferStatus::kFinished;
  ExplainStartFailure(env, spec.log_path, exit->code, &r);
  CollectRun(env, launcher, git, l, info->spec, options, &r);
  (void)env.RemoveAll(l.scratch);
  r.fbkit_seconds = prepared + Since(collect_start);
  return r;
}

const char* AgentNetworkName(AgentNetwork network) {
  switch (network) {
    case AgentNetwork::kModel: return "model";
    case AgentNetwork::kFull: return "full";
    default: return "none";
  }
}

}  // namespace fbkit::extract::infer

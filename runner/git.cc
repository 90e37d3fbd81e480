#include "runner/git.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "util/hash.h"
#include "runner/spec.h"
#include "util/strings.h"

namespace fbkit::runner {

std::atomic<int> GitProgram::counter_{0};

namespace {

// The safe.directory entries of the user's own global git configuration: host-side git
// reads no global or system configuration (a filter or diff driver defined there would run
// on content sandboxed code wrote, and options like diff.noprefix would change patches),
// but the repositories the user declared safe stay safe. Read once per process.
const std::vector<std::string>& UserSafeDirectories(sandbox::Launcher& launcher, util::Env& env,
                                                    const std::string& scratch) {
  static std::once_flag once;
  static std::vector<std::string> dirs;
  std::call_once(once, [&] {
    sandbox::ProcessSpec spec;
    spec.argv = {"git", "config", "--global", "--get-all", "safe.directory"};
    spec.cwd = "/";
    if (!env.MakeDirs(scratch).ok()) return;
    spec.log_path = util::JoinPath(scratch, "git-safe-" + std::to_string(::getpid()) + ".log");
    auto exit = sandbox::RunToCompletion(launcher, spec);
    auto out = env.ReadFile(spec.log_path);
    (void)env.RemoveAll(spec.log_path);  // a leftover log costs nothing; the entries matter
    if (!exit.ok() || exit->code != 0 || !out.ok()) return;
    for (const auto& line : util::Split(*out, '\n')) {
      if (!line.empty()) dirs.push_back(line);
    }
  });
  return dirs;
}

// What confined git reads as the work copy's own configuration: nothing but the defaults.
constexpr std::string_view kPlainGitConfig =
    "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfilemode = true\n";

// The C-quoted file name git writes for unusual paths ("a/\303\251.py"), unquoted.
std::string Unquote(std::string_view s) {
  if (s.size() < 2 || s.front() != '"' || s.back() != '"') return std::string(s);
  std::string out;
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    if (s[i] != '\\' || i + 2 >= s.size()) {
      out.push_back(s[i]);
      continue;
    }
    char c = s[++i];
    if (c >= '0' && c <= '7') {
      int v = 0;
      for (int k = 0; k < 3 && i + 1 < s.size() && s[i] >= '0' && s[i] <= '7'; ++k, ++i) {
        v = v * 8 + (s[i] - '0');
      }
      --i;
      out.push_back(static_cast<char>(v));
    } else {
      out.push_back(c == 'n' ? '\n' : c == 't' ? '\t' : c);
    }
  }
  return out;
}

// Why one file name of a patch header is unsafe, or "".
std::string PathProblem(std::string path) {
  if (path == "/dev/null") return "";
  if (path.starts_with("/")) return "an absolute path (" + path + ")";
  for (const auto& part : util::Split(path, '/')) {
    std::string lower;
    for (char ch : part) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
    while (!lower.empty() && (lower.back() == '.' || lower.back() == ' ')) lower.pop_back();
    if (part == "..") return "a path that climbs out of the work copy (" + path + ")";
    if (lower == ".git") return "a path inside a git directory (" + path + ")";
  }
  return "";
}

// The tree path of a patch's file name ("b/dir/name" -> "dir/name"), "" for a bare name.
std::string TreePath(const std::string& name) {
  size_t slash = name.find('/');
  return slash == std::string::npos ? "" : name.substr(slash + 1);
}

// Why a link at `link` ("b/dir/name") pointing to `target` leaves the tree or enters a git
// directory, or "": the target is resolved component by component from the link's
// directory, through every link the patch makes (`links`: tree path -> target, whatever
// their order in the patch), so a chain of links that each stay inside cannot lead out
// together.
std::string LinkProblem(const std::string& link, const std::string& target,
                        const std::map<std::string, std::string>& links) {
  auto joined = [](const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
    return out;
  };
  std::vector<std::string> at = util::Split(link, '/');
  if (at.size() < 2) return "";
  at.erase(at.begin());  // the a/ or b/ prefix
  at.pop_back();         // the link's own name
  std::vector<std::string> pending = util::Split(target, '/');
  std::reverse(pending.begin(), pending.end());
  if (target.starts_with("/")) return "an absolute target";
  for (int steps = 0; !pending.empty(); ++steps) {
    if (steps > 1000) return "too many links to resolve";
    std::string part = pending.back();
    pending.pop_back();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (at.empty()) return "it climbs out of the work copy";
      at.pop_back();
      continue;
    }
    if (!PathProblem(part).empty()) return "it enters a git directory";
    at.push_back(part);
    auto other = links.find(joined(at));
    if (other == links.end()) continue;
    if (other->second.starts_with("/")) return "an absolute target";
    at.pop_back();  // replaced by what that link points to
    std::vector<std::string> more = util::Split(other->second, '/');
    for (auto it = more.rbegin(); it != more.rend(); ++it) pending.push_back(*it);
  }
  return "";
}

}  // namespace

std::string TreePathProblem(const std::string& path) {
  if (path.empty()) return "an empty path";
  if (path.starts_with("/")) return "an absolute path (" + path + ")";
  return PathProblem(path);
}

std::string PatchPathProblem(std::string_view patch) {
  int64_t old_left = 0, new_left = 0;
  bool symlink = false;  // the file of the current header is a symbolic link
  std::string link;      // the current header's file (its new name)
  std::vector<std::pair<std::string, std::string>> made;  // (link, target), in patch order
  std::string line;  // one at a time: a patch of 64 MiB of newlines is 64 Mi lines
  for (size_t b = 0; b <= patch.size();) {
    size_t e = std::min(patch.find('\n', b), patch.size());
    line.assign(patch.substr(b, e - b));
    b = e + 1;
    if (old_left > 0 || new_left > 0) {
      char c = line.empty() ? ' ' : line[0];
      if (symlink && c == '+') {
        // A link's target, checked once every link is known: one pointing out of the tree
        // or into git's directory would let a later hunk (or GNU patch) write there
        // through it, or fbkit read there.
        made.emplace_back(link, line.substr(1));
      }
      if (c == ' ' || line.empty()) --old_left, --new_left;
      else if (c == '-') --old_left;
      else if (c == '+') --new_left;
      else if (c != '\\') old_left = new_left = 0;  // a malformed hunk ends here
      continue;
    }
    if (line.starts_with("@@ ")) {
      auto count = [&](char sign) -> int64_t {
        size_t at = line.find(sign, 3);
        if (at == std::string::npos) return 0;
        size_t comma = line.find_first_of(", ", at);
        if (comma == std::string::npos || line[comma] != ',') return 1;
        return std::atoll(line.c_str() + comma + 1);
      };
      old_left = count('-');
      new_left = count('+');
      continue;
    }
    std::string name;
    for (const char* head : {"--- ", "+++ ", "rename from ", "rename to ", "copy from ",
                             "copy to ", "Index: "}) {
      if (line.starts_with(head)) name = line.substr(std::string_view(head).size());
    }
    // A link, by whichever header says so: its mode, or the mode on its `index` line (a
    // second diff of a path can retarget a link with no mode line).
    if (line.starts_with("new file mode 120000") || line.starts_with("new mode 120000") ||
        (line.starts_with("index ") && line.ends_with(" 120000"))) {
      symlink = true;
    }
    if (line.starts_with("diff --git ")) {
      symlink = false;
      // Both names, split at " b/" when unquoted; each checked whole and with its prefix.
      std::string rest = line.substr(11);
      size_t mid = rest.find(" b/");
      for (const std::string& n : {rest.substr(0, mid), mid == std::string::npos ? "" : rest.substr(mid + 1)}) {
        if (std::string why = PathProblem(Unquote(n)); !why.empty()) return why;
      }
      continue;
    }
    if (name.empty()) continue;
    if (size_t tab = name.find('\t'); tab != std::string::npos) name.resize(tab);
    if (line.starts_with("+++ ")) link = Unquote(name);
    if (std::string why = PathProblem(Unquote(name)); !why.empty()) return why;
  }
  std::map<std::string, std::string> links;  // every link the patch makes: path -> target
  for (const auto& [at, target] : made) links[TreePath(at)] = target;
  for (const auto& [at, target] : made) {
    if (std::string why = LinkProblem(at, target, links); !why.empty()) {
      return "a symbolic link " + at + " -> " + target + " (" + why + ")";
    }
  }
  return "";
}

namespace {

// The --git-dir=DIR a command names, "" when none (the last one counts, as for git).
std::string GitDirArgument(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) {
    if (a.starts_with("--git-dir=")) out = a.substr(10);
  }
  return out;
}

}  // namespace

util::Expected<sandbox::Sandbox> GitProgram::CommandSandbox(const std::string& cwd,
                                            const std::vector<std::string>& args) {
  sandbox::Sandbox sandbox = sandbox_;
  if (!confined()) return sandbox;
  std::string fixed = util::JoinPath(scratch_, "fixed.gitconfig");
  std::string global = FixedGlobalConfig();
  if (!env_.Stat(global, false).ok()) {
    if (auto s = env_.WriteFileAtomic(fixed, kPlainGitConfig); !s.ok()) return s.failure();
    if (auto s = env_.WriteFileAtomic(global, "[safe]\n\tdirectory = *\n"); !s.ok()) {
      return s.failure();
    }
  }
  sandbox.read_only.push_back(scratch_);
  std::string git_dir = GitDirArgument(args);
  if (git_dir.empty()) git_dir = util::JoinPath(cwd, ".git");
  std::string config = util::JoinPath(git_dir, "config");
  if (env_.Stat(config, false).ok()) sandbox.overlays.push_back(sandbox::Bind{fixed, config, false});
  return sandbox;
}

std::string UninertSetting(const std::vector<std::string>& keys) {
  // Per section: the names allowed without a subsection, and with one ("*": any name).
  struct Allowed {
    std::set<std::string> plain, sub;
  };
  static const std::map<std::string, Allowed> kInert = {
      {"core",
       {{"repositoryformatversion", "filemode", "bare", "logallrefupdates", "ignorecase",
         "precomposeunicode", "symlinks", "autocrlf", "eol", "safecrlf", "quotepath", "abbrev",
         "compression", "loosecompression", "bigfilethreshold", "untrackedcache", "checkstat",
         "trustctime", "splitindex", "sparsecheckout", "sparsecheckoutcone", "commitgraph",
         "multipackindex", "packedgitlimit", "packedgitwindowsize", "deltabasecachelimit",
         "preloadindex", "longpaths", "protecthfs", "protectntfs", "warnambiguousrefs",
         "whitespace", "checkroundtripencoding", "fscache", "hidedotfiles", "worktree"},
        {}}},
      {"remote",
       {{},
        {"url", "pushurl", "fetch", "push", "tagopt", "mirror", "prune", "prunetags",
         "skipdefaultupdate", "skipfetchall", "followremotehead"}}},
      {"branch", {{"autosetupmerge", "autosetuprebase", "sort"},
                  {"remote", "merge", "rebase", "pushremote", "description"}}},
      {"extensions", {{"objectformat", "worktreeconfig", "preciousobjects", "refstorage"}, {}}},
      {"submodule", {{"active"}, {"url", "active", "branch", "ignore", "shallow"}}},
      {"user", {{"name", "email", "usecconfigonly", "useconfigonly"}, {}}},
      {"author", {{"name", "email"}, {}}},
      {"committer", {{"name", "email"}, {}}},
      {"init", {{"defaultbranch"}, {}}},
      {"index", {{"version", "sparse", "skiphash", "threads"}, {}}},
      {"gc", {{"auto", "autodetach", "autopacklimit", "pruneexpire", "reflogexpire",
               "reflogexpireunreachable", "writecommitgraph"}, {}}},
      {"pull", {{"rebase", "ff"}, {}}},
      {"push", {{"default", "autosetupremote", "followtags"}, {}}},
      {"fetch", {{"prune", "prunetags", "writecommitgraph"}, {}}},
      {"feature", {{"manyfiles", "experimental"}, {}}},
      {"diff", {{"renames", "algorithm", "mnemonicprefix", "noprefix", "context",
                 "interhunkcontext", "indentheuristic", "colormoved"}, {}}},
      {"merge", {{"ff", "conflictstyle", "renames"}, {}}},
      {"status", {{"showuntrackedfiles", "submodulesummary", "relativepaths"}, {}}},
      {"commit", {{"gpgsign", "verbose", "cleanup", "status"}, {}}},
      {"tag", {{"gpgsign", "sort"}, {}}},
      {"worktree", {{"guessremote"}, {}}},
      {"advice", {{"*"}, {}}},
      {"color", {{"*"}, {"*"}}},
      {"lfs", {{"*"}, {"*"}}},
  };
  for (const auto& key : keys) {
    size_t first = key.find('.'), last = key.rfind('.');
    if (first == std::string::npos) return key;
    std::string section = key.substr(0, first), name = key.substr(last + 1);
    auto it = kInert.find(section);
    if (it == kInert.end()) return key;
    const auto& names = first == last ? it->second.plain : it->second.sub;
    if (!names.count("*") && !names.count(name)) return key;
  }
  return "";
}

util::Expected<std::string> GitProgram::PlainGit(const std::string& cwd,
                                          const std::vector<std::string>& argv) {
  sandbox::ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = cwd;
  spec.vars = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_CONFIG_GLOBAL", "/dev/null"},
               {"GIT_NO_LAZY_FETCH", "1"}, {"LC_ALL", "C"}};
  if (auto s = env_.MakeDirs(scratch_); !s.ok()) return s.failure();
  spec.log_path = util::JoinPath(
      scratch_, "git-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++) + ".log");
  auto exit = sandbox::RunToCompletion(launcher_, spec, kConfinedSeconds);
  auto out = env_.ReadFile(spec.log_path);
  (void)env_.RemoveAll(spec.log_path);
  if (!exit.ok()) return util::Error{"git: " + exit.error()};
  if (exit->code != 0 || !out.ok()) return util::Error{out.ok() ? util::Trim(*out) : ""};
  return *out;
}

util::Expected<std::vector<std::string>> GitProgram::ConfigKeys(const std::string& config) {
  auto out = PlainGit("/", {"git", "config", "--file", config, "--list", "--null", "--name-only"});
  if (!out.ok()) {
    return util::Error{config + " cannot be read as git configuration: " + out.error()};
  }
  std::vector<std::string> keys;
  for (const auto& key : util::Split(*out, '\0')) {
    if (!key.empty()) keys.push_back(key);
  }
  return keys;
}

util::Status GitProgram::VetRepositoryConfig(const std::string& cwd,
                                      const std::vector<std::string>& args) {
  // The directories git itself uses for this command (asked of git: a repository laid out
  // to make fbkit's own reading differ, as a `gitdir:` line with two spaces, or an invalid
  // .git beside a bare repository, cannot make it read a configuration nobody vetted).
  const std::string asked = cwd + "\n" + GitDirArgument(args);
  auto known = git_dirs_.find(asked);
  if (known == git_dirs_.end()) {
    std::vector<std::string> argv = {"git"};
    for (const auto& dir : UserSafeDirectories(launcher_, env_, scratch_)) {
      argv.insert(argv.end(), {"-c", "safe.directory=" + dir});  // as Exec runs it
    }
    if (std::string d = GitDirArgument(args); !d.empty()) argv.push_back("--git-dir=" + d);
    argv.insert(argv.end(), {"rev-parse", "--absolute-git-dir", "--git-common-dir"});
    // Where git finds no repository (or fails to read one), the command itself finds none
    // either: nothing to vet, and nothing kept (a repository may be made there next).
    auto out = PlainGit(cwd, argv);
    std::vector<std::string> dirs;
    for (const auto& line : out.ok() ? util::Split(*out, '\n') : std::vector<std::string>{}) {
      if (!line.empty()) dirs.push_back(line.starts_with("/") ? line : util::JoinPath(cwd, line));
    }
    if (dirs.empty()) return util::Status::Ok();
    known = git_dirs_.emplace(asked, dirs).first;
  }
  std::vector<std::string> configs;
  for (const auto& dir : known->second) {
    configs.push_back(util::JoinPath(dir, "config"));
    configs.push_back(util::JoinPath(dir, "config.worktree"));
  }
  for (const auto& config : configs) {
    if (!env_.Stat(config, false).ok()) continue;  // no such file
    // Read as a file of the tree: a link, FIFO or device (/dev/zero) is refused, not read.
    auto text = env_.ReadUntrusted(util::DirName(config), config.substr(config.rfind('/') + 1),
                                   util::kMaxTreeFileBytes);
    if (!text.ok()) return util::Error{text.error() + ": fbkit runs no git over it"};
    std::string version = util::Md5Hex(*text);
    if (vetted_[config] == version) continue;
    auto keys = ConfigKeys(config);
    if (!keys.ok()) return keys.failure();
    if (std::string key = UninertSetting(*keys); !key.empty()) {
      return util::Error{config + " sets " + key + ", which fbkit does not know to be inert " +
                         "(settings can make git run a program, fetch, or read more " +
                         "configuration) on this host; fbkit runs no git over it: remove the " +
                         "setting, or give fbkit a fresh full clone"};
    }
    vetted_[config] = version;
  }
  return util::Status::Ok();
}

std::pair<int, std::string> GitProgram::Exec(const std::string& cwd,
                                      const std::vector<std::string>& args,
                                      const std::string& input) {
  if (!confined()) {
    if (auto s = VetRepositoryConfig(cwd, args); !s.ok()) return {-1, s.error()};
  }
  sandbox::ProcessSpec spec;
  spec.argv = {"git",
               "-c",
               "core.hooksPath=/dev/null",
               "-c",
               "commit.gpgsign=false",
               "-c",
               "core.autocrlf=false",
               "-c",
               "core.safecrlf=false",
               "-c",
               "core.quotepath=false",
               "-c",
               "advice.detachedHead=false",
               "-c",
               "init.defaultBranch=main",
               // Work trees fbkit reads back may hold what sandboxed code wrote: nothing in
               // them (nested repositories included) may make git run a program.
               "-c",
               "core.fsmonitor=false",
               "-c",
               "diff.ignoreSubmodules=all",
               "-c",
               "submodule.recurse=false",
               "-c",
               "core.attributesFile=/dev/null",
               // No transport that runs a command or leaves the host: a repository's
               // promisor remote cannot make a read fetch (its more specific
               // protocol.<name>.allow would beat a bare protocol.allow).
               "-c",
               "protocol.ext.allow=never",
               "-c",
               "protocol.fd.allow=never",
               "-c",
               "protocol.ssh.allow=never",
               "-c",
               "protocol.git.allow=never",
               "-c",
               "protocol.http.allow=never",
               "-c",
               "protocol.https.allow=never"};
  if (!confined()) {
    for (const auto& dir : UserSafeDirectories(launcher_, env_, scratch_)) {
      spec.argv.insert(spec.argv.end(), {"-c", "safe.directory=" + dir});
    }
  }
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd;
  spec.stdin_path = input;
  spec.vars = {{"GIT_AUTHOR_NAME", "fbkit"},
              {"GIT_AUTHOR_EMAIL", "fbkit@localhost"},
              {"GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z"},
              {"GIT_COMMITTER_NAME", "fbkit"},
              {"GIT_COMMITTER_EMAIL", "fbkit@localhost"},
              {"GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z"},
              {"GIT_CONFIG_NOSYSTEM", "1"},
              // Confined, git runs as another user over trees fbkit made, so ownership says
              // nothing there: every directory is safe, through a global file of fbkit's
              // (the `-c` settings do not reach the upload-pack of a local clone).
              {"GIT_CONFIG_GLOBAL", confined() ? FixedGlobalConfig() : "/dev/null"},
              {"GIT_ATTR_NOSYSTEM", "1"},
              {"GIT_TERMINAL_PROMPT", "0"},
              {"GIT_NO_LAZY_FETCH", "1"},
              {"LC_ALL", "C"}};
  if (auto s = env_.MakeDirs(scratch_); !s.ok()) return {-1, s.error()};
  auto sandbox = CommandSandbox(cwd, args);
  if (!sandbox.ok()) return {-1, sandbox.error()};
  spec.sandbox = *sandbox;
  spec.log_path = util::JoinPath(
      scratch_, "git-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++) + ".log");
  // What git says on stderr (warnings about a tree's .gitattributes, progress) is never part
  // of what it answers: a listing or a diff is its stdout alone (red team f: warnings whose
  // text the tree chose were read as a diff's lines). A failure's message has both.
  spec.err_path = spec.log_path + ".err";
  auto exit = sandbox::RunToCompletion(launcher_, spec, confined() ? kConfinedSeconds : 0);
  auto err = env_.ReadFile(spec.err_path);
  (void)env_.RemoveAll(spec.err_path);
  if (!exit.ok()) return {-1, "git: " + exit.error()};
  if (exit->timed_out) return {-1, "git: killed after " + std::to_string(int(kConfinedSeconds)) + " s"};
  if (exit->disk_exceeded) {
    (void)env_.RemoveAll(spec.log_path);
    return {-1, "it wrote more than the " + std::to_string(spec.sandbox.limits.disk_mb) +
                    " MiB the sandbox's disk limit allows (stopped there; a presolved/ whose "
                    "files inflate?)"};
  }
  if (exit->output_cut) {
    (void)env_.RemoveAll(spec.log_path);
    return {-1, "its output passed the " + std::to_string(spec.sandbox.limits.file_size_mb) +
                    " MiB the sandbox keeps (cut there, so not read)"};
  }
  auto out = env_.ReadFile(spec.log_path);
  (void)env_.RemoveAll(spec.log_path);
  std::string text = out.ok() ? *out : "";
  if (exit->code != 0 && err.ok()) text += *err;
  return {exit->code, text};
}

util::Expected<std::string> GitProgram::Run(const std::string& cwd, const std::vector<std::string>& args,
                                     const std::string& input) {
  auto [code, text] = Exec(cwd, args, input);
  if (code == 0) return text;
  std::string cmd = "git";
  for (const auto& a : args) cmd += " " + a;
  if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return util::Error{cmd + " failed in " + cwd + ": " + text};
}

util::Expected<std::optional<std::string>> Git::Show(const std::string& repo,
                                                     const std::string& commit,
                                                     const std::string& path) {
  auto tree = Run(repo, {"ls-tree", "--name-only", commit, "--", path});
  if (!tree.ok()) return tree.failure();
  if (tree->empty()) return std::optional<std::string>();
  auto blob = Run(repo, {"cat-file", "blob", commit + ":" + path});
  if (!blob.ok()) return blob.failure();
  return std::optional<std::string>(std::move(*blob));
}

util::Status Git::Checkout(const std::string& repo, const std::string& commit,
                           const std::string& dir) {
  (void)env_.RemoveAll(dir);
  if (auto s = env_.MakeDirs(util::DirName(dir)); !s.ok()) return s;
  auto clone = Run(util::DirName(dir), {"clone", "-q", "--shared", "--no-checkout", repo, dir});
  if (!clone.ok()) return clone.failure();
  auto co = Run(dir, {"checkout", "-q", "--detach", commit});
  if (!co.ok()) return co.failure();
  return {};
}

std::string NormalizePatch(std::string_view patch) {
  std::string out;
  out.reserve(patch.size() + 1);
  for (size_t i = 0; i < patch.size(); ++i) {
    if (patch[i] == '\r' && i + 1 < patch.size() && patch[i + 1] == '\n') continue;
    out.push_back(patch[i]);
  }
  if (!out.empty() && out.back() != '\n') out.push_back('\n');
  return out;
}

std::string BinaryPatchProblem(std::string_view patch, uint64_t max_bytes) {
  uint64_t total = 0;
  for (size_t b = 0; b < patch.size();) {
    size_t e = patch.find('\n', b);
    if (e == std::string_view::npos) e = patch.size();
    std::string_view line = patch.substr(b, e - b);
    b = e + 1;
    if (line.starts_with("delta ")) {
      return "the patch holds a binary delta, whose output size the patch does not bound "
             "(binary deltas are not applied)";
    }
    if (!line.starts_with("literal ")) continue;
    uint64_t n = 0;
    for (char c : line.substr(8)) {
      if (c < '0' || c > '9' || n > (UINT64_MAX - 9) / 10) break;
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    total += n;
    if (total > max_bytes) {
      return "the patch's binary files inflate to more than " + std::to_string(max_bytes >> 20) +
             " MiB (not applied)";
    }
  }
  return "";
}

util::Expected<std::string> GitProgram::PatchFile(std::string_view patch) {
  if (auto s = env_.MakeDirs(scratch_); !s.ok()) return s.failure();
  std::string file = util::JoinPath(
      scratch_, "patch-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++) + ".diff");
  if (auto s = env_.WriteFileAtomic(file, patch); !s.ok()) return s.failure();
  return file;
}

util::Status Git::InitEmpty(const std::string& dir, const std::string& message) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", message}}) {
    if (auto r = Run(dir, args); !r.ok()) return r.failure();
  }
  return util::Status::Ok();
}

util::Status Git::Apply(const std::string& dir, const std::string& patch, bool reverse) {
  ApplyResult r = Apply(dir, patch, ApplyOptions{Leniency::kExact, reverse});
  if (r.applied) return util::Status::Ok();
  return util::Error{r.error};
}

ApplyResult GitProgram::Apply(const std::string& dir, std::string_view patch, const ApplyOptions& options) {
  ApplyResult result;
  if (std::string why = PatchPathProblem(patch); !why.empty()) {
    result.unsafe_path = true;
    result.error = "refused: the patch names " + why;
    return result;
  }
  if (options.leniency == Leniency::kLenient) return ApplyLeniently(dir, patch);
  if (patch.empty()) {
    result.applied = true;
    return result;
  }
  auto file = PatchFile(patch);
  if (!file.ok()) return result.error = file.error(), result;
  std::vector<std::string> args = {"apply", "--whitespace=nowarn"};
  if (options.reverse) args.push_back("-R");
  args.push_back(*file);
  auto [code, text] = Exec(dir, args);
  (void)env_.RemoveAll(*file);
  if (code == 0) {
    result.applied = true;
    result.method = "git apply";
    return result;
  }
  // The output names files of the patch, not scratch paths: keep it whole but short.
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > 1000) text = text.substr(0, 1000) + "...";
  result.error = text;
  return result;
}

util::Status GitProgram::Reset(const std::string& tree) {
  if (auto r = Run(tree, {"reset", "-q", "--hard", "HEAD"}); !r.ok()) return r.failure();
  if (auto r = Run(tree, {"clean", "-q", "-f", "-d"}); !r.ok()) return r.failure();
  return util::Status::Ok();
}

util::Status GitProgram::FuzzyPatch(const std::string& tree, const std::string& file) {
  sandbox::ProcessSpec spec;
  spec.argv = {"patch", "--batch", "--forward", "-u", "-p1", "--fuzz=3",
               "--no-backup-if-mismatch", "--reject-file=-", "-i", file};
  spec.cwd = tree;
  spec.vars = {{"LC_ALL", "C"}};
  auto sandbox = CommandSandbox(tree, {});
  if (!sandbox.ok()) return sandbox.failure();
  spec.sandbox = *sandbox;
  // GNU patch follows links a hunk created: git's directory stays out of its reach.
  if (env_.Stat(util::JoinPath(tree, ".git"), false).ok()) {
    spec.sandbox.protect.push_back(util::JoinPath(tree, ".git"));
  }
  spec.log_path = util::JoinPath(scratch_, "patch-fuzz.log");
  auto exit = sandbox::RunToCompletion(launcher_, spec, confined() ? kConfinedSeconds : 0);
  if (!exit.ok()) return util::Error{"patch: " + exit.error()};
  if (exit->timed_out) return util::Error{"patch: killed after " + std::to_string(int(kConfinedSeconds)) + " s"};
  if (exit->code == 0) return util::Status::Ok();
  auto log = env_.ReadFile(spec.log_path);
  return util::Error{"patch --fuzz=3: " + util::Tail(log.ok() ? *log : "", 1500)};
}

ApplyResult GitProgram::ApplyLeniently(const std::string& tree, std::string_view patch) {
  ApplyResult result;
  if (std::string why = BinaryPatchProblem(patch, kMaxBinaryPatchBytes); !why.empty()) {
    result.error = why;
    return result;
  }
  if (auto s = env_.MakeDirs(scratch_); !s.ok()) return result.error = s.error(), result;
  std::string file = util::JoinPath(scratch_, "agent.patch");
  if (auto s = env_.WriteFileAtomic(file, NormalizePatch(patch)); !s.ok()) {
    result.error = s.error();
    return result;
  }
  struct Attempt {
    std::string method;
    std::vector<std::string> args;
  };
  const std::vector<Attempt> attempts = {
      {"git apply", {"apply", "--whitespace=nowarn", file}},
      {"git apply --3way", {"apply", "--3way", "--whitespace=nowarn", file}},
  };
  for (const auto& a : attempts) {
    auto r = Run(tree, a.args);
    if (r.ok()) {
      result.applied = true;
      result.method = a.method;
      return result;
    }
    result.error = r.error();
    if (auto s = Reset(tree); !s.ok()) {
      result.error = s.error();
      return result;
    }
  }
  if (FuzzyPatch(tree, file).ok()) {
    result.applied = true;
    result.method = "patch --fuzz";
    return result;
  }
  (void)Reset(tree);
  return result;
}

std::string OwnerRepo(std::string u) {
  u = u.substr(0, u.find_last_not_of(" \n\r") + 1);
  bool remote = u.find("://") != std::string::npos ? !u.starts_with("file://")
                                                   : u.find(':') != std::string::npos &&
                                                         !u.starts_with("/") && !u.starts_with(".");
  if (!remote) return "";
  if (u.ends_with(".git")) u.resize(u.size() - 4);
  while (u.ends_with("/")) u.pop_back();
  size_t slash = u.find_last_of('/');
  if (slash == std::string::npos) return "";
  size_t prev = u.find_last_of("/:", slash - 1);
  if (prev == std::string::npos) return "";
  std::string name = u.substr(prev + 1);
  return IsRepoName(name) ? name : "";
}

std::string RepoName(Git& git, const std::string& root) {
  std::string at = root;
  for (int hop = 0; hop < 5; ++hop) {
    auto url = git.Run(at, {"config", "--get", "remote.origin.url"});
    if (!url.ok() || url->empty()) break;
    std::string u = url->substr(0, url->find_last_not_of(" \n\r") + 1);
    if (std::string name = OwnerRepo(u); !name.empty()) return name;
    if (u.starts_with("file://")) u = u.substr(7);
    if (!u.starts_with("/")) u = util::JoinPath(at, u);
    at = u;
  }
  std::string base = root.substr(root.find_last_of('/') + 1);
  for (char& c : base) {
    if (!IsRepoName("local/" + std::string(1, c))) c = '_';
  }
  if (!IsRepoName("local/" + base)) base = "_" + base;
  return "local/" + base;
}

}  // namespace fbkit::runner

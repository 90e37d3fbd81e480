#include "tests/testing/fake_git.h"

#include <algorithm>

#include "util/patch.h"
#include "util/strings.h"

namespace fbkit::testing {

namespace {

// A file's lines, each with its '\n'; the last without one when the file does not end in one.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  for (std::string_view line : util::LinesWithEnds(text)) out.emplace_back(line);
  return out;
}

// "-" or "+" lines of a whole file, with git's marker after a last line without '\n'.
std::string Hunk(char sign, const std::string& text) {
  std::string out;
  for (const auto& line : Lines(text)) {
    out += sign + line;
    if (line.back() != '\n') out += "\n\\ No newline at end of file\n";
  }
  return out;
}

std::string Range(size_t start, size_t count) {
  return std::to_string(count == 0 ? 0 : start) + "," + std::to_string(count);
}

}  // namespace

runner::GitMaker FakeGit::Maker() {
  auto commands = commands_;
  util::Env* env = &env_;
  return [commands, env](const std::string&) {
    return std::unique_ptr<runner::Git>(new FakeGit(*env, commands));
  };
}

util::Expected<std::string> FakeGit::Top(const std::string& dir) const {
  for (std::string d = dir; !d.empty() && d != "/"; d = util::DirName(d)) {
    if (env_.Stat(util::JoinPath(d, ".git/HEAD"), false).ok()) return d;
  }
  return util::Error{"fatal: not a git repository: " + dir};
}

FakeGit::Tree FakeGit::Files(const std::string& dir, bool skip_git) const {
  Tree tree;
  util::WalkTree(env_, dir, [&](const std::string& rel, util::FileType type) {
    if (skip_git && rel == ".git") return false;
    if (type == util::FileType::kRegular) {
      auto data = env_.ReadFile(util::JoinPath(dir, rel));
      if (data.ok()) tree[rel] = *data;
    }
    return true;
  });
  return tree;
}

util::Status FakeGit::SetHead(const std::string& top, const Tree& tree) {
  std::string head = util::JoinPath(top, ".git/head");
  if (auto s = env_.RemoveAll(head); !s.ok()) return s;
  if (auto s = env_.MakeDirs(head); !s.ok()) return s;
  return WriteTree(head, tree);
}

std::set<std::string> FakeGit::Intent(const std::string& top) const {
  auto text = env_.ReadFile(util::JoinPath(top, ".git/intent"));
  std::set<std::string> out;
  if (!text.ok()) return out;
  for (const auto& line : util::Split(*text, '\n')) {
    if (!line.empty()) out.insert(line);
  }
  return out;
}

util::Status FakeGit::SetIntent(const std::string& top, const std::set<std::string>& paths) {
  std::string text;
  for (const auto& p : paths) text += p + "\n";
  return env_.WriteFileAtomic(util::JoinPath(top, ".git/intent"), text);
}

util::Status FakeGit::Init(const std::string& dir) {
  if (auto s = env_.MakeDirs(util::JoinPath(dir, ".git/head")); !s.ok()) return s;
  return env_.WriteFileAtomic(util::JoinPath(dir, ".git/HEAD"), "ref: refs/heads/main\n");
}

util::Status FakeGit::WriteTree(const std::string& top, const Tree& tree) {
  for (const auto& [path, data] : tree) {
    std::string file = util::JoinPath(top, path);
    if (auto s = env_.MakeDirs(util::DirName(file)); !s.ok()) return s;
    if (auto s = env_.WriteFileAtomic(file, data); !s.ok()) return s;
  }
  return util::Status::Ok();
}

std::string FakeGit::Diff(const std::string& top) {
  Tree head = Head(top), work = Files(top, true);
  std::set<std::string> paths = Intent(top);
  for (const auto& [p, d] : head) paths.insert(p);
  std::string out;
  for (const auto& p : paths) {
    auto was = head.find(p);
    auto now = work.find(p);
    std::string old_text = was == head.end() ? "" : was->second;
    std::string new_text = now == work.end() ? "" : now->second;
    bool added = was == head.end(), deleted = now == work.end();
    if (!added && !deleted && old_text == new_text) continue;
    if (added && deleted) continue;
    out += "diff --git a/" + p + " b/" + p + "\n";
    if (added) out += "new file mode 100644\n";
    if (deleted) out += "deleted file mode 100644\n";
    out += std::string("--- ") + (added ? "/dev/null" : "a/" + p) + "\n";
    out += std::string("+++ ") + (deleted ? "/dev/null" : "b/" + p) + "\n";
    size_t n_old = Lines(old_text).size(), n_new = Lines(new_text).size();
    out += "@@ -" + Range(1, n_old) + " +" + Range(1, n_new) + " @@\n";
    out += Hunk('-', old_text) + Hunk('+', new_text);
  }
  return out;
}

util::Status FakeGit::ApplyText(const std::string& top, std::string_view patch, bool reverse) {
  auto files = util::ParsePatch(patch);
  if (!files.ok()) return files.failure();
  Tree changed;
  std::set<std::string> removed;
  for (const auto& f : *files) {
    bool created = reverse ? f.is_deleted() : f.is_new();
    bool deleted = reverse ? f.is_new() : f.is_deleted();
    std::string path = f.path();
    std::string file = util::JoinPath(top, path);
    std::string text;
    if (!created) {
      auto data = env_.ReadFile(file);
      if (!data.ok()) return util::Error{"error: " + path + ": No such file or directory"};
      text = *data;
    } else if (env_.Stat(file, false).ok()) {
      return util::Error{"error: " + path + ": already exists in working directory"};
    }
    std::vector<std::string> lines = Lines(text), out;
    size_t at = 0;  // the next line of `lines` not yet copied
    auto body = util::Split(f.text, '\n');
    for (size_t i = 0; i < body.size(); ++i) {
      if (!body[i].starts_with("@@ ")) continue;
      // "@@ -a,b +c,d @@": the old side starts at line a (c when reversed).
      std::string range = body[i].substr(3);
      std::string side = range.substr(0, range.find(' '));
      if (reverse) side = range.substr(range.find(' ') + 1, range.find(" @@") - range.find(' ') - 1);
      size_t start = std::stoul(side.substr(1));
      size_t old_start = start == 0 ? 0 : start - 1;
      if (old_start < at || old_start > lines.size()) return util::Error{"error: patch failed: " + path};
      out.insert(out.end(), lines.begin() + static_cast<long>(at), lines.begin() + static_cast<long>(old_start));
      at = old_start;
      for (size_t j = i + 1; j < body.size() && !body[j].starts_with("@@ "); ++j) {
        const std::string& l = body[j];
        if (l.empty()) continue;
        bool no_newline = j + 1 < body.size() && body[j + 1].starts_with("\\ No newline");
        std::string content = l.substr(1) + (no_newline ? "" : "\n");
        char op = l[0];
        if (reverse && op == '-') op = '+';
        else if (reverse && op == '+') op = '-';
        if (op == ' ' || op == '-') {
          if (at >= lines.size() || lines[at] != content) return util::Error{"error: patch failed: " + path};
          ++at;
          if (op == ' ') out.push_back(content);
        } else if (op == '+') {
          out.push_back(content);
        }
      }
    }
    out.insert(out.end(), lines.begin() + static_cast<long>(at), lines.end());
    if (deleted) {
      removed.insert(path);
      continue;
    }
    std::string joined;
    for (const auto& l : out) joined += l;
    changed[path] = joined;
  }
  for (const auto& p : removed) (void)env_.RemoveAll(util::JoinPath(top, p));
  return WriteTree(top, changed);
}

util::Expected<std::string> FakeGit::Run(const std::string& cwd, const std::vector<std::string>& args,
                                         const std::string& input) {
  std::string cmd = "git";
  for (const auto& a : args) cmd += " " + a;
  commands_->push_back(cmd);
  if (!input.empty() || args.empty()) return util::Error{"FakeGit: unsupported: " + cmd};
  const std::string& verb = args[0];
  auto has = [&](const std::string& flag) { return std::count(args.begin(), args.end(), flag) > 0; };
  if (verb == "init") {
    if (auto s = Init(cwd); !s.ok()) return s.failure();
    return std::string();
  }
  if (verb == "check-ref-format") {
    const std::string& ref = args.back();
    bool ok = ref.find("..") == std::string::npos && ref.find(' ') == std::string::npos &&
              ref.find('~') == std::string::npos && ref.find(':') == std::string::npos;
    return ok ? util::Expected<std::string>(std::string()) : util::Error{"fatal: bad ref " + ref};
  }
  if (verb == "clone") {
    const std::string& src = args[args.size() - 2];
    std::string dst = args.back();
    if (!dst.starts_with("/")) dst = util::JoinPath(cwd, dst);
    auto from = Top(src);
    if (!from.ok() || *from != src) return util::Error{"fatal: repository '" + src + "' does not exist"};
    Tree head = Head(src);
    if (auto s = Init(dst); !s.ok()) return s.failure();
    if (auto s = SetHead(dst, head); !s.ok()) return s.failure();
    if (auto s = WriteTree(dst, head); !s.ok()) return s.failure();
    return std::string();
  }
  auto top = Top(cwd);
  if (!top.ok()) return top.failure();
  if (verb == "add") {
    if (has("-N")) {
      std::set<std::string> intent = Intent(*top);
      for (size_t i = 1; i < args.size(); ++i) {
        if (!args[i].starts_with("-")) intent.insert(args[i]);
      }
      if (auto s = SetIntent(*top, intent); !s.ok()) return s.failure();
    }
    return std::string();  // the index is the work tree: `commit` takes it whole
  }
  if (verb == "commit") {
    if (auto s = SetHead(*top, Files(*top, true)); !s.ok()) return s.failure();
    if (auto s = SetIntent(*top, {}); !s.ok()) return s.failure();
    return std::string();
  }
  if (verb == "tag") return std::string();
  if (verb == "diff") return Diff(*top);
  Tree head = Head(*top);
  if (verb == "checkout" && has("--")) {  // `-- .`: every tracked file; `HEAD -- PATH`: one
    Tree back = head;
    if (args.back() != ".") {
      auto it = head.find(args.back());
      if (it == head.end()) return util::Error{"error: pathspec '" + args.back() + "' did not match"};
      back = Tree{*it};
    }
    if (auto s = WriteTree(*top, back); !s.ok()) return s.failure();
    return std::string();
  }
  if (verb == "status") {  // --porcelain=v1 -z: "XY path\0" for each path that differs
    Tree work = Files(*top, true);
    std::string out;
    for (const auto& [path, data] : work) {
      auto it = head.find(path);
      if (it == head.end()) out += "?? " + path + '\0';
      else if (it->second != data) out += " M " + path + '\0';
    }
    for (const auto& [path, data] : head) {
      if (!work.count(path)) out += " D " + path + '\0';
    }
    return out;
  }
  if (verb == "cat-file" && args.size() == 3 && args[1] == "-e") {
    if (args[2].starts_with("HEAD:") && head.count(args[2].substr(5))) return std::string();
    return util::Error{"fatal: path not in HEAD: " + args[2]};
  }
  if (verb == "reset" || (verb == "rm" && has("--cached"))) return std::string();  // no index
  if (verb == "clean" && has("--")) {
    if (auto s = env_.RemoveAll(util::JoinPath(*top, args.back())); !s.ok()) return s.failure();
    return std::string();
  }
  if (verb == "read-tree") {
    if (auto s = SetIntent(*top, {}); !s.ok()) return s.failure();
    return std::string();
  }
  if (verb == "log") {  // one commit, at kCommitDate, for the files HEAD has
    if (!head.count(args.back())) return std::string();
    return has("--format=%cI") ? std::string(kCommitDate) + "\n"
                               : std::string(kCommitDate).substr(0, 10) + " " +
                                     std::string(kCommitDate).substr(11, 8) + "\n";
  }
  if (verb == "apply") {
    auto patch = env_.ReadFile(args.back().starts_with("/") ? args.back() : util::JoinPath(cwd, args.back()));
    if (!patch.ok()) return util::Error{"error: can't open patch '" + args.back() + "'"};
    if (auto s = ApplyText(*top, *patch, has("-R")); !s.ok()) return util::Error{cmd + " failed in " + cwd + ": " + s.error()};
    return std::string();
  }
  std::string spec = args.size() >= 2 ? args.back() : "";
  if ((verb == "show" || (verb == "cat-file" && args.size() == 3)) && spec.starts_with("HEAD:")) {
    auto it = head.find(spec.substr(5));
    if (it == head.end()) return util::Error{"fatal: path '" + spec.substr(5) + "' does not exist in 'HEAD'"};
    return it->second;
  }
  if (verb == "ls-tree" && has("--name-only") && args.size() == 5 && args[2] == "HEAD") {
    return head.count(args[4]) ? args[4] + "\n" : std::string();
  }
  return util::Error{"FakeGit: unsupported: " + cmd};
}

runner::ApplyResult FakeGit::Apply(const std::string& dir, std::string_view patch,
                                   const runner::ApplyOptions& options) {
  commands_->push_back(std::string("apply (") + (options.leniency == runner::Leniency::kLenient ? "lenient" : "exact") + ")");
  runner::ApplyResult r;
  if (std::string why = runner::PatchPathProblem(patch); !why.empty()) {
    r.unsafe_path = true;
    r.error = "refused: the patch names " + why;
    return r;
  }
  if (patch.empty()) return r.applied = true, r;
  auto top = Top(dir);
  if (!top.ok()) return r.error = top.error(), r;
  std::string text = options.leniency == runner::Leniency::kLenient ? runner::NormalizePatch(patch)
                                                                     : std::string(patch);
  if (auto s = ApplyText(*top, text, options.reverse); !s.ok()) return r.error = s.error(), r;
  r.applied = true;
  r.method = "git apply";
  return r;
}

}  // namespace fbkit::testing

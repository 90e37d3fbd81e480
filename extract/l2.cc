#include "extract/l2.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "parser/modules.h"

namespace fbkit::extract {

namespace {

bool InPackage(const std::string& module, const std::string& package) {
  return module == package || module.starts_with(package + ".");
}

std::string Renamed(const std::string& module, const std::string& package) {
  return "agent_code" + module.substr(package.size());
}

bool IdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Replaces whole-token occurrences of `from` (not preceded by an identifier char or a dot,
// not followed by an identifier char) in text[begin, end).
std::string ReplaceToken(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  size_t pos = 0;
  for (size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + 1)) {
    bool left = p == 0 || (!IdentChar(text[p - 1]) && text[p - 1] != '.');
    bool right = p + from.size() >= text.size() || !IdentChar(text[p + from.size()]);
    if (!left || !right || p < pos) continue;
    out += text.substr(pos, p - pos) + to;
    pos = p + from.size();
  }
  return out + text.substr(pos);
}

// One package file with its absolute imports of the package redirected to agent_code.
util::Expected<std::string> RewritePackageFile(const parser::FileTable& t, const std::string& src,
                                               const std::string& package) {
  std::vector<std::pair<std::pair<int64_t, int64_t>, std::string>> edits;
  for (const auto& imp : t.imports) {
    if (imp.level != 0) continue;
    if (imp.is_from) {
      if (!InPackage(imp.module, package)) continue;
      std::string stmt = src.substr(static_cast<size_t>(imp.start_byte),
                                    static_cast<size_t>(imp.end_byte - imp.start_byte));
      size_t at = stmt.find(imp.module);
      if (at == std::string::npos) return util::Error{t.path + ":" + std::to_string(imp.line) + ": cannot rewrite this import"};
      edits.push_back({{imp.start_byte + static_cast<int64_t>(at),
                        imp.start_byte + static_cast<int64_t>(at + imp.module.size())},
                       Renamed(imp.module, package)});
      continue;
    }
    for (const auto& n : imp.names) {
      if (!InPackage(n.name, package)) continue;
      if (!n.alias && n.name != package) {
        return util::Error{t.path + ":" + std::to_string(imp.line) + ": `import " + n.name +
                           "` binds the package name itself"};
      }
      std::string text = n.alias ? Renamed(n.name, package) + " as " + *n.alias
                                 : "agent_code as " + package;
      edits.push_back({{n.start_byte, n.end_byte}, text});
    }
  }
  std::sort(edits.begin(), edits.end());
  std::string out;
  int64_t pos = 0;
  for (const auto& [span, text] : edits) {
    out += src.substr(static_cast<size_t>(pos), static_cast<size_t>(span.first - pos)) + text;
    pos = span.second;
  }
  return out + src.substr(static_cast<size_t>(pos));
}

}  // namespace

util::Expected<std::string> RedirectTestImports(const Repo& repo, const std::string& f2p,
                                                const std::vector<std::string>& tops,
                                                const std::string& package) {
  auto tf = repo.FileOf(f2p);
  if (!tf) return util::Error{f2p + " is not in the entity table"};
  const parser::FileTable& t = repo.files()[*tf];
  std::string src = repo.source(*tf);
  std::set<std::string> names;
  for (const auto& id : tops) {
    if (auto r = repo.Find(id)) names.insert(repo.entity(*r).name);
  }
  // from-imports: names of top objects move to an `agent_code` import of their own.
  std::vector<std::pair<std::pair<int64_t, int64_t>, std::string>> edits;
  std::set<std::string> attribute_heads;  // `import pkg` bindings whose dotted uses to redirect
  for (const auto& imp : t.imports) {
    std::string base = parser::AbsoluteModule(t, imp);
    if (!imp.is_from) {
      for (const auto& n : imp.names) {
        if (InPackage(n.name, package)) attribute_heads.insert(BoundName(imp, n));
      }
      continue;
    }
    if (!InPackage(base, package)) continue;
    std::vector<std::string> moved, kept;
    for (const auto& n : imp.names) {
      std::string text = n.name + (n.alias ? " as " + *n.alias : "");
      (names.count(n.name) ? moved : kept).push_back(text);
    }
    if (moved.empty()) continue;
    std::string indent;
    size_t line_start = src.rfind('\n', static_cast<size_t>(imp.start_byte));
    line_start = line_start == std::string::npos ? 0 : line_start + 1;
    indent = src.substr(line_start, static_cast<size_t>(imp.start_byte) - line_start);
    std::string text;
    if (!kept.empty()) {
      text = "from " + base + " import ";
      for (size_t i = 0; i < kept.size(); ++i) text += (i ? ", " : "") + kept[i];
      text += "\n" + indent;
    }
    text += "from " + Renamed(base, package) + " import ";
    for (size_t i = 0; i < moved.size(); ++i) text += (i ? ", " : "") + moved[i];
    edits.push_back({{imp.start_byte, imp.end_byte}, text});
  }
  std::sort(edits.begin(), edits.end());
  std::string out;
  int64_t pos = 0;
  for (const auto& [span, text] : edits) {
    out += src.substr(static_cast<size_t>(pos), static_cast<size_t>(span.first - pos)) + text;
    pos = span.second;
  }
  out += src.substr(static_cast<size_t>(pos));
  // Dotted uses (`click.progressbar`) of top objects through `import pkg`.
  bool redirected = false;
  std::set<std::string> submodules;
  for (const auto& e : t.entities) {
    for (const auto& r : e.references) {
      std::string head(Head(r));
      if (!attribute_heads.count(head)) continue;
      std::string last = r.substr(r.rfind('.') + 1);
      if (!names.count(last) || r == head) continue;
      std::string middle = r.substr(head.size(), r.size() - head.size() - last.size() - 1);
      std::string replaced = ReplaceToken(out, r, "agent_code" + middle + "." + last);
      if (replaced != out) {
        out = std::move(replaced);
        redirected = true;
        submodules.insert("agent_code" + middle);
      }
    }
  }
  if (redirected) {
    std::string imports;
    for (const auto& m : submodules) imports += "import " + m + "\n";
    // After a leading docstring, comments and __future__ imports: before the first import.
    size_t first = std::string::npos;
    for (const auto& imp : t.imports) {
      if (imp.module != "__future__") {
        first = static_cast<size_t>(imp.start_byte);
        break;
      }
    }
    if (first == std::string::npos) return util::Error{f2p + ": no import to place agent_code's after"};
    // Same offset in `out`: edits only happen at or after import statements; find the line.
    size_t at = out.rfind('\n', std::min(first, out.size()));
    at = at == std::string::npos ? 0 : at + 1;
    out.insert(at, imports);
  }
  if (out == src) return util::Error{f2p + " uses none of the top-level objects through an import"};
  return out;
}

util::Expected<Level2> WriteLevel2(util::Env& env, Git& git, const Repo& repo,
                                   const std::string& f2p, const std::vector<std::string>& tops,
                                   const std::string& dir) {
  Level2 l2;
  for (const auto& id : tops) {
    auto r = repo.Find(id);
    if (!r) continue;
    std::string module = repo.files()[r->file].module;
    std::string pkg(Head(module));
    if (l2.package.empty()) l2.package = pkg;
    if (pkg != l2.package) return util::Error{"the top objects come from two packages"};
  }
  auto init = repo.ModuleFile(l2.package);
  if (!init || !repo.files()[*init].path.ends_with("/__init__.py")) {
    return util::Error{"the top objects are not in a package"};
  }
  std::string pkg_dir = util::DirName(repo.files()[*init].path);
  std::string work = util::JoinPath(dir, "l2work");
  (void)env.RemoveAll(work);
  if (auto s = env.MakeDirs(work); !s.ok()) return util::Error{s.error()};
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "fbkit: empty project"}}) {
    if (auto r = git.Run(work, args); !r.ok()) return util::Error{r.error()};
  }
  for (size_t f = 0; f < repo.files().size(); ++f) {
    const auto& t = repo.files()[f];
    if (!t.path.starts_with(pkg_dir + "/")) continue;
    auto text = RewritePackageFile(t, repo.source(f), l2.package);
    if (!text.ok()) return util::Error{text.error()};
    std::string dst = util::JoinPath(util::JoinPath(work, "agent_code"), t.path.substr(pkg_dir.size() + 1));
    if (auto s = env.MakeDirs(util::DirName(dst)); !s.ok()) return util::Error{s.error()};
    if (auto s = env.WriteFileAtomic(dst, *text); !s.ok()) return util::Error{s.error()};
  }
  if (auto r = git.Run(work, {"add", "-N", "."}); !r.ok()) return util::Error{r.error()};
  auto patch = git.Run(work, {"diff", "--no-color", "--no-ext-diff", "--binary"});
  if (!patch.ok()) return util::Error{patch.error()};
  l2.patch = *patch;
  (void)env.RemoveAll(work);
  // The test patch adds the redirected F2P file to the original repository (which, like
  // L1's presolved + patch.diff, does not have it).
  auto redirected = RedirectTestImports(repo, f2p, tops, l2.package);
  if (!redirected.ok()) return util::Error{redirected.error()};
  if (auto s = env.MakeDirs(work); !s.ok()) return util::Error{s.error()};
  if (auto r = git.Run(work, {"init", "-q"}); !r.ok()) return util::Error{r.error()};
  std::string dst = util::JoinPath(work, f2p);
  if (auto s = env.MakeDirs(util::DirName(dst)); !s.ok()) return util::Error{s.error()};
  if (auto s = env.WriteFileAtomic(dst, *redirected); !s.ok()) return util::Error{s.error()};
  if (auto r = git.Run(work, {"add", "-N", "--", f2p}); !r.ok()) return util::Error{r.error()};
  auto tp = git.Run(work, {"diff", "--no-color", "--no-ext-diff", "--binary"});
  if (!tp.ok()) return util::Error{tp.error()};
  l2.test_patch = *tp;
  (void)env.RemoveAll(work);
  return l2;
}

}  // namespace fbkit::extract

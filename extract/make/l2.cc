#include "extract/make/l2.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>

#include "extract/make/select.h"
#include "extract/taskdir/task_dir.h"
#include "parser/modules.h"
#include "runner/repo_files.h"
#include "util/strings.h"

namespace fbkit::extract::make {

namespace {

bool InPackage(const std::string& module, const std::string& package) {
  return module == package || module.starts_with(package + ".");
}

std::string Renamed(const std::string& module, const std::string& package) {
  return "agent_code" + module.substr(package.size());
}

using Edits = std::vector<std::pair<std::pair<int64_t, int64_t>, std::string>>;

std::string ApplyEdits(const std::string& src, Edits edits) {
  std::sort(edits.begin(), edits.end());
  std::string out;
  int64_t pos = 0;
  for (const auto& [span, text] : edits) {
    out += src.substr(static_cast<size_t>(pos), static_cast<size_t>(span.first - pos)) + text;
    pos = span.second;
  }
  return out + src.substr(static_cast<size_t>(pos));
}

bool IdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Mentions of the package's modules inside str literals, which name the implementation the
// test exercises: pytest.raises matches, exconly() texts, monkeypatch targets.
Edits StringEdits(const Repo& repo, const std::string& src, const std::string& package,
                  const std::vector<std::pair<int64_t, int64_t>>& spans) {
  Edits edits;
  for (const auto& [b, e] : spans) {
    std::string_view text(src.data() + b, static_cast<size_t>(e - b));
    std::string renamed = RenameModulePaths(repo, package, text);
    if (renamed != text) edits.push_back({{b, e}, renamed});
  }
  return edits;
}

// A module of the package's own tests (xarray/tests/__init__.py): no part of agent_code, so
// an import of it keeps its name (the original package is still there beside agent_code);
// the test patch redirects the module itself when the F2P file loads it (LoadedTestModules).
bool TestModule(const Repo& repo, const std::string& module) {
  auto f = repo.ModuleFile(module);
  return f && taskdir::IsTestCode(repo.files()[*f].path, {});
}

// The edits that redirect a file's absolute imports of the package to agent_code (imports
// of the package's test modules aside).
util::Expected<Edits> ImportEdits(const Repo& repo, const parser::FileTable& t,
                                  const std::string& src, const std::string& package) {
  Edits edits;
  for (const auto& imp : t.imports) {
    if (imp.level != 0) continue;
    if (imp.is_from) {
      if (!InPackage(imp.module, package) || TestModule(repo, imp.module)) continue;
      std::string stmt = src.substr(static_cast<size_t>(imp.start_byte),
                                    static_cast<size_t>(imp.end_byte - imp.start_byte));
      size_t at = stmt.find(imp.module);
      if (at == std::string::npos)
        return util::Error{t.path + ":" + std::to_string(imp.line) +
                           ": cannot rewrite this import"};
      edits.push_back({{imp.start_byte + static_cast<int64_t>(at),
                        imp.start_byte + static_cast<int64_t>(at + imp.module.size())},
                       Renamed(imp.module, package)});
      continue;
    }
    for (const auto& n : imp.names) {
      if (!InPackage(n.name, package) || TestModule(repo, n.name)) continue;
      std::string text =
          n.alias ? Renamed(n.name, package) + " as " + *n.alias : "agent_code as " + package;
      if (!n.alias && n.name != package) {
        // `import pkg.sub` binds pkg with pkg.sub loaded: the same for agent_code (in the
        // package's own modules too: sympy/ntheory imports sympy.polys this way).
        text = Renamed(n.name, package) + ", agent_code as " + package;
      }
      edits.push_back({{n.start_byte, n.end_byte}, text});
    }
  }
  return edits;
}

// Whether the str literal whose text starts at `text_start` is the first argument of a call
// that reads a distribution's installed metadata (importlib.metadata's version(),
// metadata(), distribution(), requires(), files(); pkg_resources' get_distribution(),
// require()), as in `__version__ = version("xarray")`.
bool DistributionArgument(const std::string& src, int64_t text_start) {
  size_t i = static_cast<size_t>(text_start);
  while (i > 0 && (src[i - 1] == '"' || src[i - 1] == '\'')) --i;
  while (i > 0 && std::strchr("rRbBuU", src[i - 1])) --i;
  while (i > 0 && std::isspace(static_cast<unsigned char>(src[i - 1]))) --i;
  if (i == 0 || src[i - 1] != '(') return false;
  --i;
  while (i > 0 && std::isspace(static_cast<unsigned char>(src[i - 1]))) --i;
  size_t end = i;
  while (i > 0 && IdentChar(src[i - 1])) --i;
  static const std::set<std::string, std::less<>> kReaders = {
      "version", "_version", "metadata", "distribution", "requires", "files",
      "get_distribution", "require"};
  return kReaders.count(std::string_view(src.data() + i, end - i)) > 0;
}

// One package file with its absolute imports of the package redirected to agent_code.
// Module paths of the package named in its own str literals move along too: code it
// generates or loads by name ("from jinja2.runtime import ..." in a template compiler,
// importlib targets) must reach agent_code's modules, not the original's.
util::Expected<std::string> RewritePackageFile(const Repo& repo, parser::PythonParser& python,
                                               const parser::FileTable& t, const std::string& src,
                                               const std::string& package) {
  auto edits = ImportEdits(repo, t, src, package);
  if (!edits.ok()) return edits.failure();
  auto spans = python.StringTexts(src);
  Edits strings = StringEdits(repo, src, package, spans);
  edits->insert(edits->end(), strings.begin(), strings.end());
  // A literal that is the package's own name names it too: a logger, a configuration
  // section, an importlib target (two packages sharing one logger break each other); but
  // not the distribution whose installed metadata it reads.
  for (const auto& [b, e] : spans) {
    if (std::string_view(src.data() + b, static_cast<size_t>(e - b)) == package &&
        !DistributionArgument(src, b)) {
      edits->push_back({{b, e}, "agent_code"});
    }
  }
  return ApplyEdits(src, std::move(*edits));
}

// Whether pytest would collect `path` as a test file or load it as a conftest.
bool TestFileName(const std::string& path) {
  std::string base = path.substr(path.rfind('/') + 1);
  return base == "conftest.py" || (base.starts_with("test_") && base.ends_with(".py")) ||
         base.ends_with("_test.py");
}

// The modules an import statement of `t` may load: the module it names (absolute) and, for
// each imported name, that name as a submodule (`from pkg import sub`, `import pkg.sub`).
std::vector<std::string> ImportedModules(const parser::FileTable& t) {
  std::vector<std::string> out;
  for (const auto& imp : t.imports) {
    std::string base = parser::AbsoluteModule(t, imp);
    out.push_back(base);
    for (const auto& n : imp.names) out.push_back(imp.is_from ? base + "." + n.name : n.name);
  }
  return out;
}

// The package's Python files agent_code copies: those outside its tests, and the modules
// inside its test directories (not test files) that those import, with their packages'
// __init__.py files; file indexes, sorted. Links are left out (a link could name any host
// file, and the gold is published with the task).
std::vector<size_t> PackageModules(util::Env& env, const Repo& repo, const std::string& package,
                                   const std::string& pkg_dir) {
  std::set<size_t> kept;
  std::vector<size_t> todo;
  auto keep = [&](size_t f) {
    if (!runner::PlainFile(env, util::JoinPath(repo.root(), repo.files()[f].path))) return;
    if (kept.insert(f).second) todo.push_back(f);
  };
  for (size_t f = 0; f < repo.files().size(); ++f) {
    const std::string& path = repo.files()[f].path;
    if (path.starts_with(pkg_dir + "/") && !taskdir::IsTestCode(path, {})) keep(f);
  }
  while (!todo.empty()) {
    const parser::FileTable& t = repo.files()[todo.back()];
    todo.pop_back();
    for (const auto& m : ImportedModules(t)) {
      if (!InPackage(m, package)) continue;
      // The module and the packages above it, up to the package itself.
      for (std::string up = m; up.size() > package.size(); up = up.substr(0, up.rfind('.'))) {
        auto f = repo.ModuleFile(up);
        if (f && !TestFileName(repo.files()[*f].path)) keep(*f);
      }
    }
  }
  return {kept.begin(), kept.end()};
}

// agent_code's files besides the package's Python modules: its other files outside its tests
// (data it reads), and the files the environment built into it. Both are read without
// following links (a link in the repository or the environment could name any host file):
// a repository's links and hard-linked files are left out, like any that is not a regular
// one; paths must stay inside; all of it is bounded (kMaxPackageData).
util::Status CopyPackageData(util::Env& env, const Repo& repo, const PackageSources& sources,
                             const std::string& pkg_dir, const std::string& agent_dir) {
  constexpr uint64_t kMaxPackageData = 256u << 20;
  uint64_t total = 0;
  // One file of `base` (root-relative `rel`) into agent_code; anything but a plain file
  // inside is left out.
  auto copy = [&](const std::string& base, const std::string& rel) -> util::Status {
    if (!runner::InsideRelative(rel) || !runner::PlainFile(env, util::JoinPath(base, rel))) {
      return util::Status::Ok();
    }
    auto data = env.ReadUntrusted(base, rel, kMaxPackageData);
    if (!data.ok()) return data.failure();
    total += data->size();
    if (total > kMaxPackageData) {
      return util::Error{"agent_code's data and built files exceed " +
                         std::to_string(kMaxPackageData >> 20) + " MiB (at " + rel + ")"};
    }
    std::string dst = util::JoinPath(agent_dir, rel.substr(pkg_dir.size() + 1));
    if (auto s = env.MakeDirs(util::DirName(dst)); !s.ok()) return s;
    return env.WriteFileAtomic(dst, *data);
  };
  auto in_package = [&](const std::string& rel) {
    return rel.starts_with(pkg_dir + "/") && !taskdir::IsTestCode(rel, {});
  };
  for (const auto& rel : sources.files) {
    if (!in_package(rel) || rel.ends_with(".py")) continue;
    if (auto s = copy(repo.root(), rel); !s.ok()) return s;
  }
  for (const auto& rel : sources.built_files) {
    if (!in_package(rel)) continue;
    if (auto s = copy(sources.built_dir, rel); !s.ok()) return s;
  }
  return util::Status::Ok();
}

// Pickles of the package's classes written as bytes literals (protocols 0-2 name a class
// with the GLOBAL opcode: 'c' MODULE '\n' NAME '\n'): their module renamed, so that loading
// them builds agent_code's objects. Adjacent literals are read as one (a module name may be
// split across two); only whole GLOBAL arguments naming a package module are renamed.
Edits PickleEdits(const Repo& repo, const std::string& src, const std::string& package,
                  const std::vector<std::pair<int64_t, int64_t>>& spans) {
  Edits edits;
  for (size_t i = 0; i < spans.size();) {
    std::string text;
    std::vector<int64_t> at_src;  // source offset of every byte of `text`
    size_t j = i;
    for (; j < spans.size(); ++j) {
      if (j > i) {
        std::string_view gap(src.data() + spans[j - 1].second,
                             static_cast<size_t>(spans[j].first - spans[j - 1].second));
        if (gap.find_first_not_of("\"' \t\r\nbBrR(") != std::string_view::npos) break;
      }
      for (int64_t p = spans[j].first; p < spans[j].second; ++p) {
        text += src[static_cast<size_t>(p)];
        at_src.push_back(p);
      }
    }
    for (size_t at = text.find("c" + package); at != std::string::npos;
         at = text.find("c" + package, at + 1)) {
      size_t end = at + 1;
      while (end < text.size() && (IdentChar(text[end]) || text[end] == '.')) ++end;
      std::string module = text.substr(at + 1, end - at - 1);
      bool newline = text.compare(end, 2, "\\n") == 0 || text.compare(end, 1, "\n") == 0;
      if (!newline || !InPackage(module, package) || !repo.ModuleFile(module)) continue;
      // The name may itself be split across literals: its first run becomes agent_code, the
      // rest of it goes.
      std::string replacement = "agent_code";
      for (size_t k = at + 1; k <= at + package.size();) {
        size_t run = k;
        while (run + 1 <= at + package.size() && at_src[run + 1] == at_src[run] + 1) ++run;
        edits.push_back({{at_src[k], at_src[run] + 1}, replacement});
        replacement.clear();
        k = run + 1;
      }
    }
    i = j;
  }
  return edits;
}

// The test's text with its imports of the package redirected to agent_code, the package's
// module paths in its str literals and pickled class names in its bytes literals renamed.
util::Expected<std::string> Redirect(const Repo& repo, parser::PythonParser& python, size_t file,
                                     const std::string& package, bool need_import) {
  const parser::FileTable& t = repo.files()[file];
  const std::string& src = repo.source(file);
  auto edits = ImportEdits(repo, t, src, package);
  if (!edits.ok()) return edits.failure();
  if (need_import && edits->empty()) return util::Error{t.path + " does not import " + package};
  Edits strings = StringEdits(repo, src, package, python.StringTexts(src));
  Edits pickles = PickleEdits(repo, src, package, python.StringTexts(src, true));
  edits->insert(edits->end(), strings.begin(), strings.end());
  edits->insert(edits->end(), pickles.begin(), pickles.end());
  return ApplyEdits(src, std::move(*edits));
}

// What a test file reads from the package, as agent_code names: imported names and dotted
// uses of imported modules.
void TestUses(const Repo& repo, const parser::FileTable& t, const std::string& package,
              std::set<std::string>* names) {
  std::set<std::string> heads;
  for (const auto& imp : t.imports) {
    std::string base = parser::AbsoluteModule(t, imp);
    for (const auto& n : imp.names) {
      if (TestModule(repo, imp.is_from ? base : n.name)) continue;
      if (imp.is_from && InPackage(base, package) && n.name != "*") {
        names->insert("from " + Renamed(base, package) + " import " + n.name);
      } else if (!imp.is_from && InPackage(n.name, package)) {
        heads.insert(BoundName(imp, n));
      }
    }
  }
  for (const auto& e : t.entities) {
    for (const auto& r : e.references) {
      std::string head(Head(r));
      if (!heads.count(head) || r == head) continue;
      names->insert("agent_code" + r.substr(head.size()));
    }
  }
}

}  // namespace

std::string RenameModulePaths(const Repo& repo, const std::string& package, std::string_view text) {
  std::string out;
  size_t pos = 0;
  for (size_t at = text.find(package); at != std::string_view::npos;
       at = text.find(package, at + 1)) {
    if (at > 0 && (IdentChar(text[at - 1]) || text[at - 1] == '.')) continue;
    size_t dot = at + package.size();
    while (dot < text.size() && text[dot] == '\\') ++dot;  // regex and id escapes: pkg\.sub
    if (dot >= text.size() || text[dot] != '.') continue;
    size_t end = dot + 1;
    while (end < text.size() && IdentChar(text[end])) ++end;
    if (!repo.IsModule(package, std::string(text.substr(dot + 1, end - dot - 1)))) continue;
    out += std::string(text.substr(pos, at - pos)) + "agent_code";
    pos = at + package.size();
  }
  return out + std::string(text.substr(pos));
}

util::Expected<std::string> RedirectTestImports(const Repo& repo, parser::PythonParser& python,
                                                const std::string& f2p, const std::string& package,
                                                std::vector<std::string>* uses) {
  auto tf = repo.FileOf(f2p);
  if (!tf) return util::Error{f2p + " is not in the entity table"};
  auto out = Redirect(repo, python, *tf, package, true);
  if (!out.ok()) return out;
  std::set<std::string> names;
  TestUses(repo, repo.files()[*tf], package, &names);
  if (uses) uses->assign(names.begin(), names.end());
  return out;
}

std::vector<std::string> ConftestChain(const Repo& repo, const std::string& f2p) {
  std::vector<std::string> out;
  std::string dir = util::DirName(f2p);
  for (;;) {
    std::string path = dir.empty() || dir == "." ? "conftest.py" : dir + "/conftest.py";
    if (repo.FileOf(path)) out.push_back(path);
    if (dir.empty() || dir == ".") break;
    size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? "" : dir.substr(0, slash);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string> LoadedTestModules(const Repo& repo, const std::string& f2p) {
  std::vector<std::string> out = ConftestChain(repo, f2p);
  std::set<size_t> seen;
  std::vector<size_t> todo;
  for (const auto& path : out) todo.push_back(*repo.FileOf(path));
  if (auto f = repo.FileOf(f2p)) todo.push_back(*f);
  seen.insert(todo.begin(), todo.end());
  std::set<std::string> helpers;
  while (!todo.empty()) {
    const parser::FileTable& t = repo.files()[todo.back()];
    todo.pop_back();
    for (const auto& m : ImportedModules(t)) {
      // The module and the packages above it that are test code too (their __init__.py
      // runs first).
      for (std::string up = m; !up.empty();) {
        if (!TestModule(repo, up)) break;
        size_t f = *repo.ModuleFile(up);
        if (seen.insert(f).second) {
          todo.push_back(f);
          helpers.insert(repo.files()[f].path);
        }
        size_t dot = up.rfind('.');
        up = dot == std::string::npos ? "" : up.substr(0, dot);
      }
    }
  }
  out.insert(out.end(), helpers.begin(), helpers.end());
  return out;
}

namespace {

// The files pytest may take its configuration from when it runs `f2p`: in its directory and
// every parent up to the root, in pytest's order within a directory.
std::vector<std::string> ConfigCandidates(const std::string& f2p) {
  std::vector<std::string> out;
  for (std::string dir = util::DirName(f2p);;) {
    bool root = dir.empty() || dir == ".";
    for (const char* name : {"pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"}) {
      out.push_back(root ? name : dir + "/" + name);
    }
    if (root) break;
    size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? "" : dir.substr(0, slash);
  }
  return out;
}

// `text` with the package's module paths renamed in its pytest sections (a section whose
// header names pytest: `[pytest]`, `[tool:pytest]`, `[tool.pytest.ini_options]`), and what a
// renamed path that is no module names from agent_code (a warning filter's category,
// `ignore::pkg.warnings.Weak`) added to `uses` as "from agent_code.warnings import Weak".
std::string RedirectConfig(const Repo& repo, const std::string& package, const std::string& text,
                           std::set<std::string>* uses) {
  std::string out;
  bool in = false;
  for (const auto& line : util::LinesWithEnds(text)) {
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '[') {
      in = line.find("pytest") != std::string::npos;
    }
    std::string renamed = in ? RenameModulePaths(repo, package, line) : std::string(line);
    for (size_t at = renamed.find("agent_code."); at != std::string::npos && renamed != line;
         at = renamed.find("agent_code.", at + 1)) {
      if (at > 0 && (IdentChar(renamed[at - 1]) || renamed[at - 1] == '.')) continue;
      size_t end = at;
      while (end < renamed.size() && (IdentChar(renamed[end]) || renamed[end] == '.')) ++end;
      std::string dotted = package + renamed.substr(at + 10, end - at - 10);
      size_t dot = dotted.rfind('.');
      if (repo.ModuleFile(dotted) || !repo.ModuleFile(dotted.substr(0, dot))) continue;
      uses->insert("from " + Renamed(dotted.substr(0, dot), package) + " import " +
                   dotted.substr(dot + 1));
    }
    out += renamed;
  }
  return out;
}

}  // namespace

util::Expected<std::vector<ConfigRedirect>> RedirectedConfigs(util::Env& env, const Repo& repo,
                                                              const std::string& f2p,
                                                              const std::string& package,
                                                              std::set<std::string>* uses) {
  std::vector<ConfigRedirect> out;
  for (const auto& path : ConfigCandidates(f2p)) {
    std::string full = util::JoinPath(repo.root(), path);
    auto info = env.Stat(full, false);
    if (!info.ok() || info->type != util::FileType::kRegular) continue;
    auto text = env.ReadFile(full);
    if (!text.ok()) return text.failure();
    std::string redirected = RedirectConfig(repo, package, *text, uses);
    if (redirected != *text) out.push_back({path, std::move(*text), std::move(redirected)});
  }
  return out;
}

namespace {

// The one top-level package the top objects come from, and its directory.
util::Expected<std::pair<std::string, std::string>> PackageOf(const Repo& repo,
                                                              const std::vector<Ent>& tops) {
  std::string package;
  for (Ent v : tops) {
    std::string pkg(Head(repo.table(v).module));
    if (package.empty()) package = pkg;
    if (pkg != package) return util::Error{"the top objects come from two packages"};
  }
  auto init = repo.ModuleFile(package);
  if (!init || !repo.files()[*init].path.ends_with("/__init__.py")) {
    return util::Error{"the top objects are not in a package"};
  }
  return std::pair{package, util::DirName(repo.files()[*init].path)};
}

// The gold patch: agent_code/ created in an empty project `work` (removed afterwards).
util::Expected<std::string> GoldPatch(util::Env& env, runner::Git& git, const Repo& repo,
                                      parser::PythonParser& parser, const std::string& package,
                                      const std::string& pkg_dir, const PackageSources& sources,
                                      const std::string& work) {
  (void)env.RemoveAll(work);
  if (auto s = env.MakeDirs(work); !s.ok()) return s.failure();
  if (auto s = git.InitEmpty(work, "fbkit: empty project"); !s.ok()) return s.failure();
  std::string agent_dir = util::JoinPath(work, "agent_code");
  // Tests kept inside the package (sympy/core/tests/) are no part of agent_code.
  for (size_t f : PackageModules(env, repo, package, pkg_dir)) {
    const auto& t = repo.files()[f];
    auto text = RewritePackageFile(repo, parser, t, repo.source(f), package);
    if (!text.ok()) return text.failure();
    std::string dst = util::JoinPath(agent_dir, t.path.substr(pkg_dir.size() + 1));
    if (auto s = env.MakeDirs(util::DirName(dst)); !s.ok()) return s.failure();
    if (auto s = env.WriteFileAtomic(dst, *text); !s.ok()) return s.failure();
  }
  if (auto s = CopyPackageData(env, repo, sources, pkg_dir, agent_dir); !s.ok()) {
    return s.failure();
  }
  if (auto r = git.Run(work, {"add", "-N", "."}); !r.ok()) return r.failure();
  auto patch = git.Run(work, {"diff", "--no-color", "--no-ext-diff", "--binary"});
  (void)env.RemoveAll(work);
  return patch;
}

// The test patch: it adds the redirected F2P file to the original repository (which, like
// L1's presolved + patch.diff, does not have it) and redirects the other test modules it
// loads (LoadedTestModules): their fixtures, hooks and checks must build and expect
// agent_code's objects too (an L2 task has no P2P tests that could need the originals).
// Fills l2's test_patch, test_uses and redirected.
util::Status TestPatch(util::Env& env, runner::Git& git, const Repo& repo,
                       parser::PythonParser& parser, const std::string& f2p,
                       const std::string& work, Level2* l2) {
  auto test_file = RedirectTestImports(repo, parser, f2p, l2->package, &l2->test_uses);
  if (!test_file.ok()) return test_file.failure();
  std::set<std::string> uses(l2->test_uses.begin(), l2->test_uses.end());
  std::vector<std::pair<std::string, std::string>> redirected;  // path -> redirected text
  for (const auto& path : LoadedTestModules(repo, f2p)) {
    size_t file = *repo.FileOf(path);
    auto text = Redirect(repo, parser, file, l2->package, false);
    if (!text.ok()) return text.failure();
    if (*text == repo.source(file)) continue;
    redirected.emplace_back(path, *text);
    TestUses(repo, repo.files()[file], l2->package, &uses);
  }
  auto configs = RedirectedConfigs(env, repo, f2p, l2->package, &uses);
  if (!configs.ok()) return configs.failure();
  std::vector<std::pair<std::string, std::string>> originals;  // path -> text before
  for (const auto& [path, text] : redirected) originals.emplace_back(path, repo.source(*repo.FileOf(path)));
  for (auto& c : *configs) {
    originals.emplace_back(c.path, std::move(c.original));
    redirected.emplace_back(c.path, std::move(c.redirected));
  }
  l2->test_uses.assign(uses.begin(), uses.end());
  for (const auto& c : redirected) l2->redirected.push_back(c.first);
  if (auto s = env.MakeDirs(work); !s.ok()) return s;
  if (auto r = git.Run(work, {"init", "-q"}); !r.ok()) return r.failure();
  auto write = [&](const std::string& path, const std::string& text) -> util::Status {
    std::string dst = util::JoinPath(work, path);
    if (auto s = env.MakeDirs(util::DirName(dst)); !s.ok()) return s;
    return env.WriteFileAtomic(dst, text);
  };
  for (const auto& [path, text] : originals) {
    if (auto s = write(path, text); !s.ok()) return s;
  }
  if (!redirected.empty()) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"add", "-A"}, {"commit", "-q", "--no-verify", "-m", "fbkit: test modules"}}) {
      if (auto r = git.Run(work, args); !r.ok()) return r.failure();
    }
  }
  for (const auto& [path, text] : redirected) {
    if (auto s = write(path, text); !s.ok()) return s;
  }
  if (auto s = write(f2p, *test_file); !s.ok()) return s;
  if (auto r = git.Run(work, {"add", "-N", "--", f2p}); !r.ok()) return r.failure();
  auto tp = git.Run(work, {"diff", "--no-color", "--no-ext-diff", "--binary"});
  if (!tp.ok()) return tp.failure();
  l2->test_patch = *tp;
  (void)env.RemoveAll(work);
  return util::Status::Ok();
}

}  // namespace

util::Expected<Level2> WriteLevel2(util::Env& env, runner::Git& git, const Repo& repo,
                                   parser::PythonParser& parser, const std::string& f2p,
                                   const std::vector<std::string>& f2p_tests,
                                   const std::vector<Ent>& tops,
                                   const PackageSources& sources, const std::string& dir) {
  Level2 l2;
  auto package = PackageOf(repo, tops);
  if (!package.ok()) return package.failure();
  l2.package = package->first;
  std::string work = util::JoinPath(dir, "l2work");
  auto patch = GoldPatch(env, git, repo, parser, l2.package, package->second, sources, work);
  if (!patch.ok()) return patch.failure();
  l2.patch = *patch;
  if (auto s = TestPatch(env, git, repo, parser, f2p, work, &l2); !s.ok()) {
    return s.failure();
  }
  for (const auto& id : f2p_tests) {  // pytest shows parametrised strings in the ids
    size_t params = std::min(id.find('['), id.size());
    l2.f2p_tests.push_back(id.substr(0, params) +
                           RenameModulePaths(repo, l2.package, id.substr(params)));
  }
  return l2;
}

}  // namespace fbkit::extract::make

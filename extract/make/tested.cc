#include "extract/make/tested.h"

#include <algorithm>
#include <map>
#include <set>

#include "extract/taskdir/task_dir.h"
#include "parser/modules.h"

namespace fbkit::extract::make {

using parser::EntityKind;

namespace {

bool InPackageOf(const std::string& module, const std::string& package) {
  return module == package || module.starts_with(package + ".");
}

bool IsTestModuleOf(const Repo& repo, const std::string& module) {
  auto f = repo.ModuleFile(module);
  return f && taskdir::IsTestCode(repo.files()[*f].path, {});
}

// `dotted`'s entity, with `depth` re-exports left to follow.
std::optional<Ent> ResolveIn(const Repo& repo, const std::string& dotted, int depth) {
  if (depth < 0) return std::nullopt;
  // The longest prefix that is a module of the table.
  std::vector<size_t> cuts = {dotted.size()};
  for (size_t p = dotted.rfind('.'); p != std::string::npos && p > 0; p = dotted.rfind('.', p - 1)) {
    cuts.push_back(p);
  }
  for (size_t cut : cuts) {
    std::string module = dotted.substr(0, cut);
    auto file = repo.ModuleFile(module);
    if (!file) continue;
    if (cut == dotted.size()) return std::nullopt;  // a module
    std::string rest = dotted.substr(cut + 1);
    const auto& t = repo.files()[*file];
    if (auto e = repo.Find(t.path + "::" + rest)) return e;
    std::string head(Head(rest));
    std::string tail = rest.substr(head.size());
    for (const auto& imp : t.imports) {
      for (const auto& n : imp.names) {
        if (n.name == "*" || BoundName(imp, n) != head) continue;
        std::string target = imp.is_from ? parser::AbsoluteModule(t, imp) + "." + n.name
                                         : (n.alias ? n.name : std::string(Head(n.name)));
        if (target == dotted) continue;
        if (auto e = ResolveIn(repo, target + tail, depth - 1)) return e;
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> TestedNames(const Repo& repo, const std::string& f2p,
                                     const std::string& package) {
  std::set<std::string> names;
  auto file = repo.FileOf(f2p);
  if (!file || package.empty()) return {};
  const auto& t = repo.files()[*file];
  std::map<std::string, std::string> modules;  // bound name -> the package module it is
  for (const auto& imp : t.imports) {
    std::string base = parser::AbsoluteModule(t, imp);
    for (const auto& n : imp.names) {
      if (n.name == "*") continue;
      if (imp.is_from && InPackageOf(base, package) && !IsTestModuleOf(repo, base)) {
        std::string dotted = base + "." + n.name;
        // `from pkg import keys`: a module, whose dotted uses count below.
        if (repo.ModuleFile(dotted)) {
          modules[BoundName(imp, n)] = dotted;
        } else {
          names.insert(dotted);
        }
      } else if (!imp.is_from && InPackageOf(n.name, package) && !IsTestModuleOf(repo, n.name)) {
        modules[BoundName(imp, n)] = n.alias ? n.name : std::string(Head(n.name));
      }
    }
  }
  for (const auto& e : t.entities) {
    for (const auto& r : e.references) {
      std::string head(Head(r));
      auto it = modules.find(head);
      if (it == modules.end() || r == head) continue;
      std::string dotted = it->second + r.substr(head.size());
      // A module named on the way ("pkg.keys" of "pkg.keys.hashkey") is no name itself.
      if (!repo.ModuleFile(dotted)) names.insert(dotted);
    }
  }
  return {names.begin(), names.end()};
}

std::string UseAsDotted(const std::string& use, const std::string& package) {
  std::string u = use;
  if (u.starts_with("from ")) {
    size_t imp = u.find(" import ");
    if (imp == std::string::npos) return u;
    u = u.substr(5, imp - 5) + "." + u.substr(imp + 8);
  }
  static const std::string kAgent = "agent_code";
  if (u == kAgent || u.starts_with(kAgent + ".")) u = package + u.substr(kAgent.size());
  return u;
}

std::optional<Ent> ResolveDotted(const Repo& repo, std::string_view dotted) {
  return ResolveIn(repo, std::string(dotted), 8);
}

namespace {

// The assignment `dotted` names, through at most `depth` re-exports (`from .impl import ALL`).
std::optional<std::string> AssignmentIn(const Repo& repo, std::string_view dotted, int depth) {
  size_t dot = dotted.rfind('.');
  if (dot == std::string_view::npos || depth < 0) return std::nullopt;
  auto file = repo.ModuleFile(dotted.substr(0, dot));
  if (!file) return std::nullopt;
  std::string name(dotted.substr(dot + 1));
  const auto& t = repo.files()[*file];
  for (const auto& a : t.assignments) {
    if (a.name != name || a.rebinds) continue;
    const std::string& src = repo.source(*file);
    std::string text = src.substr(static_cast<size_t>(a.start_byte),
                                  static_cast<size_t>(a.end_byte - a.start_byte));
    if (text.size() > 300) text = text.substr(0, 297) + "...";
    return text;
  }
  for (const auto& imp : t.imports) {
    if (!imp.is_from) continue;
    for (const auto& n : imp.names) {
      if (n.name == "*" || BoundName(imp, n) != name) continue;
      std::string target = parser::AbsoluteModule(t, imp) + "." + n.name;
      if (target == dotted) continue;
      if (auto a = AssignmentIn(repo, target, depth - 1)) return a;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> AssignmentOf(const Repo& repo, std::string_view dotted) {
  return AssignmentIn(repo, dotted, 8);
}

std::vector<std::string> TestFileNames(const Repo& repo, const std::string& f2p, size_t max) {
  auto file = repo.FileOf(f2p);
  if (!file) return {};
  std::vector<std::string> classes, functions;
  for (Ent v : repo.EntitiesOf(*file)) {
    const auto& e = repo.entity(v);
    if (!repo.IsTopLevel(v)) continue;
    if (e.kind == EntityKind::kClass && e.name.find("Test") != std::string::npos) {
      classes.push_back(e.name);
    } else if (e.kind == EntityKind::kFunction && e.name.starts_with("test")) {
      functions.push_back(e.name);
    }
  }
  std::vector<std::string>& out = classes.empty() ? functions : classes;
  if (out.size() > max) out.resize(max);
  return out;
}

}  // namespace fbkit::extract::make

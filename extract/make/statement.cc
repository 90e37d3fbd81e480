#include "extract/make/statement.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "extract/make/describe.h"
#include "extract/make/tested.h"
#include "parser/modules.h"

namespace fbkit::extract::make {

using parser::Entity;
using parser::EntityKind;

namespace {

std::string Indent(const std::string& text, const std::string& pad) {
  std::string out;
  size_t b = 0;
  while (b < text.size()) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    std::string line = text.substr(b, e - b);
    out += (line.empty() ? "" : pad) + line + "\n";
    b = e + 1;
  }
  return out;
}

// Text fbkit or a model wrote (not a docstring from the source) as the body of a Python
// string literal: control characters other than newline and tab dropped, backslashes
// escaped (a model's "C:\\Users" or a trailing backslash would end or break the literal).
std::string LiteralBody(const std::string& text) {
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) continue;
    if (c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// A model's Task section as Markdown that stays inside "## Task": control characters
// dropped, its level-1 and level-2 headings made level 3 (no "## Interface Descriptions" of
// its own), an unclosed code fence closed, at most 64 KiB.
std::string TaskSection(const std::string& text) {
  std::string out;
  bool in_fence = false;
  size_t b = 0;
  while (b < text.size() && out.size() < (64u << 10)) {
    size_t e = text.find('\n', b);
    std::string line = text.substr(b, e == std::string::npos ? std::string::npos : e - b);
    b = e == std::string::npos ? text.size() : e + 1;
    std::string clean;
    for (char c : line) {
      auto u = static_cast<unsigned char>(c);
      if ((u >= 0x20 && u != 0x7f) || c == '\t') clean += c;
    }
    if (clean.starts_with("```")) in_fence = !in_fence;
    if (!in_fence && (clean.starts_with("# ") || clean.starts_with("## "))) {
      clean = "### " + clean.substr(clean.find(' ') + 1);
    }
    out += clean + "\n";
  }
  if (in_fence) out += "```\n";
  return out;
}

std::string Docstring(const std::string& doc) {
  std::string d = doc;
  // Keep it a valid literal: escape a closing triple quote inside.
  for (size_t p = d.find("\"\"\""); p != std::string::npos; p = d.find("\"\"\"", p + 4)) {
    d.replace(p, 3, "\\\"\"\"");
  }
  if (!d.empty() && d.back() == '"') d += ' ';
  if (d.find('\n') == std::string::npos) return "\"\"\"" + d + "\"\"\"\n";
  return "\"\"\"\n" + d + "\n\"\"\"\n";
}

std::string Header(const Entity& e) {
  std::string out;
  for (const auto& d : e.decorators) out += "@" + d + "\n";
  if (e.kind == EntityKind::kClass) return out + "class " + e.name + e.signature + ":\n";
  return out + (e.is_async ? "async def " : "def ") + e.name + e.signature + ":\n";
}

// Where a class's header ends: just after the ':' that closes `class X(...)`.
size_t HeaderEnd(const std::string& src, size_t from, size_t limit) {
  int depth = 0;
  for (size_t p = from; p < limit; ++p) {
    char c = src[p];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == '#') p = std::min(limit, src.find('\n', p));
    if (c == ':' && depth == 0) return p + 1;
  }
  return limit;
}

// After a docstring literal starting at p (prefixes and triple quotes handled).
size_t SkipString(const std::string& src, size_t p, size_t limit) {
  while (p < limit && std::isalpha(static_cast<unsigned char>(src[p]))) ++p;
  if (p >= limit || (src[p] != '"' && src[p] != '\'')) return std::string::npos;
  std::string quote = src.compare(p, 3, std::string(3, src[p])) == 0 ? std::string(3, src[p])
                                                                     : std::string(1, src[p]);
  for (size_t q = p + quote.size(); q < limit; ++q) {
    if (src[q] == '\\') {
      ++q;
    } else if (src.compare(q, quote.size(), quote) == 0) {
      return q + quote.size();
    }
  }
  return std::string::npos;
}

// The class-level statements of a class body (attributes, assignments), as written,
// without its docstring and its nested defs and classes.
std::string ClassStatements(const Repo& repo, Ent v) {
  const auto& table = repo.table(v);
  const Entity& cls = repo.entity(v);
  const std::string& src = repo.source(repo.file(v));
  size_t limit = static_cast<size_t>(cls.end_byte);
  size_t kw = src.find("class", static_cast<size_t>(cls.start_byte));
  size_t p = HeaderEnd(src, kw == std::string::npos ? limit : kw + 5, limit);
  size_t first = src.find_first_not_of(" \t\r\n\\", p);
  if (cls.docstring && first < limit) {
    size_t after = SkipString(src, first, limit);
    if (after != std::string::npos) p = after;
  }
  std::vector<std::pair<int64_t, int64_t>> holes;
  for (const auto& e : table.entities) {
    if (e.parent == cls.id) holes.push_back({e.start_byte, e.end_byte});
  }
  std::string out;
  for (size_t b = src.find('\n', p); b != std::string::npos && b + 1 < limit;) {
    size_t line = b + 1;
    size_t e = std::min(limit, src.find('\n', line));
    bool in_hole = false;
    for (const auto& [hs, he] : holes) {
      size_t hole_line = src.rfind('\n', static_cast<size_t>(hs));
      hole_line = hole_line == std::string::npos ? 0 : hole_line + 1;
      in_hole = in_hole || (line >= hole_line && line < static_cast<size_t>(he));
    }
    std::string text = src.substr(line, e - line);
    size_t nb = text.find_first_not_of(" \t\r");
    if (!in_hole && nb != std::string::npos && text[nb] != '#') out += text + "\n";
    b = e < limit ? e : std::string::npos;
  }
  return out;
}

}  // namespace

util::Expected<std::string> RenderInterface(const Repo& repo, Ent v,
                                            const std::set<Ent>& members_shown,
                                            const Describe& describe) {
  const Entity& e = repo.entity(v);
  auto doc = describe(v);
  if (!doc.ok()) return doc;
  std::string out = Header(e);
  std::string body = Docstring(*doc);
  if (e.kind != EntityKind::kClass) return out + Indent(body + "...", "    ");
  // Class attributes as written, dedented to the class body.
  std::string attrs = ClassStatements(repo, v);
  std::string common;
  if (!attrs.empty()) {
    size_t n = attrs.find_first_not_of(" \t");
    common = attrs.substr(0, n);
  }
  std::string members;
  for (Ent mv : repo.Children(v)) {
    if (!members_shown.count(mv)) continue;
    const Entity& m = repo.entity(mv);
    auto mdoc = describe(mv);
    if (!mdoc.ok()) return mdoc;
    members += "\n" + Header(m) + Indent(Docstring(*mdoc) + "...", "    ");
  }
  std::string attr_text;
  size_t b = 0;
  while (b < attrs.size()) {
    size_t nl = attrs.find('\n', b);
    std::string line = attrs.substr(b, nl - b);
    attr_text += (line.starts_with(common) ? line.substr(common.size()) : line) + "\n";
    b = nl + 1;
  }
  return out + Indent(body + attr_text + members, "    ");
}

std::string ImportPath(const Repo& repo, const std::string& f2p, Ent v) {
  const Entity& e = repo.entity(v);
  const std::string& module = repo.table(v).module;
  auto test = repo.FileOf(f2p);
  if (test) {
    const auto& t = repo.files()[*test];
    for (const auto& imp : t.imports) {
      if (!imp.is_from) continue;
      for (const auto& n : imp.names) {
        if (n.name == e.name) return "from " + parser::AbsoluteModule(t, imp) + " import " + e.name;
      }
    }
    std::map<std::string, std::string> modules;  // bound name -> module
    for (const auto& imp : t.imports) {
      if (imp.is_from) continue;
      for (const auto& n : imp.names)
        modules[BoundName(imp, n)] = n.alias ? n.name : std::string(Head(n.name));
    }
    for (const auto& ent : t.entities) {
      for (const auto& r : ent.references) {
        if (!r.ends_with("." + e.name)) continue;
        auto it = modules.find(std::string(Head(r)));
        if (it == modules.end()) continue;
        std::string middle =
            r.substr(Head(r).size(), r.size() - Head(r).size() - e.name.size() - 1);
        return "from " + it->second + middle + " import " + e.name;
      }
    }
  }
  return "from " + module + " import " + e.name;
}

namespace {

// `s` on one line: whitespace runs made one space, trimmed.
std::string FlatText(const std::string& s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    bool ws = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (ws && !space && !out.empty()) out += ' ';
    if (!ws) out += c;
    space = ws;
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The first paragraph of an entity's own docstring, on one line ("" when it has none).
std::string OwnSummary(const Entity& e) {
  if (!e.docstring) return "";
  std::string d = *e.docstring;
  size_t b = d.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  d = d.substr(b);
  return FlatText(d.substr(0, d.find("\n\n")));
}

// `code` in a fenced block of `lang`, the fence one backtick longer than any run of backticks
// opening a line of it (a docstring's own ```pycon example must not end the block).
std::string Fenced(const std::string& code, const std::string& lang) {
  size_t longest = 2;
  for (size_t at = 0; at < code.size();) {
    size_t end = code.find('\n', at);
    if (end == std::string::npos) end = code.size();
    size_t first = code.find_first_not_of(" \t", at);
    if (first != std::string::npos && first < end) {
      size_t run = 0;
      while (first + run < end && code[first + run] == '`') ++run;
      longest = std::max(longest, run);
    }
    at = end + 1;
  }
  std::string fence(longest + 1, '`');
  std::string body = code.ends_with("\n") ? code : code + "\n";
  return fence + lang + "\n" + body + fence + "\n";
}

std::string Backticked(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + std::string("`") + names[i] + "`";
  }
  return out;
}

// What a bullet says of a class without a docstring of its own: its bases and methods.
std::string ClassNote(const Repo& repo, Ent v) {
  const Entity& e = repo.entity(v);
  if (e.kind != EntityKind::kClass) return "";
  std::vector<std::string> methods;
  for (Ent m : repo.Children(v)) {
    if (repo.entity(m).kind == EntityKind::kMethod && methods.size() < 8) methods.push_back(repo.entity(m).name);
  }
  std::string bases = FlatText(e.signature);
  std::string out = "a class";
  if (bases.size() > 2) out += " derived from " + bases.substr(1, bases.size() - 2);
  if (!methods.empty()) out += (bases.size() > 2 ? "," : "") + std::string(" with the methods ") + Backticked(methods);
  return out == "a class" ? "" : out;
}

// What the F2P tests passed to and got from a function, as a bullet says it ("observed:
// values list, returns float"); "" when nothing was observed.
std::string TypesNote(const Repo& repo, Ent v, const tracer::TypeMap& observed) {
  const tracer::ObservedTypes* seen = ObservedFor(repo, v, &observed);
  if (!seen || repo.entity(v).kind == EntityKind::kClass) return "";
  std::string out;
  for (const auto& [name, types] : seen->params) {
    std::string list;
    for (const auto& t : types) list += (list.empty() ? "" : " or ") + t;
    out += (out.empty() ? "" : ", ") + name + " " + list;
  }
  std::string returns;
  for (const auto& t : seen->returns) returns += (returns.empty() ? "" : " or ") + t;
  if (!returns.empty()) out += (out.empty() ? "" : ", ") + std::string("returns ") + returns;
  return out.empty() ? "" : "observed in the tests: " + out;
}

// How code calls an entity: "name(params)" for a function, "Name(params)" of its __init__
// (self left out) for a class, or "Name" with its bases.
std::string CallForm(const Repo& repo, Ent v, const std::string& display) {
  const Entity& e = repo.entity(v);
  if (e.kind != EntityKind::kClass) return display + FlatText(e.signature);
  for (Ent m : repo.Children(v)) {
    const Entity& init = repo.entity(m);
    if (init.name != "__init__") continue;
    std::string sig = FlatText(init.signature);
    size_t close = sig.rfind(')');
    sig = close == std::string::npos ? sig : sig.substr(0, close + 1);
    for (const char* self : {"(self, ", "(self,", "(self"}) {
      if (sig.starts_with(self)) sig = "(" + sig.substr(std::string(self).size());
    }
    return display + sig;
  }
  std::string bases = FlatText(e.signature);
  return bases.empty() || bases == "()" ? display + "()" : display;  // object's constructor
}

// The entities of `file` (and tested ones) that use v's name, as their qualified names
// (at most three, in table order).
std::vector<std::string> UsersOf(const Repo& repo, Ent v) {
  const Entity& e = repo.entity(v);
  std::vector<std::string> out;
  for (Ent u : repo.EntitiesOf(repo.file(v))) {
    const Entity& ue = repo.entity(u);
    if (u == v || ue.kind == EntityKind::kModule || repo.Within(u, v) || out.size() >= 3) continue;
    for (const auto& r : ue.references) {
      if (Head(r) != e.name) continue;
      // A nested function is named by its outermost entity: the one a reader can find.
      Ent outer = u;
      while (repo.Parent(outer) && !repo.IsTopLevel(outer) &&
             repo.entity(*repo.Parent(outer)).kind != EntityKind::kModule &&
             repo.entity(*repo.Parent(outer)).kind != EntityKind::kClass) {
        outer = *repo.Parent(outer);
      }
      std::string name = repo.entity(outer).qualname;
      if (outer != v && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
      break;
    }
  }
  return out;
}

// Whether the entity, or code nested in it, names one of the removed entities.
bool ReachesRemoved(const Repo& repo, Ent v, const std::set<std::string>& removed_names) {
  std::vector<Ent> all = repo.Descendants(v);
  all.push_back(v);
  for (Ent d : all) {
    for (const auto& r : repo.entity(d).references) {
      std::string_view last = r;
      if (size_t dot = last.rfind('.'); dot != std::string_view::npos) last = last.substr(dot + 1);
      if (removed_names.count(std::string(Head(r))) || removed_names.count(std::string(last))) {
        return true;
      }
    }
  }
  return false;
}

bool IsPublic(const std::string& dotted) {
  size_t dot = dotted.rfind('.');
  std::string last = dot == std::string::npos ? dotted : dotted.substr(dot + 1);
  return !last.starts_with("_") || (last.starts_with("__") && last.ends_with("__"));
}

// A name the tests read from the package, as the statement shows it: relative to the
// package ("keys.hashkey"), with the entity it stands for.
struct Tested {
  std::string display;
  std::optional<Ent> entity;
  bool module = false;  // a module of the package (its names read count on their own)
  int rank = 2;  // 0: removed itself, 1: reaches removed code, 2: neither
};

std::vector<Tested> TestedOf(const Repo& repo, const StatementInput& in,
                             const std::vector<std::string>& dotted, const std::string& package) {
  std::set<std::string> removed_names;
  for (Ent v : in.removed) removed_names.insert(repo.entity(v).name);
  std::vector<Tested> out;
  for (const auto& d : dotted) {
    Tested t;
    t.display = d.starts_with(package + ".") ? d.substr(package.size() + 1) : d;
    t.entity = ResolveDotted(repo, d);
    t.module = !t.entity && repo.ModuleFile(d).has_value();
    if (t.entity) {
      t.rank = in.removed.count(*t.entity) ? 0 : ReachesRemoved(repo, *t.entity, removed_names) ? 1 : 2;
    }
    out.push_back(t);
  }
  return out;
}

// The title's subject: the public tested names (at level 1 those closest to the removed
// code; at most three named), else the public top objects, else the test file.
std::string TitleSubject(const Repo& repo, const StatementInput& in, const std::vector<Tested>& tested) {
  std::vector<std::string> names;
  for (int rank = 0; rank <= 2 && names.empty(); ++rank) {
    for (const auto& t : tested) {
      if ((t.rank == rank || in.level == 2) && IsPublic(t.display)) names.push_back(t.display);
    }
  }
  if (names.empty()) {
    for (Ent v : in.tops) {
      if (IsPublic(repo.entity(v).qualname)) names.push_back(repo.entity(v).qualname);
    }
  }
  if (names.empty()) return "the behaviour `" + in.f2p + "` tests";
  size_t more = names.size() > 3 ? names.size() - 3 : 0;
  names.resize(names.size() - more);
  std::string out = Backticked(names);
  if (more) out += " (and " + std::to_string(more) + " more)";
  return out;
}

// The Task section fbkit writes itself: a title naming what the tests exercise, the core
// functionality (the tested names with their signatures and summaries, the interfaces to
// write with their signatures, summaries and users), requirements and challenges.
std::string OwnTaskSection(const Repo& repo, const StatementInput& in,
                           const std::vector<Ent>& shown, const std::vector<Tested>& tested,
                           const tracer::TypeMap& observed) {
  std::set<std::string> files;
  size_t functions = 0;
  for (Ent v : in.removed) {
    files.insert(repo.table(v).path);
    functions += repo.entity(v).kind != EntityKind::kClass;
  }
  std::string subject = TitleSubject(repo, in, tested);
  std::string out = "**Task Statement: implement " + subject +
                    (in.level == 2 ? " from scratch as the package `agent_code`"
                                   : " and the code behind it in " + in.repo_name) +
                    ", as `" + in.f2p + "` exercises it**\n\n";
  out += "**Core Functionality**\n\n";
  std::vector<std::string> own = TestFileNames(repo, in.f2p, 8);
  std::string by = "The tests (`" + in.f2p + "`" + (own.empty() ? "" : ": " + Backticked(own)) + ")";
  std::vector<std::string> lines, unresolved;
  for (const auto& t : tested) {
    if (!t.entity) {
      if (!t.module) unresolved.push_back(t.display);
      continue;
    }
    if (lines.size() >= 12) continue;
    std::string summary = OwnSummary(repo.entity(*t.entity));
    if (summary.empty()) summary = ClassNote(repo, *t.entity);
    if (summary.empty()) summary = TypesNote(repo, *t.entity, observed);
    lines.push_back("- `" + CallForm(repo, *t.entity, t.display) + "`" + (summary.empty() ? "" : ": " + summary));
  }
  if (!lines.empty() || !unresolved.empty()) {
    out += by + " use the library through:\n\n";
    for (const auto& l : lines) out += l + "\n";
    if (!unresolved.empty()) out += "- the names " + Backticked(unresolved) + "\n";
    out += "\nTo implement (the interfaces below):\n\n";
  } else {
    out += by + " exercise the interfaces below:\n\n";
  }
  for (Ent v : shown) {
    const Entity& e = repo.entity(v);
    std::string line = "- `" + CallForm(repo, v, e.qualname) + "`";
    std::string summary = OwnSummary(e);
    std::vector<std::string> users = UsersOf(repo, v);
    std::set<std::string> own_name = {e.name};
    for (const auto& t : tested) {
      if (users.size() < 4 && t.entity && *t.entity != v && ReachesRemoved(repo, *t.entity, own_name) &&
          std::find(users.begin(), users.end(), repo.entity(*t.entity).qualname) == users.end() &&
          std::find(users.begin(), users.end(), t.display) == users.end()) {
        users.push_back(t.display);
      }
    }
    if (summary.empty()) summary = ClassNote(repo, v);
    if (summary.empty() && users.empty()) summary = TypesNote(repo, v, observed);
    if (!summary.empty()) {
      line += ": " + summary;
    } else if (!users.empty()) {
      line += ": used by " + Backticked(users);
    }
    // A class that stays, tested through methods of its own that go: those are the task.
    std::vector<std::string> methods;
    for (Ent t : in.tops) {
      if (repo.Parent(t) == std::optional<Ent>(v)) methods.push_back(repo.entity(t).qualname);
    }
    if (!methods.empty()) line += " (to write: its methods " + Backticked(methods) + ")";
    out += line + "\n";
  }
  out += "\n**Main Features and Requirements**\n\n";
  out +=
      "- Provide every interface listed below with exactly the given import path, name and "
      "signature (parameter kinds, defaults, annotations and decorators as shown).\n";
  out += "- The behaviour is checked by the test file `" + in.f2p + "` (" +
         "not shown), which must pass completely.\n";
  out += "- Everything else in the project must keep working: existing tests must still pass.\n";
  out += "\n**Key Challenges**\n\n";
  out += "- The feature spans " + std::to_string(files.size()) + " file(s) and " +
         std::to_string(functions) +
         " function(s) or method(s) in the original implementation; "
         "helpers it needs may have to be written as well.\n";
  out += "- Interfaces must integrate with the existing code they are called from and call into.\n";
  return out;
}

std::string NoteSection(const StatementInput& in) {
  std::string out = "\n**NOTE**\n\n";
  if (in.level == 1) {
    out +=
        "- Implement the feature inside this repository, in the files named below; do not "
        "change or add tests.\n";
  } else {
    out +=
        "- Implement the feature from scratch as an installable Python package named "
        "`agent_code` (a directory `agent_code/` with an `__init__.py`) at the root of an "
        "empty project.\n";
    out += "- Do not download, install, copy or import the original library `" + in.package +
           "`; `agent_code` must not depend on it.\n";
  }
  out += "- Do not visit the project's online repository or documentation pages.\n";
  if (!in.repo_name.starts_with("local/") && in.repo_name.find('/') != std::string::npos) {
    out += "\nYou are forbidden to access the following URLs:\n\n- https://github.com/" +
           in.repo_name + "\n";
  }
  return out;
}

// The blocks the statement shows, in order: a method is shown in its class's block. Adds to
// `members` the removed methods of each class shown as a whole.
std::vector<Ent> ShownBlocks(const Repo& repo, const StatementInput& in, std::set<Ent>* members) {
  std::vector<Ent> shown;
  for (Ent v : in.shown.empty() ? in.tops : repo.ByIdOrder(in.shown)) {
    Ent block = v;
    if (repo.entity(v).kind == EntityKind::kMethod) {
      auto parent = repo.Parent(v);
      if (parent && repo.entity(*parent).kind == EntityKind::kClass) block = *parent;
    }
    if (std::find(shown.begin(), shown.end(), block) == shown.end()) shown.push_back(block);
    if (block == v && repo.entity(v).kind == EntityKind::kClass &&
        (in.shown.empty() || in.shown.count(v))) {
      for (Ent m : in.removed) {
        if (repo.Parent(m) == v) members->insert(m);
      }
    }
  }
  return shown;
}

// How the test file imports v; at level 2 from `agent_code` instead of the package.
std::string InterfaceImport(const Repo& repo, const StatementInput& in, Ent v) {
  std::string import = ImportPath(repo, in.f2p, v);
  if (in.level == 2 && !in.package.empty()) {
    std::string from = "from " + in.package;
    if (import.starts_with(from + " ") || import.starts_with(from + ".")) {
      import = "from agent_code" + import.substr(from.size());
    }
  }
  return import;
}

// The "## Interface Descriptions" heading and what it says about where interfaces go.
std::string DescriptionsHeading(const StatementInput& in) {
  std::string out = "\n## Interface Descriptions\n\n";
  if (in.level == 1) {
    return out +
           "Each interface goes into the file named in its block (the path is relative to the "
           "repository root), importable as shown.\n";
  }
  out +=
      "Each interface must be importable from `agent_code` exactly as shown; organise the "
      "package's modules as the import paths say.\n";
  if (!in.test_uses.empty()) {
    out += "\nThe tests read these names from `agent_code` (all of them must exist):\n\n";
    for (const auto& u : in.test_uses) out += "- `" + u + "`\n";
  }
  return out;
}

}  // namespace

namespace {

// The top-level package of the top objects ("" when none).
std::string TopPackage(const Repo& repo, const std::vector<Ent>& tops) {
  return tops.empty() ? "" : std::string(Head(repo.table(tops.front()).module));
}

// A tested class's members worth a signature: its public and special methods.
std::set<Ent> PublicMembers(const Repo& repo, Ent cls) {
  std::set<Ent> out;
  for (Ent m : repo.Children(cls)) {
    const Entity& e = repo.entity(m);
    if (e.kind == EntityKind::kMethod && IsPublic(e.name)) out.insert(m);
  }
  return out;
}

// "from agent_code.keys import hashkey" for the dotted "pkg.keys.hashkey".
std::string AgentImport(const std::string& dotted, const std::string& package) {
  std::string d = dotted.starts_with(package) ? "agent_code" + dotted.substr(package.size()) : dotted;
  size_t dot = d.rfind('.');
  if (dot == std::string::npos) return "import " + d;
  return "from " + d.substr(0, dot) + " import " + d.substr(dot + 1);
}

// The observed types as an L2 statement names them: the package's own types as agent_code's.
tracer::TypeMap AsAgentCode(const tracer::TypeMap& observed, const std::string& package) {
  auto rename = [&](const std::set<std::string>& names) {
    std::set<std::string> out;
    for (const auto& n : names) {
      out.insert(n.starts_with(package + ".") ? "agent_code" + n.substr(package.size()) : n);
    }
    return out;
  };
  tracer::TypeMap out;
  for (const auto& [code, t] : observed) {
    tracer::ObservedTypes& o = out[code];
    for (const auto& [name, names] : t.params) o.params[name] = rename(names);
    o.returns = rename(t.returns);
  }
  return out;
}



// The types the trace observed in the files `paths`: while the F2P file's tests ran, and
// while the other test files' did (for code the F2P tests did not call); at L2 named as
// agent_code's.
std::pair<tracer::TypeMap, tracer::TypeMap> ObservedIn(const StatementInput& in,
                                                        const std::set<std::string>& paths) {
  tracer::TypeMap f2p, others;
  if (!in.trace) return {};
  for (const auto& [name, f] : in.trace->files) {
    tracer::TypeMap& dst = name == in.f2p ? f2p : others;
    for (const auto& [code, t] : f.types) {
      if (paths.count(code.path)) tracer::AddTypes({{code, t}}, &dst);
    }
  }
  if (in.level == 2 && !in.package.empty()) {
    f2p = AsAgentCode(f2p, in.package);
    others = AsAgentCode(others, in.package);
  }
  return {std::move(f2p), std::move(others)};
}

}  // namespace

util::Expected<std::string> ProblemStatement(const Repo& repo, const StatementInput& in) {
  std::set<Ent> members = in.shown;
  std::vector<Ent> shown = ShownBlocks(repo, in, &members);
  std::string package = in.level == 2 && !in.package.empty() ? in.package : TopPackage(repo, in.tops);
  std::vector<std::string> dotted;
  if (in.level == 2) {
    std::set<std::string> uses;
    for (const auto& u : in.test_uses) uses.insert(UseAsDotted(u, package));
    // What the test reads through a module it imports by name (`from pkg import keys`).
    for (const auto& d : TestedNames(repo, in.f2p, package)) uses.insert(d);
    dotted.assign(uses.begin(), uses.end());
  } else {
    dotted = TestedNames(repo, in.f2p, package);
  }
  std::vector<Tested> tested = TestedOf(repo, in, dotted, package);
  std::set<std::string> paths;
  for (Ent v : shown) paths.insert(repo.table(v).path);
  for (const auto& t : tested) {
    if (t.entity) paths.insert(repo.table(*t.entity).path);
  }
  auto [observed, elsewhere] = ObservedIn(in, paths);
  std::map<Ent, std::string> written;  // entity -> docstring made for it
  Describe describe = [&](Ent r) -> util::Expected<std::string> {
    const Entity& e = repo.entity(r);
    if (e.docstring && !e.docstring->empty()) return *e.docstring;
    if (auto it = written.find(r); it != written.end()) return it->second;
    util::Expected<std::string> doc =
        in.model && in.model->docstring
            ? in.model->docstring(r)
            : util::Expected<std::string>(DescribeFromCode(repo, r, &observed, &elsewhere));
    if (!doc.ok()) return doc;
    if (doc->find_first_not_of(" \t\r\n") == std::string::npos) {
      *doc = DescribeFromCode(repo, r, &observed, &elsewhere);
    }
    *doc = LiteralBody(*doc);
    written[r] = *doc;
    return doc;
  };
  std::string blocks, interfaces;
  size_t n = 0;
  for (Ent v : shown) {
    const Entity& e = repo.entity(v);
    auto rendered = RenderInterface(repo, v, members, describe);
    if (!rendered.ok()) return rendered;
    interfaces += *rendered + "\n";
    blocks += "\n### Interface " + std::to_string(++n) + ": `" + e.name + "`\n\n";
    if (in.level == 1) blocks += "Path: `" + repo.table(v).path + "`\n\n";
    blocks += "Import: `" + InterfaceImport(repo, in, v) + "`\n\n" + Fenced(*rendered, "python");
  }
  if (in.level == 2) {
    // Every name the tests read from agent_code, with its signature.
    std::string used;
    for (size_t i = 0; i < tested.size(); ++i) {
      const Tested& t = tested[i];
      std::string import = AgentImport(dotted[i], package);
      used += "\n### Interface " + std::to_string(++n) + ": `" + t.display + "`\n\nImport: `" +
              import + "`\n\n";
      if (t.entity) {
        auto rendered = RenderInterface(repo, *t.entity, PublicMembers(repo, *t.entity), describe);
        if (!rendered.ok()) return rendered;
        // A re-export under another name (`from .convert import path_length as route_length`).
        std::string name = dotted[i].substr(dotted[i].rfind('.') + 1);
        const Entity& e = repo.entity(*t.entity);
        if (name != e.name && e.kind != EntityKind::kMethod) *rendered += "\n" + name + " = " + e.name + "\n";
        used += Fenced(*rendered, "python");
      } else if (t.module) {
        used += "A module of the package; the names the tests read from it have blocks of "
                "their own.\n";
      } else if (auto assignment = AssignmentOf(repo, dotted[i])) {
        used += "A module-level value, in the original:\n\n" + Fenced(*assignment, "python");
      } else {
        used += "A name the original does not define as a function, class or module-level "
                "assignment of its own (an imported or generated object); the tests read it.\n";
      }
    }
    if (!used.empty()) {
      blocks += "\n### The names the tests use\n\nThe tests read these from `agent_code`; each "
                "must exist with the signature shown.\n" + used;
    }
  }
  std::string task;
  if (in.model && in.model->task_statement) {
    auto t = in.model->task_statement(interfaces, in.level);
    if (!t.ok()) return t;
    if (t->find_first_not_of(" \t\r\n") != std::string::npos) task = TaskSection(*t);
  }
  if (task.empty()) task = OwnTaskSection(repo, in, shown, tested, observed);
  return "## Task\n\n" + task + NoteSection(in) + DescriptionsHeading(in) + blocks;
}

}  // namespace fbkit::extract::make

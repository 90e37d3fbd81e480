#include "extract/make/statement.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "extract/make/describe.h"
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

// The Task section fbkit writes itself: title, core functionality (each top object's first
// docstring paragraph), requirements and challenges from the cut.
std::string OwnTaskSection(const Repo& repo, const StatementInput& in,
                           const std::vector<std::pair<const Entity*, std::string>>& tops) {
  std::set<std::string> files;
  size_t functions = 0;
  for (Ent v : in.removed) {
    files.insert(repo.table(v).path);
    functions += repo.entity(v).kind != EntityKind::kClass;
  }
  std::string names;  // the top objects (a chosen method as Class.method)
  for (Ent v : in.tops) {
    names += (names.empty() ? "" : ", ") + std::string("`") + repo.entity(v).qualname + "`";
  }
  std::string out = "**Task Statement: implement " + names + " in " + in.repo_name + "**\n\n";
  out += "**Core Functionality**\n\n";
  for (const auto& [e, doc] : tops) {
    std::string first = doc.substr(0, doc.find("\n\n"));
    std::replace(first.begin(), first.end(), '\n', ' ');
    out += "- `" + e->name + "`: " + first + "\n";
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

util::Expected<std::string> ProblemStatement(const Repo& repo, const StatementInput& in) {
  std::map<Ent, std::string> written;  // entity -> docstring made for it
  Describe describe = [&](Ent r) -> util::Expected<std::string> {
    const Entity& e = repo.entity(r);
    if (e.docstring && !e.docstring->empty()) return *e.docstring;
    if (auto it = written.find(r); it != written.end()) return it->second;
    util::Expected<std::string> doc = in.model && in.model->docstring
                                          ? in.model->docstring(r)
                                          : util::Expected<std::string>(DescribeFromCode(repo, r));
    if (!doc.ok()) return doc;
    if (doc->find_first_not_of(" \t\r\n") == std::string::npos) *doc = DescribeFromCode(repo, r);
    *doc = LiteralBody(*doc);
    written[r] = *doc;
    return doc;
  };
  std::set<Ent> members = in.shown;
  std::vector<Ent> shown = ShownBlocks(repo, in, &members);
  std::vector<std::pair<const Entity*, std::string>> tops;  // with its docstring
  std::string blocks, interfaces;
  for (Ent v : shown) {
    const Entity& e = repo.entity(v);
    auto doc = describe(v);
    if (!doc.ok()) return doc;
    tops.emplace_back(&e, *doc);
    auto rendered = RenderInterface(repo, v, members, describe);
    if (!rendered.ok()) return rendered;
    interfaces += *rendered + "\n";
    blocks += "\n### Interface " + std::to_string(tops.size()) + ": `" + e.name + "`\n\n";
    if (in.level == 1) blocks += "Path: `" + repo.table(v).path + "`\n\n";
    blocks += "Import: `" + InterfaceImport(repo, in, v) + "`\n\n```python\n" + *rendered +
              "```\n";
  }
  std::string task;
  if (in.model && in.model->task_statement) {
    auto t = in.model->task_statement(interfaces, in.level);
    if (!t.ok()) return t;
    if (t->find_first_not_of(" \t\r\n") != std::string::npos) task = TaskSection(*t);
  }
  if (task.empty()) task = OwnTaskSection(repo, in, tops);
  return "## Task\n\n" + task + NoteSection(in) + DescriptionsHeading(in) + blocks;
}

}  // namespace fbkit::extract::make

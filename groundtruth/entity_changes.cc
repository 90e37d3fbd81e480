#include "groundtruth/entity_changes.h"

#include <algorithm>
#include <map>
#include <set>

#include "util/patch.h"
#include "parser/entities_json.h"
#include "runner/git.h"
#include "util/json_writer.h"

namespace fbkit::groundtruth {
namespace {

bool IsWord(char c) {
  auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || u >= 0x80;
}

bool IsStringPrefix(std::string_view p) {
  std::string l(p);
  for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view x : {"r", "u", "b", "f", "br", "rb", "fr", "rf"}) {
    if (l == x) return true;
  }
  return false;
}

// The index just past the string literal opening at i (unterminated: the end of the line).
size_t SkipString(std::string_view s, size_t i) {
  char q = s[i];
  bool triple = s.substr(i, 3) == std::string(3, q);
  i += triple ? 3 : 1;
  while (i < s.size()) {
    if (s[i] == '\\') {
      i += 2;
    } else if (triple ? s.substr(i, 3) == std::string(3, q) : s[i] == q) {
      return i + (triple ? 3 : 1);
    } else if (!triple && s[i] == '\n') {
      return i;
    } else {
      ++i;
    }
  }
  return s.size();
}

// The block depth of a logical line indented by `width`, given the open indents.
int Depth(std::vector<int>* indents, int width) {
  if (indents->empty()) indents->push_back(width);
  while (indents->size() > 1 && width < indents->back()) indents->pop_back();
  if (width > indents->back()) indents->push_back(width);
  return static_cast<int>(indents->size()) - 1;
}

std::string ModuleOf(const std::string& path) {
  std::string m = path.ends_with(".py") ? path.substr(0, path.size() - 3) : path;
  if (m.ends_with("/__init__")) m.resize(m.size() - 9);
  for (auto& c : m) c = c == '/' ? '.' : c;
  return m;
}

struct Version {
  parser::FileTable table;
  std::string source;
  std::map<std::string, size_t> by_key;  // qualname (with #n) -> index of a reported entity
};

// "path::Outer.f" -> "Outer.f" (the module's own id gives "").
std::string KeyOf(const std::string& id, const std::string& path) {
  return id.size() > path.size() + 2 ? id.substr(path.size() + 2) : "";
}

std::string KindName(parser::EntityKind k) { return parser::EntityKindName(k); }

// The entities a change list reports: classes, functions and methods not nested in a
// function.
Version Load(parser::PythonParser& parser, const std::string& path, const std::string& source) {
  Version v;
  v.source = source;
  v.table = parser.Parse(path, ModuleOf(path), source);
  std::map<std::string, parser::EntityKind> kinds;
  for (const auto& e : v.table.entities) kinds[e.id] = e.kind;
  for (size_t i = 0; i < v.table.entities.size(); ++i) {
    const auto& e = v.table.entities[i];
    if (e.kind == parser::EntityKind::kModule) continue;
    auto p = kinds.find(e.parent);
    bool in_function = p != kinds.end() && (p->second == parser::EntityKind::kFunction ||
                                            p->second == parser::EntityKind::kMethod);
    if (!in_function) v.by_key[KeyOf(e.id, path)] = i;
  }
  return v;
}

// The entity's text from the start of its first line (so indentation is comparable).
std::string_view Text(const Version& v, const parser::Entity& e) {
  auto b = static_cast<size_t>(e.start_byte);
  size_t line = v.source.rfind('\n', b == 0 ? 0 : b - 1);
  size_t from = (b == 0 || line == std::string::npos) ? 0 : line + 1;
  if (v.source.find_first_not_of(" \t", from) < b) from = b;
  // Up to the end of the last line, so that a trailing comment there counts too.
  size_t to = std::min(v.source.find('\n', static_cast<size_t>(e.end_byte)), v.source.size());
  return std::string_view(v.source).substr(from, to - from);
}

std::string RenameKey(const Version& v, const parser::Entity& e) {
  std::string n = NormalizeCode(Text(v, e));
  std::string needle = "def " + e.name + " ";
  if (auto at = n.find(needle); at != std::string::npos) n.replace(at, needle.size(), "def <> ");
  return n;
}

EntityChange Make(const std::string& path, const parser::Entity* before,
                  const parser::Entity* after, Change change) {
  const parser::Entity& e = after ? *after : *before;
  EntityChange c;
  c.entity = e.id;
  c.file = path;
  c.qualname = e.qualname;
  c.kind = KindName(e.kind);
  c.change = change;
  c.start_line = e.start_line;
  c.end_line = e.end_line;
  if (before) c.before_start = before->start_byte, c.before_end = before->end_byte;
  if (after) c.after_start = after->start_byte, c.after_end = after->end_byte;
  return c;
}

// Pairs deleted and new functions of the same kind under the same parent whose bodies
// normalise alike (source order, first fit).
void FindRenames(const Version& before, const Version& after, std::vector<EntityChange>* out) {
  std::set<size_t> used;
  for (auto& n : *out) {
    if (n.change != Change::kNew || n.kind == "class") continue;
    const auto& ne = after.table.entities[after.by_key.at(KeyOf(n.entity, n.file))];
    std::string key = RenameKey(after, ne);
    for (size_t k = 0; k < out->size(); ++k) {
      auto& d = (*out)[k];
      if (d.change != Change::kDeleted || used.count(k) || d.kind != n.kind) continue;
      const auto& de = before.table.entities[before.by_key.at(KeyOf(d.entity, d.file))];
      if (KeyOf(de.parent, d.file) != KeyOf(ne.parent, n.file)) continue;
      if (RenameKey(before, de) != key) continue;
      used.insert(k);
      n.change = Change::kRenamed;
      n.old_entity = d.entity;
      n.before_start = d.before_start, n.before_end = d.before_end;
      break;
    }
  }
  std::vector<EntityChange> kept;
  for (size_t k = 0; k < out->size(); ++k) {
    if (!used.count(k)) kept.push_back(std::move((*out)[k]));
  }
  *out = std::move(kept);
}

void DiffFile(const std::string& path, const Version& before, const Version& after,
              std::vector<EntityChange>* out) {
  std::vector<EntityChange> changes;
  for (const auto& [key, i] : after.by_key) {
    const auto& a = after.table.entities[i];
    auto it = before.by_key.find(key);
    const parser::Entity* b =
        it == before.by_key.end() ? nullptr : &before.table.entities[it->second];
    if (b && (a.kind == parser::EntityKind::kClass) != (b->kind == parser::EntityKind::kClass)) {
      changes.push_back(Make(path, b, nullptr, Change::kDeleted));
      b = nullptr;
    }
    if (!b) {
      changes.push_back(Make(path, nullptr, &a, Change::kNew));
    } else if (a.kind != parser::EntityKind::kClass && Text(before, *b) != Text(after, a)) {
      bool same = NormalizeCode(Text(before, *b)) == NormalizeCode(Text(after, a));
      changes.push_back(Make(path, b, &a, same ? Change::kCosmetic : Change::kModified));
    }
  }
  for (const auto& [key, i] : before.by_key) {
    if (!after.by_key.count(key)) {
      changes.push_back(Make(path, &before.table.entities[i], nullptr, Change::kDeleted));
    }
  }
  FindRenames(before, after, &changes);
  out->insert(out->end(), changes.begin(), changes.end());
}

}  // namespace

const char* ChangeName(Change change) {
  switch (change) {
    case Change::kNew:
      return "new";
    case Change::kModified:
      return "modified";
    case Change::kCosmetic:
      return "cosmetic";
    case Change::kDeleted:
      return "deleted";
    case Change::kRenamed:
      return "renamed";
  }
  return "modified";
}

namespace {

// An open bracket while normalising: its top-level commas, and whether it is a call's.
struct Open {
  int commas = 0;
  bool call = false;
};

bool IsCompound(std::string_view first) {
  static const std::set<std::string_view> kCompound = {"async", "class",  "def",     "elif",
                                                       "else",  "except", "finally", "for",
                                                       "if",    "try",    "while",   "with"};
  return kCompound.count(first) > 0;
}

bool IsCallee(std::string_view last) {
  static const std::set<std::string_view> kKeywords = {
      "and", "as",    "assert", "await",  "del",  "elif", "else",   "except",
      "for", "from",  "if",     "import", "in",   "is",   "lambda", "not",
      "or",  "raise", "return", "while",  "with", "yield"};
  if (last == ")" || last == "]") return true;
  return !last.empty() && IsWord(last[0]) && !std::isdigit(static_cast<unsigned char>(last[0])) &&
         !kKeywords.count(last);
}

// A one-line string literal's prefix and quote ("f\"" for f"x"), or "" for anything else.
std::string StringHead(std::string_view tok) {
  size_t p = 0;
  while (p < tok.size() && std::isalpha(static_cast<unsigned char>(tok[p]))) ++p;
  if (p >= tok.size() || (tok[p] != '"' && tok[p] != '\'')) return "";
  if (tok.substr(p, 3) == std::string(3, tok[p]) || tok.back() != tok[p]) return "";
  std::string head(tok.substr(0, p + 1));
  for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return head;
}

// Implicit concatenation: "a" "b" is "ab" when both literals share prefix and quote.
bool MergeString(std::string_view tok, const std::string& last, std::string* out) {
  std::string head = StringHead(tok);
  if (head.empty() || head != StringHead(last) || out->empty()) return false;
  out->pop_back();
  out->append(tok.substr(head.size()));
  return true;
}

// Appends one token; a trailing comma before a closing bracket is dropped when it cannot
// change the meaning (a call's arguments, or two or more elements).
void Emit(std::string_view tok, std::vector<Open>* open, std::string* out, std::string* last,
          bool space) {
  char c = tok.size() == 1 ? tok[0] : '\0';
  if ((c == ')' || c == ']' || c == '}') && !open->empty()) {
    if (*last == "," && (open->back().commas >= 2 || open->back().call)) {
      out->resize(out->size() - (out->size() >= 2 && (*out)[out->size() - 2] == ' ' ? 2 : 1));
    }
    open->pop_back();
  }
  if (c == ',' && !open->empty()) ++open->back().commas;
  if (c == '(' || c == '[' || c == '{') open->push_back({0, c == '(' && IsCallee(*last)});
  if (space && MergeString(tok, *last, out)) return;
  if (space) *out += ' ';
  out->append(tok);
  *last = std::string(tok);
}

}  // namespace

std::string NormalizeCode(std::string_view s) {
  std::string out, last;
  std::vector<int> indents;
  std::vector<Open> open;
  size_t i = 0, n = s.size();
  bool line_start = true, space = false;
  bool first = false, header = false, inline_body = false;  // compound-statement header state
  int depth = 0;
  while (i < n) {
    if (line_start && open.empty()) {
      size_t j = i;
      int w = 0;
      for (; j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\f'); ++j) {
        w = s[j] == '\t' ? (w / 8 + 1) * 8 : w + 1;
      }
      if (j < n && (s[j] == '\n' || s[j] == '\r' || s[j] == '#')) {
        size_t e = s.find('\n', j);
        i = e == std::string_view::npos ? n : e + 1;
        continue;
      }
      if (j >= n) break;
      if (!out.empty()) out += '\n';
      depth = Depth(&indents, w);
      out += std::to_string(depth) + ":";
      i = j, line_start = false, space = false, last.clear();
      first = true, header = false, inline_body = false;
      continue;
    }
    char c = s[i];
    if (c == '#') {
      while (i < n && s[i] != '\n') ++i;
    } else if (c == '\\' && i + 1 < n && (s[i + 1] == '\n' || s[i + 1] == '\r')) {
      i += 2;
    } else if (c == '\n') {
      ++i;
      line_start = open.empty();
      inline_body = inline_body && !line_start;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      ++i;
    } else {
      size_t b = i;
      if (c == '"' || c == '\'') {
        i = SkipString(s, i);
      } else if (IsWord(c)) {
        while (i < n && IsWord(s[i])) ++i;
        if (i < n && (s[i] == '"' || s[i] == '\'') && IsStringPrefix(s.substr(b, i - b))) {
          i = SkipString(s, i);
        }
      } else {
        ++i;
      }
      std::string_view tok = s.substr(b, i - b);
      if (inline_body && open.empty()) {
        // "def f(): ..." is "def f():\n    ...": the body goes on its own line.
        out += "\n" + std::to_string(depth + 1) + ":";
        space = false, inline_body = false, last.clear();
      }
      if (header && open.empty() && tok == ":") header = false, inline_body = true;
      Emit(tok, &open, &out, &last, space);
      if (first) header = IsCompound(tok), first = false;
      space = true;
    }
  }
  return out;
}

ChangeSet DiffEntities(parser::PythonParser& parser, const std::vector<FileVersions>& files) {
  ChangeSet set;
  std::vector<FileVersions> sorted = files;
  std::sort(sorted.begin(), sorted.end(),
            [](const FileVersions& a, const FileVersions& b) { return a.path < b.path; });
  for (const auto& f : sorted) {
    FileChange fc;
    fc.path = f.path;
    fc.status = !f.before ? "new" : !f.after ? "deleted" : "modified";
    fc.python = f.path.ends_with(".py");
    if (fc.python) {
      Version before = Load(parser, f.path, f.before.value_or(""));
      Version after = Load(parser, f.path, f.after.value_or(""));
      fc.parse_errors = (f.after ? after : before).table.parse_errors;
      DiffFile(f.path, before, after, &set.entities);
    }
    set.files.push_back(std::move(fc));
  }
  std::stable_sort(
      set.entities.begin(), set.entities.end(), [](const EntityChange& a, const EntityChange& b) {
        return std::tie(a.file, a.start_line, a.entity) < std::tie(b.file, b.start_line, b.entity);
      });
  return set;
}

util::Expected<std::vector<FileVersions>> PatchVersions(util::Env& env, sandbox::Launcher& launcher,
                                                        const std::string& repo,
                                                        const std::string& commit,
                                                        const std::string& patch,
                                                        const std::string& work_dir) {
  auto parsed = util::ParsePatch(patch);
  if (!parsed.ok()) return util::Error{"patch: " + parsed.error()};
  runner::GitProgram git(env, launcher, util::JoinPath(work_dir, "logs"));
  std::string tree = util::JoinPath(work_dir, "tree");
  (void)env.RemoveAll(tree);
  if (auto s = env.MakeDirs(tree); !s.ok()) return s.failure();
  if (auto r = git.Run(tree, {"init", "-q"}); !r.ok()) return r.failure();
  std::vector<FileVersions> out;
  std::vector<util::FilePatch> python;
  for (const auto& f : *parsed) {
    FileVersions v;
    v.path = f.path();
    bool py = v.path.ends_with(".py") && !f.binary;
    if (!f.is_new()) {
      auto old = py ? git.Show(repo, commit, f.old_path)
                    : util::Expected<std::optional<std::string>>(std::optional<std::string>(""));
      if (!old.ok()) return old.failure();
      if (!*old)
        return util::Error{"the patch changes " + f.old_path + ", which " + commit +
                           " does not have"};
      v.before = **old;
      if (py) {
        std::string dest = util::JoinPath(tree, f.old_path);
        if (auto s = env.MakeDirs(util::DirName(dest)); !s.ok()) return s.failure();
        if (auto s = env.WriteFileAtomic(dest, *v.before); !s.ok()) {
          return s.failure();
        }
      }
    }
    if (py) python.push_back(f);
    if (!f.is_deleted()) v.after = "";
    out.push_back(std::move(v));
  }
  if (auto s = git.Apply(tree, util::JoinPatch(python)); !s.ok()) {
    return util::Error{"the patch does not apply: " + s.error()};
  }
  for (auto& v : out) {
    if (!v.after || !v.path.ends_with(".py")) continue;
    // No link followed: a patch's links may lead out of the tree, whatever its checks said.
    auto text = env.ReadUntrusted(tree, v.path, util::kMaxTreeFileBytes);
    if (!text.ok()) return text.failure();
    v.after = *text;
  }
  (void)env.RemoveAll(work_dir);
  return out;
}

std::string ChangeSetJson(const ChangeSet& set) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("changes"), w.BeginArray();
  for (const auto& c : set.entities) {
    w.BeginObject();
    w.Key("change"), w.String(ChangeName(c.change));
    w.Key("end_line"), w.Int(c.end_line);
    w.Key("entity"), w.String(c.entity);
    w.Key("file"), w.String(c.file);
    w.Key("kind"), w.String(c.kind);
    if (!c.old_entity.empty()) w.Key("old_entity"), w.String(c.old_entity);
    w.Key("qualname"), w.String(c.qualname);
    w.Key("start_line"), w.Int(c.start_line);
    w.EndObject();
  }
  w.EndArray();
  w.Key("files"), w.BeginArray();
  for (const auto& f : set.files) {
    w.BeginObject();
    w.Key("parse_errors"), parser::WriteParseErrors(w, f.parse_errors);
    w.Key("path"), w.String(f.path);
    w.Key("python"), w.Bool(f.python);
    w.Key("status"), w.String(f.status);
    w.EndObject();
  }
  w.EndArray();
  w.Key("schema"), w.String("fbkit.race-entities/1");
  w.EndObject();
  return out + "\n";
}

}  // namespace fbkit::groundtruth

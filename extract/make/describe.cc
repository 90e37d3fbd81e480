#include "extract/make/describe.h"

#include "extract/make/tested.h"
#include "parser/modules.h"
#include "parser/python_parser.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace fbkit::extract::make {

using parser::Entity;
using parser::EntityKind;

namespace {

// `s` trimmed, its inner whitespace runs (multi-line annotations) made one space.
std::string OneLine(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  s = s.substr(b, e - b + 1);
  std::string out;  // one line: collapse the whitespace of multi-line annotations
  bool space = false;
  for (char c : s) {
    bool ws = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (ws && !space) out += ' ';
    if (!ws) out += c;
    space = ws;
  }
  return out;
}

// Splits at top-level commas (outside brackets and strings).
std::vector<std::string> SplitTopLevel(const std::string& s) {
  std::vector<std::string> parts;
  int depth = 0;
  char quote = 0;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\' && i + 1 < s.size()) cur += c, c = s[++i];
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(OneLine(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!OneLine(cur).empty()) parts.push_back(OneLine(cur));
  return parts;
}

// The index of the first top-level `ch` in `s`, or npos.
size_t TopLevel(const std::string& s, char ch) {
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ch && depth == 0) return i;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
  }
  return std::string::npos;
}

bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Names following `keyword ` in `body` (e.g. "raise" -> exception names), in order, unique.
std::vector<std::string> NamesAfter(const std::string& body, const std::string& keyword) {
  std::vector<std::string> out;
  for (size_t at = body.find(keyword + " "); at != std::string::npos;
       at = body.find(keyword + " ", at + 1)) {
    if (at > 0 && IsIdent(body[at - 1])) continue;
    size_t b = at + keyword.size() + 1, e = b;
    while (e < body.size() && (IsIdent(body[e]) || body[e] == '.')) ++e;
    std::string name = body.substr(b, e - b);
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

// "self.x = ..." targets in `body`, unique, in order.
std::vector<std::string> AttributesSet(const std::string& body) {
  std::vector<std::string> out;
  for (size_t at = body.find("self."); at != std::string::npos; at = body.find("self.", at + 1)) {
    if (at > 0 && (IsIdent(body[at - 1]) || body[at - 1] == '.')) continue;
    size_t e = at + 5;
    while (e < body.size() && IsIdent(body[e])) ++e;
    size_t next = body.find_first_not_of(" \t", e);
    if (next == std::string::npos || body[next] != '=' || body.compare(next, 2, "==") == 0) {
      continue;
    }
    std::string name = body.substr(at, e - at);
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

// Whether `body` has `word` as a statement keyword ("return x", "yield").
bool HasKeyword(const std::string& body, const std::string& word) {
  for (size_t at = body.find(word); at != std::string::npos; at = body.find(word, at + 1)) {
    bool start = at == 0 || !(IsIdent(body[at - 1]) || body[at - 1] == '.');
    bool end = at + word.size() >= body.size() || !IsIdent(body[at + word.size()]);
    if (start && end) return true;
  }
  return false;
}

// A file's code with strings and comments blanked (parser::PythonParser::CodeOnly), kept
// for the last file asked: a class's methods are described one after another.
const std::string& CodeOf(const std::string& raw) {
  thread_local auto python = parser::PythonParser::Create();
  thread_local std::string last_raw, last_code;
  if (last_raw != raw || last_code.empty()) {
    last_raw = raw;
    last_code = python.ok() ? (*python)->CodeOnly(raw) : raw;
  }
  return last_code;
}

// The entity's own code (its nested definitions left out), strings and comments blanked (a
// help string saying "raise an exception" raises nothing).
std::string OwnBody(const Repo& repo, Ent v) {
  const Entity& e = repo.entity(v);
  const std::string& src = CodeOf(repo.source(repo.file(v)));
  std::string out;
  int64_t pos = e.start_byte;
  for (Ent c : repo.Children(v)) {
    const Entity& n = repo.entity(c);
    out += src.substr(static_cast<size_t>(pos), static_cast<size_t>(n.start_byte - pos));
    pos = n.end_byte;
  }
  return out + src.substr(static_cast<size_t>(pos), static_cast<size_t>(e.end_byte - pos));
}

std::string List(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + std::string("`") + names[i] + "`";
  return out;
}

// Whether `name`, bound by one of the file's imports (module-level or inside a function),
// stands for a function or class of the repository.
bool ImportedRepoName(const Repo& repo, const parser::FileTable& t, const std::string& name) {
  for (const auto& imp : t.imports) {
    for (const auto& n : imp.names) {
      if (n.name == "*" || BoundName(imp, n) != name || !imp.is_from) continue;
      if (ResolveDotted(repo, parser::AbsoluteModule(t, imp) + "." + n.name)) return true;
    }
  }
  return false;
}

// The repository names the entity uses: references that name an entity of its module, or a
// function or class of the repository its module imports.
std::vector<std::string> Uses(const Repo& repo, Ent v) {
  const Entity& e = repo.entity(v);
  const parser::FileTable& t = repo.table(v);
  std::vector<std::string> out;
  for (const auto& r : e.references) {
    std::string head(Head(r));
    if (head == "self" || head == "cls" || head == e.name || out.size() >= 10) continue;
    // A name the module defines: resolved by the id it would have.
    if (repo.Find(t.path + "::" + head) || ImportedRepoName(repo, t, head)) out.push_back(r);
  }
  return out;
}

// "int, str" of a set of observed type names.
std::string TypeList(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The observed types of a parameter (*args and **kwargs by their starred names).
const std::set<std::string>* ObservedParam(const tracer::ObservedTypes* seen, const Parameter& p) {
  if (!seen) return nullptr;
  std::string key = p.kind == "*args" ? "*" + p.name : p.kind == "**kwargs" ? "**" + p.name : p.name;
  auto it = seen->params.find(key);
  return it == seen->params.end() || it->second.empty() ? nullptr : &it->second;
}

// What the F2P tests observed (first) and what other tests did, of one entity.
struct Seen {
  const tracer::ObservedTypes* tests = nullptr;
  const tracer::ObservedTypes* others = nullptr;
};

// "observed: int" (the F2P tests), "observed in other tests: int", or "".
std::string ObservedText(const std::set<std::string>* tests, const std::set<std::string>* others) {
  if (tests && !tests->empty()) return "observed: " + TypeList(*tests);
  if (others && !others->empty()) return "observed in other tests: " + TypeList(*others);
  return "";
}

std::string ParameterLines(const std::vector<Parameter>& params, bool method, Seen seen) {
  std::string out;
  for (size_t i = 0; i < params.size(); ++i) {
    const Parameter& p = params[i];
    if (method && i == 0 && (p.name == "self" || p.name == "cls")) continue;
    out += "    " + p.name + " (" + p.kind;
    if (!p.annotation.empty()) out += "; " + p.annotation;
    if (!p.default_value.empty()) out += "; default " + p.default_value;
    std::string types = ObservedText(ObservedParam(seen.tests, p), ObservedParam(seen.others, p));
    if (p.annotation.empty() && !types.empty()) out += "; " + types;
    // Sampled calls that passed nothing through *args or **kwargs: that is what is known.
    bool starred = p.kind == "*args" || p.kind == "**kwargs";
    if (p.annotation.empty() && types.empty() && starred && seen.tests) {
      out += "; observed: none passed";
    }
    out += ")\n";
  }
  return out;
}

// The expressions the entity's own code returns, as written on the return line (at most
// three, each cut at 60 characters), unique, in order; bare `return`s left out.
std::vector<std::string> ReturnedExpressions(const Repo& repo, Ent v) {
  const Entity& e = repo.entity(v);
  const std::string& raw = repo.source(repo.file(v));
  const std::string& code = CodeOf(raw);
  std::vector<std::pair<int64_t, int64_t>> holes;
  for (Ent c : repo.Children(v)) holes.push_back({repo.entity(c).start_byte, repo.entity(c).end_byte});
  std::vector<std::string> out;
  auto end = static_cast<size_t>(e.end_byte);
  for (size_t at = code.find("return", static_cast<size_t>(e.start_byte));
       at != std::string::npos && at < end && out.size() < 3; at = code.find("return", at + 6)) {
    bool nested = false;
    for (const auto& [hs, he] : holes) nested = nested || (static_cast<int64_t>(at) >= hs && static_cast<int64_t>(at) < he);
    if (nested || (at > 0 && (IsIdent(code[at - 1]) || code[at - 1] == '.')) ||
        (at + 6 < code.size() && IsIdent(code[at + 6]))) {
      continue;
    }
    size_t eol = std::min(end, code.find('\n', at));
    // A comment: a '#' blanked in the code with nothing but blanks after it on the line.
    for (size_t i = at + 6; i < eol; ++i) {
      if (raw[i] == '#' && code.find_first_not_of(" \t\r", i) >= eol) {
        eol = i;
        break;
      }
    }
    std::string expr = OneLine(raw.substr(at + 6, eol - at - 6));
    if (expr.empty()) continue;
    int depth = 0;
    for (size_t i = at + 6; i < eol; ++i) {
      depth += (code[i] == '(' || code[i] == '[' || code[i] == '{') -
               (code[i] == ')' || code[i] == ']' || code[i] == '}');
    }
    if (depth > 0 || expr.back() == '\\') expr += " ...";
    if (expr.size() > 60) expr = expr.substr(0, 57) + "...";
    if (std::find(out.begin(), out.end(), expr) == out.end()) out.push_back(expr);
  }
  return out;
}

// The functions defined inside the entity, as "name(signature)" (at most six).
std::vector<std::string> NestedFunctions(const Repo& repo, Ent v) {
  std::vector<std::string> out;
  for (Ent c : repo.Children(v)) {
    const Entity& n = repo.entity(c);
    if (n.kind == EntityKind::kClass || out.size() >= 6) continue;
    out.push_back(n.name + OneLine(n.signature));
  }
  return out;
}

// "name.attr = ..." targets for the nested functions `names` (wrapper.cache_clear = ...).
std::vector<std::string> NestedAttributesSet(const std::string& body,
                                             const std::vector<std::string>& nested) {
  std::vector<std::string> out;
  for (const auto& sig : nested) {
    std::string name = sig.substr(0, sig.find('('));
    std::string prefix = name + ".";
    for (size_t at = body.find(prefix); at != std::string::npos; at = body.find(prefix, at + 1)) {
      if (at > 0 && (IsIdent(body[at - 1]) || body[at - 1] == '.')) continue;
      size_t e = at + prefix.size();
      while (e < body.size() && IsIdent(body[e])) ++e;
      size_t next = body.find_first_not_of(" \t", e);
      if (next == std::string::npos || body[next] != '=' || body.compare(next, 2, "==") == 0) continue;
      std::string target = body.substr(at, e - at);
      if (std::find(out.begin(), out.end(), target) == out.end()) out.push_back(target);
    }
  }
  return out;
}

std::string ReturnsSection(const Repo& repo, Ent v, const std::string& body,
                           const std::string& annotation, Seen seen) {
  const Entity& e = repo.entity(v);
  bool yields = HasKeyword(body, "yield");
  std::string ret = annotation.empty() ? "" : " " + annotation;
  if (yields) return "\nYields:\n    values (a generator)" + ret + "\n";
  if (e.name == "__init__") return "";
  std::vector<std::string> exprs = ReturnedExpressions(repo, v);
  std::string lines;
  if (!annotation.empty()) lines += "    " + annotation + "\n";
  std::string types = ObservedText(seen.tests ? &seen.tests->returns : nullptr,
                                   seen.others ? &seen.others->returns : nullptr);
  if (annotation.empty() && !types.empty()) lines += "    " + types + "\n";
  if (!exprs.empty()) lines += "    returned expression(s): " + List(exprs) + "\n";
  if (lines.empty()) lines = HasKeyword(body, "return") ? "    None (a bare return)\n" : "    None\n";
  return "\nReturns:\n" + lines;
}

std::string DescribeFunction(const Repo& repo, Ent v, const tracer::TypeMap* observed,
                             const tracer::TypeMap* elsewhere) {
  const Entity& e = repo.entity(v);
  bool method = e.kind == EntityKind::kMethod;
  std::string returns;
  std::vector<Parameter> params = ParseParameters(e.signature, &returns);
  std::string body = OwnBody(repo, v);
  Seen seen{ObservedFor(repo, v, observed), ObservedFor(repo, v, elsewhere)};
  std::string out;
  std::string plines = ParameterLines(params, method, seen);
  out += plines.empty() ? "Takes no arguments.\n" : "Parameters:\n" + plines;
  out += ReturnsSection(repo, v, body, returns, seen);
  std::vector<std::string> raises = NamesAfter(body, "raise");
  if (!raises.empty()) out += "\nRaises:\n    " + List(raises) + "\n";
  std::vector<std::string> nested = NestedFunctions(repo, v);
  std::vector<std::string> attrs = AttributesSet(body);
  std::vector<std::string> nested_attrs = NestedAttributesSet(body, nested);
  attrs.insert(attrs.end(), nested_attrs.begin(), nested_attrs.end());
  if (!attrs.empty()) out += "\nSets:\n    " + List(attrs) + "\n";
  if (!nested.empty()) out += "\nDefines inside:\n    " + List(nested) + "\n";
  std::vector<std::string> uses = Uses(repo, v);
  if (!uses.empty()) out += "\nUses:\n    " + List(uses) + "\n";
  return out.substr(0, out.size() - 1);
}

std::string DescribeClass(const Repo& repo, Ent v, const tracer::TypeMap* observed,
                          const tracer::TypeMap* elsewhere) {
  const Entity& e = repo.entity(v);
  std::string bases = e.signature.size() > 2 && e.signature.front() == '('
                          ? e.signature.substr(1, e.signature.size() - 2)
                          : "";
  std::string out = OneLine(bases).empty() ? "" : "Derived from " + OneLine(bases) + ".\n";
  std::vector<std::string> methods;
  bool has_init = false;
  for (Ent mv : repo.Children(v)) {
    const Entity& m = repo.entity(mv);
    if (m.name == "__init__") {
      has_init = true;
      std::string ret;
      std::string plines = ParameterLines(ParseParameters(m.signature, &ret), true,
                                          Seen{ObservedFor(repo, mv, observed),
                                               ObservedFor(repo, mv, elsewhere)});
      out += (out.empty() ? "" : "\n") + (plines.empty() ? std::string("Constructed without arguments.\n")
                                                     : "Constructor parameters:\n" + plines);
      std::vector<std::string> attrs = AttributesSet(OwnBody(repo, mv));
      if (!attrs.empty()) out += "\nInstance attributes:\n    " + List(attrs) + "\n";
    }
    if (m.kind == EntityKind::kMethod) methods.push_back(m.name);
  }
  if (!methods.empty()) out += (out.empty() ? "" : "\n") + std::string("Methods:\n    ") + List(methods) + "\n";
  if (!has_init && out.empty()) out = "Constructed as its bases are; defines no methods of its own.\n";
  return out.substr(0, out.size() - 1);
}

}  // namespace

std::vector<Parameter> ParseParameters(const std::string& signature, std::string* returns) {
  std::vector<Parameter> out;
  std::string sig = OneLine(signature);
  size_t close = sig.empty() || sig[0] != '(' ? std::string::npos : TopLevel(sig.substr(1), ')');
  if (close == std::string::npos) return out;
  std::string inner = sig.substr(1, close);
  std::string rest = sig.substr(close + 2);
  if (returns) {
    size_t arrow = rest.find("->");
    *returns = arrow == std::string::npos ? "" : OneLine(rest.substr(arrow + 2));
  }
  std::vector<std::string> parts = SplitTopLevel(inner);
  bool keyword_only = false;
  size_t slash = std::find(parts.begin(), parts.end(), "/") - parts.begin();
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string p = parts[i];
    if (p == "/") continue;
    if (p == "*") {
      keyword_only = true;
      continue;
    }
    Parameter param;
    if (p.starts_with("**")) {
      param.kind = "**kwargs";
      p = p.substr(2);
    } else if (p.starts_with("*")) {
      param.kind = "*args";
      p = p.substr(1);
      keyword_only = true;
    } else {
      param.kind = i < slash && slash < parts.size() ? "positional-only"
                   : keyword_only                     ? "keyword-only"
                                                      : "positional or keyword";
    }
    size_t eq = TopLevel(p, '=');
    if (eq != std::string::npos) {
      param.default_value = OneLine(p.substr(eq + 1));
      p = p.substr(0, eq);
    }
    size_t colon = TopLevel(p, ':');
    if (colon != std::string::npos) {
      param.annotation = OneLine(p.substr(colon + 1));
      p = p.substr(0, colon);
    }
    param.name = OneLine(p);
    out.push_back(param);
  }
  return out;
}

const tracer::ObservedTypes* ObservedFor(const Repo& repo, Ent v, const tracer::TypeMap* observed) {
  if (!observed || observed->empty()) return nullptr;
  const Entity& e = repo.entity(v);
  auto it = observed->find(tracer::CodeId{repo.table(v).path, e.start_line, e.name});
  return it == observed->end() ? nullptr : &it->second;
}

std::string DescribeFromCode(const Repo& repo, Ent v, const tracer::TypeMap* observed,
                             const tracer::TypeMap* elsewhere) {
  return repo.entity(v).kind == EntityKind::kClass ? DescribeClass(repo, v, observed, elsewhere)
                                                   : DescribeFunction(repo, v, observed, elsewhere);
}

}  // namespace fbkit::extract::make

#include "extract/make/describe.h"

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

// The repository names the entity uses: references that name an entity of its module.
std::vector<std::string> Uses(const Repo& repo, Ent v) {
  const Entity& e = repo.entity(v);
  const std::string& path = repo.table(v).path;
  std::vector<std::string> out;
  for (const auto& r : e.references) {
    std::string head(Head(r));
    if (head == "self" || head == "cls" || out.size() >= 10) continue;
    // A name the module defines: resolved by the id it would have.
    if (repo.Find(path + "::" + head) && head != e.name) out.push_back(r);
  }
  return out;
}

std::string ParameterLines(const std::vector<Parameter>& params, bool method) {
  std::string out;
  for (size_t i = 0; i < params.size(); ++i) {
    const Parameter& p = params[i];
    if (method && i == 0 && (p.name == "self" || p.name == "cls")) continue;
    out += "    " + p.name + " (" + p.kind;
    if (!p.annotation.empty()) out += "; " + p.annotation;
    if (!p.default_value.empty()) out += "; default " + p.default_value;
    out += ")\n";
  }
  return out;
}

std::string DescribeFunction(const Repo& repo, Ent v) {
  const Entity& e = repo.entity(v);
  bool method = e.kind == EntityKind::kMethod;
  std::string returns;
  std::vector<Parameter> params = ParseParameters(e.signature, &returns);
  std::string body = OwnBody(repo, v);
  std::string what = e.is_async ? "Coroutine" : "Function";
  if (method) {
    what = e.name == "__init__" ? "Initialiser" : e.is_async ? "Async method" : "Method";
  }
  for (const auto& d : e.decorators) {
    if (d == "property" || d.ends_with(".setter")) what = "Property";
    if (d == "staticmethod") what = "Static method";
    if (d == "classmethod") what = "Class method";
  }
  std::string out = what + " `" + e.qualname + "`.\n";
  std::string plines = ParameterLines(params, method);
  out += plines.empty() ? "\nTakes no arguments.\n" : "\nParameters:\n" + plines;
  bool yields = HasKeyword(body, "yield");
  std::string ret = returns.empty() ? "" : " " + returns;
  if (yields) {
    out += "\nYields:\n    values (a generator)" + ret + "\n";
  } else if (!returns.empty()) {
    out += "\nReturns:\n    " + returns + "\n";
  } else if (e.name != "__init__") {
    out += HasKeyword(body, "return") ? "\nReturns:\n    a value (not annotated)\n"
                                      : "\nReturns:\n    None\n";
  }
  std::vector<std::string> raises = NamesAfter(body, "raise");
  if (!raises.empty()) out += "\nRaises:\n    " + List(raises) + "\n";
  std::vector<std::string> attrs = AttributesSet(body);
  if (!attrs.empty()) out += "\nSets:\n    " + List(attrs) + "\n";
  std::vector<std::string> uses = Uses(repo, v);
  if (!uses.empty()) out += "\nUses:\n    " + List(uses) + "\n";
  return out.substr(0, out.size() - 1);
}

std::string DescribeClass(const Repo& repo, Ent v) {
  const Entity& e = repo.entity(v);
  std::string bases = e.signature.size() > 2 && e.signature.front() == '('
                          ? e.signature.substr(1, e.signature.size() - 2)
                          : "";
  std::string out = "Class `" + e.qualname + "`" +
                    (OneLine(bases).empty() ? "" : ", derived from " + OneLine(bases)) + ".\n";
  std::vector<std::string> methods;
  for (Ent mv : repo.Children(v)) {
    const Entity& m = repo.entity(mv);
    if (m.name == "__init__") {
      std::string ret;
      std::string plines = ParameterLines(ParseParameters(m.signature, &ret), true);
      out += plines.empty() ? "\nConstructed without arguments.\n"
                            : "\nConstructor parameters:\n" + plines;
      std::vector<std::string> attrs = AttributesSet(OwnBody(repo, mv));
      if (!attrs.empty()) out += "\nInstance attributes:\n    " + List(attrs) + "\n";
    }
    if (m.kind == EntityKind::kMethod) methods.push_back(m.name);
  }
  if (!methods.empty()) out += "\nMethods:\n    " + List(methods) + "\n";
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

std::string DescribeFromCode(const Repo& repo, Ent v) {
  return repo.entity(v).kind == EntityKind::kClass ? DescribeClass(repo, v)
                                                   : DescribeFunction(repo, v);
}

}  // namespace fbkit::extract::make

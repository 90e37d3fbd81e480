#include "extract/make/select.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <functional>

#include "extract/make/select_internal.h"
#include "extract/make/top_model.h"
#include "extract/taskdir/task_dir.h"
#include "parser/modules.h"
#include "runner/outcome.h"
#include "util/hash.h"
#include "util/random.h"
#include "util/strings.h"

namespace fbkit::extract::make {

using graph::DepGraph;
using graph::Edge;
using graph::EdgeKind;
using parser::EntityKind;

std::vector<PassingFile> PassingFiles(const tracer::TraceSet& trace,
                                      std::map<std::string, std::string>* rejected) {
  std::vector<PassingFile> out;
  for (const auto& [path, f] : trace.files) {
    auto reject = [&](const std::string& why) {
      if (rejected) (*rejected)[path] = why;
    };
    if (f.status != runner::FileStatus::kOk) {
      reject(std::string("test file ") + runner::FileStatusName(f.status));
      continue;
    }
    if (tracer::DoctestsOnly(f)) {
      reject("library code collected for its doctests (not a test file)");
      continue;
    }
    PassingFile p{path, {}, 0, 0, {}};
    std::string bad;
    for (const auto& id : f.nodeids) {
      // Parametrised with the checkout's absolute path: a copy elsewhere (verification,
      // evaluation) gives the test another id, so it cannot be graded.
      if (!trace.root.empty() && id.find(trace.root + "/") != std::string::npos) {
        ++p.path_ids;
        continue;
      }
      auto it = f.tests.find(id);
      runner::Outcome outcome = it == f.tests.end() ? runner::Outcome::kNotRun : it->second.outcome;
      // xpassed: a non-strict xfail that passed, a success for pytest (exit status 0).
      if (runner::PassesSession(outcome)) {
        p.tests.push_back(id);
        if (outcome != runner::Outcome::kPassed) p.xfail_marked.push_back(id);
      } else if (outcome == runner::Outcome::kSkipped) {
        ++p.skipped;
      } else if (bad.empty()) {
        bad = id + " " + runner::OutcomeName(outcome);
      }
    }
    if (!bad.empty()) {
      reject("not all tests pass (" + bad + ")");
    } else if (p.tests.empty() && p.path_ids > 0) {
      reject("its tests' ids name the checkout's path (they differ in every copy)");
    } else if (p.tests.empty()) {
      reject("no test ran");
    } else {
      out.push_back(std::move(p));
    }
  }
  return out;
}

const std::map<std::string, TopRule>& TopRulesByName() {
  static const std::map<std::string, TopRule> rules = {{"specific", TopRule::kSpecific},
                                                       {"share", TopRule::kShare},
                                                       {"featurebench", TopRule::kFeatureBench},
                                                       {"learned", TopRule::kLearned}};
  return rules;
}

uint64_t TaskSeed(uint64_t seed, const std::string& f2p) {
  std::string h = util::Sha256Hex(std::to_string(seed) + "\n" + f2p);
  return std::stoull(h.substr(0, 15), nullptr, 16);
}

// The out-edges of v (edges are sorted by from).
std::pair<const Edge*, const Edge*> OutEdges(const DepGraph& g, uint32_t v) {
  const auto& edges = g.edges();
  auto lo = std::lower_bound(edges.begin(), edges.end(), v,
                             [](const Edge& e, uint32_t x) { return e.from < x; });
  auto hi =
      std::upper_bound(lo, edges.end(), v, [](uint32_t x, const Edge& e) { return x < e.from; });
  return {edges.data() + (lo - edges.begin()), edges.data() + (hi - edges.begin())};
}

namespace {

// The indices of `files` among the graph's test files (files it does not have left out).
std::set<uint32_t> TestFileIndices(const DepGraph& g, const std::vector<std::string>& files) {
  std::set<uint32_t> out;
  for (const auto& f : files) {
    if (auto t = TestFileIndex(g, f)) out.insert(*t);
  }
  return out;
}

// The module-level function or class an entity belongs to (itself when it is one).
std::optional<Ent> TopLevel(const Repo& repo, Ent v) {
  if (repo.entity(v).kind == EntityKind::kModule) return std::nullopt;
  while (!repo.IsTopLevel(v)) {
    auto p = repo.Parent(v);
    if (!p) return std::nullopt;
    v = *p;
  }
  EntityKind kind = repo.entity(v).kind;
  if (kind != EntityKind::kClass && kind != EntityKind::kFunction) return std::nullopt;
  return v;
}

}  // namespace

std::set<std::string> TestFileSet(const DepGraph& g) {
  return std::set<std::string>(g.test_files().begin(), g.test_files().end());
}

namespace {

// The member of `cls` named `name`, if its body defines one.
std::optional<Ent> Member(const Repo& repo, Ent cls, const std::string& name) {
  for (Ent m : repo.Children(cls)) {
    if (repo.entity(m).name == name) return m;
  }
  return std::nullopt;
}

// The repository classes v inherits from, transitively.
std::set<uint32_t> Ancestors(const DepGraph& g, uint32_t v) {
  std::set<uint32_t> out;
  std::vector<uint32_t> todo = {v};
  while (!todo.empty()) {
    uint32_t c = todo.back();
    todo.pop_back();
    auto [b, e] = OutEdges(g, c);
    for (const Edge* x = b; x != e; ++x) {
      if (x->kind == EdgeKind::kInherits && out.insert(x->to).second) todo.push_back(x->to);
    }
  }
  return out;
}

}  // namespace

// A method named `name` of class `cls` overrides an abstract method (an `abstractmethod`
// decorator) of one of its repository bases: without it the class could not be instantiated.
bool ImplementsAbstract(const Repo& repo, const DepGraph& g, Ent cls, const std::string& name) {
  for (Ent base : Ancestors(g, cls)) {
    auto m = Member(repo, base, name);
    if (!m) continue;
    const auto& decorators = repo.entity(*m).decorators;
    if (std::any_of(decorators.begin(), decorators.end(), [](const std::string& d) {
          return d.find("abstractmethod") != std::string::npos;
        }))
      return true;
  }
  return false;
}

namespace {

bool IsDef(const parser::Entity& e) {
  return e.kind == EntityKind::kFunction || e.kind == EntityKind::kMethod;
}

}  // namespace

// Whether any of `files` (test file indices) ran entity v, by the trace: for a module or a
// class, that its body ran (the module was imported, in collection or later).
bool RanIn(const DepGraph& g, Ent v, const std::set<uint32_t>& files) {
  const auto& ran = g.nodes()[v].test_files;
  return std::any_of(ran.begin(), ran.end(), [&](uint32_t t) { return files.count(t) > 0; });
}

namespace {

// Whether a class's chain of bases leaves its file: one of its plain bases (transitively,
// through the file's module-level classes) is a builtin, a third-party class or another
// module's class. A subscripted base (`Generic[T]`) is no plain base, as in FeatureBench's
// masking.
bool BasesLeaveFile(const parser::FileTable& t, const parser::Entity& cls) {
  std::map<std::string, const parser::Entity*> classes;
  for (const auto& e : t.entities) {
    if (e.kind == EntityKind::kClass && e.parent == t.entities[0].id) classes[e.name] = &e;
  }
  std::set<std::string> seen;
  std::vector<const parser::Entity*> todo = {&cls};
  while (!todo.empty()) {
    const parser::Entity* c = todo.back();
    todo.pop_back();
    if (!seen.insert(c->name).second) continue;
    for (const auto& b : parser::PositionalBases(c->signature)) {
      auto it = classes.find(b.substr(b.find_last_of('.') + 1));
      if (it == classes.end()) return true;
      todo.push_back(it->second);
    }
  }
  return false;
}

}  // namespace

namespace {

bool IsContainerProtocol(const std::string& name) {
  return name == "__len__" || name == "__iter__" || name == "__getitem__" ||
         name == "__setitem__" || name == "__delitem__";
}

}  // namespace

bool Reaches(const graph::Node& n, uint32_t t) {
  return std::binary_search(n.test_files.begin(), n.test_files.end(), t);
}

// The test files that use an entity: those that reach it, or for a class, any of its members
// (its body runs at import time for every file that imports its module: no use of it).
std::set<uint32_t> UsedBy(const DepGraph& g, const Repo& repo, Ent v) {
  const graph::Node& n = g.nodes()[v];
  if (n.kind != EntityKind::kClass) return {n.test_files.begin(), n.test_files.end()};
  std::set<uint32_t> out;
  for (Ent m : repo.Descendants(v)) {
    if (repo.entity(m).kind == EntityKind::kClass) continue;
    out.insert(g.nodes()[m].test_files.begin(), g.nodes()[m].test_files.end());
  }
  return out;
}

namespace {

// `text` without its leading and trailing spaces.
std::string_view Trimmed(std::string_view text) {
  size_t b = text.find_first_not_of(" \t\r\n\\"), e = text.find_last_not_of(" \t\r\n\\");
  return b == std::string_view::npos ? std::string_view() : text.substr(b, e - b + 1);
}

bool IsIdentifier(std::string_view s) {
  return !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0])) &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

// The methods file f's module-level code binds through an instance it makes at import time:
// `_jws = PyJWS()` then `decode = _jws.decode` (pyjwt's API; the random module's style)
// reads PyJWS.decode when the module is imported, so the method stays.
std::set<Ent> InstanceMethodsBound(const Repo& repo, size_t f) {
  const parser::FileTable& t = repo.files()[f];
  const std::string& source = repo.source(f);
  std::map<std::string, Ent> classes;  // module-level class name -> entity
  for (Ent v : repo.EntitiesOf(f)) {
    if (repo.IsTopLevel(v) && repo.entity(v).kind == EntityKind::kClass) classes[repo.entity(v).name] = v;
  }
  std::map<std::string, Ent> instances;  // module-level name -> the class it is made of
  std::vector<std::pair<std::string, std::string>> aliases;  // (instance, attribute)
  for (const auto& a : t.assignments) {
    if (a.start_byte < 0 || a.end_byte > static_cast<int64_t>(source.size()) || a.end_byte <= a.start_byte) continue;
    std::string_view stmt(source.data() + a.start_byte, static_cast<size_t>(a.end_byte - a.start_byte));
    size_t eq = stmt.find('=');
    if (eq == std::string_view::npos || Trimmed(stmt.substr(0, eq)) != a.name) continue;
    std::string_view value = Trimmed(stmt.substr(eq + 1));
    if (size_t call = value.find('('); call != std::string_view::npos && value.ends_with(")")) {
      if (auto c = classes.find(std::string(Trimmed(value.substr(0, call)))); c != classes.end()) {
        instances[a.name] = c->second;
      }
    } else if (size_t dot = value.find('.'); dot != std::string_view::npos &&
               IsIdentifier(value.substr(0, dot)) && IsIdentifier(value.substr(dot + 1))) {
      aliases.emplace_back(std::string(value.substr(0, dot)), std::string(value.substr(dot + 1)));
    }
  }
  std::set<Ent> out;
  for (const auto& [instance, attribute] : aliases) {
    auto i = instances.find(instance);
    if (i == instances.end()) continue;
    if (auto m = Member(repo, i->second, attribute)) out.insert(*m);
  }
  return out;
}

}  // namespace

std::set<Ent> ImportTimeKept(const Repo& repo, const DepGraph& g,
                             const std::vector<std::string>& p2p) {
  const std::set<uint32_t> runs = TestFileIndices(g, p2p);
  std::set<Ent> kept;
  for (size_t f = 0; f < repo.files().size(); ++f) {
    const parser::FileTable& t = repo.files()[f];
    if (t.entities.empty() || !RanIn(g, repo.module(f), runs)) continue;
    if (taskdir::IsTestCode(t.path, {})) continue;
    std::set<std::string> exported;
    if (t.all) exported.insert(t.all->begin(), t.all->end());
    const std::set<std::string> read(t.import_time_reads.begin(), t.import_time_reads.end());
    std::set<Ent> open_classes;  // module-level classes whose bases leave the file
    for (Ent v : repo.EntitiesOf(f)) {
      const parser::Entity& e = repo.entity(v);
      if (e.kind == EntityKind::kModule) continue;
      bool top = repo.IsTopLevel(v);
      if (top && e.kind == EntityKind::kClass && RanIn(g, v, runs) && BasesLeaveFile(t, e)) {
        open_classes.insert(v);
      }
      auto parent = repo.Parent(v);
      bool in_open_class = parent && open_classes.count(*parent) > 0;
      if ((top && exported.count(e.name)) || read.count(e.name) ||
          (IsDef(e) && (IsContainerProtocol(e.name) || in_open_class))) {
        kept.insert(v);
      }
    }
    for (Ent m : InstanceMethodsBound(repo, f)) kept.insert(m);
  }
  return kept;
}


namespace {

// The entities outside test code that test file t's run reaches by calls (imports aside),
// each with the fewest calls through library code it takes (1: called by test code; calls between test
// code, the file's helpers, fixtures and conftests, cost nothing), at most `depth`; what
// `stop` holds is reached but not followed.
std::map<uint32_t, int> ReachedThroughLibrary(const DepGraph& g, uint32_t t, int depth,
                                              const std::set<uint32_t>& stop = {}) {
  std::set<std::string> tests = TestFileSet(g);
  const auto& nodes = g.nodes();
  std::vector<int> dist(nodes.size(), depth + 1);
  std::vector<int8_t> test_code(nodes.size(), -1);
  auto is_test = [&](uint32_t v) {
    if (test_code[v] < 0) test_code[v] = taskdir::IsTestCode(nodes[v].path, tests);
    return test_code[v] == 1;
  };
  std::deque<uint32_t> queue;  // 0-1 breadth first
  for (uint32_t v = 0; v < nodes.size(); ++v) {
    if (nodes[v].path == g.test_files()[t]) dist[v] = 0, queue.push_back(v);
  }
  std::map<uint32_t, int> out;
  while (!queue.empty()) {
    uint32_t v = queue.front();
    queue.pop_front();
    if (stop.count(v)) continue;
    // Imports are no calls: a library module's code runs for every file that imports it.
    if (nodes[v].kind == EntityKind::kModule && !is_test(v)) continue;
    auto [b, e] = OutEdges(g, v);
    for (const Edge* x = b; x != e; ++x) {
      if (x->kind != EdgeKind::kCall || nodes[x->to].kind == EntityKind::kModule ||
          !std::binary_search(x->test_files.begin(), x->test_files.end(), t)) {
        continue;
      }
      bool library = !is_test(x->to);
      int d = dist[v] + (library ? 1 : 0);
      if (d > depth || d >= dist[x->to]) continue;
      dist[x->to] = d;
      if (library) out[x->to] = d;
      library ? queue.push_back(x->to) : queue.push_front(x->to);
    }
  }
  return out;
}

}  // namespace

bool PackageInitTops(const SelectOptions& options) {
  return options.package_init && options.chooser != TopRule::kFeatureBench;
}

std::vector<TopCandidate> TopCandidates(const Repo& repo, const DepGraph& g,
                                        const std::string& f2p, int depth, bool package_init) {
  std::vector<TopCandidate> out;
  auto t = TestFileIndex(g, f2p);
  if (!t) return out;
  std::set<std::string> tests = TestFileSet(g);
  std::map<uint32_t, int64_t> weight;
  for (uint32_t v = 0; v < g.nodes().size(); ++v) {
    if (g.nodes()[v].path != f2p) continue;
    auto [b, e] = OutEdges(g, v);
    for (const Edge* x = b; x != e; ++x) {
      if (x->kind == EdgeKind::kContains) continue;
      if (taskdir::IsTestCode(g.nodes()[x->to].path, tests)) continue;
      auto top = TopLevel(repo, x->to);
      if (top) weight[*top] += x->kind == EdgeKind::kCall ? x->count : 1;
    }
  }
  std::map<uint32_t, int> deeper;  // top-level object -> the fewest calls it takes to reach
  if (depth > 1) {
    for (const auto& [v, d] : ReachedThroughLibrary(g, *t, depth)) {
      auto top = TopLevel(repo, v);
      if (!top || weight.count(*top) || d < 2) continue;
      auto [it, fresh] = deeper.insert({*top, d});
      if (!fresh) it->second = std::min(it->second, d);
    }
  }
  auto add = [&](uint32_t v, int64_t calls, int d) {
    const graph::Node& n = g.nodes()[v];
    if (!package_init && InPackageInit(n)) return;
    std::set<uint32_t> users = UsedBy(g, repo, v);
    if (!users.count(*t)) return;
    TopCandidate c{v, calls, users.size(), Lines(n), d, {}};
    if (n.kind == EntityKind::kClass) {
      for (Ent m : repo.Children(v)) {
        if (repo.entity(m).kind == EntityKind::kMethod && Reaches(g.nodes()[m], *t))
          c.members.push_back(m);
      }
    }
    out.push_back(std::move(c));
  };
  for (const auto& [v, w] : weight) add(v, w, 1);
  for (const auto& [v, d] : deeper) add(v, 0, d);
  // FeatureBench's choice stands wherever it has one: what an __init__.py defines is weighed
  // only for a test file that links to no object defined elsewhere (a package whose classes
  // all live in its __init__.py), which FeatureBench's rule would leave without a task.
  // A module's own hooks there (`__getattr__`, `__dir__`: lazy imports) are the package's
  // machinery, never a feature.
  auto in_init = [&](const TopCandidate& c) { return InPackageInit(g.nodes()[c.entity]); };
  auto hook = [&](const TopCandidate& c) {
    const std::string& name = repo.entity(c.entity).name;
    return in_init(c) && name.starts_with("__") && name.ends_with("__");
  };
  if (std::any_of(out.begin(), out.end(),
                  [&](const TopCandidate& c) { return c.depth == 1 && !in_init(c); })) {
    std::erase_if(out, in_init);
  }
  std::erase_if(out, hook);
  std::sort(out.begin(), out.end(), [&](const TopCandidate& a, const TopCandidate& b) {
    if ((a.depth > 1) != (b.depth > 1)) return a.depth < b.depth;
    if (a.spread != b.spread) return a.spread < b.spread;
    if (a.calls != b.calls) return a.calls > b.calls;
    if (a.depth != b.depth) return a.depth < b.depth;
    return repo.id(a.entity) < repo.id(b.entity);
  });
  return out;
}

namespace {

// More than half of the suite's `test_files` reach an object used by `spread` of them: it is
// part of the application every test runs, and taking it out would leave as P2P only the
// files that run no application.
bool MostOfTheSuite(size_t spread, size_t test_files) { return 2 * spread > test_files; }

// The code that tests: the test functions, and the functions of their test file they call
// directly, transitively (helpers such as sphinx's `parse` and `check`, or a function nested
// in a test that the test calls). Code that pytest or the library calls (fixtures, callbacks,
// commands defined in a test) and classes defined in a test build inputs.
std::vector<bool> TestingCode(const Repo& repo, const DepGraph& g) {
  std::vector<bool> testing(g.nodes().size(), false);
  std::vector<int8_t> in_test_file(g.nodes().size(), -1);
  auto test_file = [&](uint32_t v) {
    if (in_test_file[v] < 0) in_test_file[v] = TestFileIndex(g, g.nodes()[v].path).has_value();
    return in_test_file[v] > 0;
  };
  for (uint32_t v = 0; v < testing.size(); ++v) {
    testing[v] = test_file(v) && IsTestFunction(repo, v);
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const Edge& x : g.edges()) {
      if (x.kind != EdgeKind::kCall || !testing[x.from] || testing[x.to]) continue;
      if (!test_file(x.to) || g.nodes()[x.to].path != g.nodes()[x.from].path) continue;
      const parser::Entity& e = repo.entity(x.to);
      bool helper = e.kind == EntityKind::kFunction ||
                    (e.kind == EntityKind::kMethod && repo.Parent(x.to) &&
                     repo.entity(*repo.Parent(x.to)).name.starts_with("Test"));
      if (helper) testing[x.to] = grew = true;
    }
  }
  return testing;
}

// A builder of inputs (sympy's DM, click's style): the tests of kBuilderFiles or more files
// call v directly, this file making less than kBuilderShare of those calls.
constexpr size_t kBuilderFiles = 4;
constexpr double kBuilderShare = 0.4;
bool BuildsInputs(const std::map<uint32_t, std::map<uint32_t, int64_t>>& calls, uint32_t v,
                  uint32_t t) {
  auto it = calls.find(v);
  return it != calls.end() && it->second.size() >= kBuilderFiles &&
         CallShare(calls, v, t) < kBuilderShare;
}

// At least half of the direct test calls into v come from t: the file where it is tested.
bool MainTester(const std::map<uint32_t, std::map<uint32_t, int64_t>>& calls, uint32_t v,
                uint32_t t) {
  return CallShare(calls, v, t) >= 0.5;
}

// A test function of this file names class v and calls the constructor of one of its
// repository bases directly: it builds v through an inherited constructor (its code runs).
bool BuiltThroughBase(const Repo& repo, const DepGraph& g, const TestUse& use, uint32_t v) {
  auto named = use.named_by.find(v);
  if (named == use.named_by.end()) return false;
  std::set<uint32_t> bases = Ancestors(g, v);
  for (uint32_t fn : named->second) {
    auto it = use.callees.find(fn);
    if (it == use.callees.end()) continue;
    for (uint32_t c : it->second) {
      const std::string& q = g.nodes()[c].qualname;
      bool ctor = q.ends_with(".__init__") || q.ends_with(".__new__");
      auto top = TopLevel(repo, c);
      if (ctor && top && bases.count(*top)) return true;
    }
  }
  return false;
}

bool NamedLikeException(const parser::Entity& e) {
  if (e.kind != EntityKind::kClass) return false;
  for (const char* word : {"Error", "Exception", "Warning"}) {
    if (e.name.ends_with(word) || e.signature.find(word) != std::string::npos) return true;
  }
  return false;
}

// Whether the test functions of a file other than t call entity v directly.
bool OtherFilesCall(const TestUse& use, uint32_t v, std::optional<uint32_t> t) {
  auto callers = use.entity_calls.find(v);
  return callers != use.entity_calls.end() &&
         std::any_of(callers->second.begin(), callers->second.end(),
                     [&](const auto& fc) { return !t || fc.first != *t; });
}

// "N of M test files use it": a candidate's spread as every choice's reason says it.
std::string SpreadText(size_t spread, size_t test_files) {
  return std::to_string(spread) + " of " + std::to_string(test_files) + " test files use it";
}

// The choice of a candidate found deeper than the test file's own links (see
// ChooseTopObjects); `deep` false: never chosen, and the reason says when it would be.
TopChoice ChooseDeep(const Repo& repo, const DepGraph& g, const TopCandidate& c,
                     std::optional<uint32_t> t, const TestUse& use, size_t limit, bool deep) {
  TopChoice choice{c.entity, false, {}, ""};
  const std::string where = "reached " + std::to_string(c.depth) +
                            " calls deep through library code; " +
                            SpreadText(c.spread, g.test_files().size());
  const Ent v = c.entity;
  if (!t) {
    choice.why = "not in the entity table";
  } else if (!deep) {
    choice.why = where + " (weighed when the direct choice leaves too little to cut)";
  } else if (IsExceptionClass(repo, g, v)) {
    choice.why = where + ": an exception class";
  } else if (c.spread <= limit && BuildsInputs(use.calls, v, *t)) {
    choice.why = where + ", but the tests of many files call it directly: it builds inputs";
  } else if (c.spread <= limit) {
    choice.chosen = true;
    choice.why = where + " (at most " + std::to_string(limit) + ")";
  } else if (repo.entity(v).kind == EntityKind::kClass) {
    for (Ent mv : repo.Children(v)) {
      const parser::Entity& m = repo.entity(mv);
      if (m.kind != EntityKind::kMethod || IsBuildOrCheck(m.name)) continue;
      if (IsDunder(m.name) || !Reaches(g.nodes()[mv], *t)) continue;
      if (g.nodes()[mv].test_files.size() > limit) continue;
      if (!OtherFilesCall(use, mv, t)) choice.members.push_back(mv);
    }
    choice.chosen = !choice.members.empty();
    choice.why = where + (choice.chosen ? "; its methods this file reaches and few others do"
                                        : ", and no method of it is specific to this file");
  } else {
    choice.why = where + ": a utility";
  }
  return choice;
}

// The graph nodes a choice takes: its chosen members, else the object and everything in it.
std::vector<Ent> ChosenNodes(const Repo& repo, const TopChoice& c) {
  if (!c.members.empty()) return c.members;
  std::vector<Ent> out = {c.entity};
  for (Ent e : repo.Descendants(c.entity)) out.push_back(e);
  return out;
}

// FeatureBench's classifier goes down from the tests layer by layer and does not look below
// an object it chose: a deeper choice reached only through chosen objects is dropped.
void DropShadowed(const Repo& repo, const DepGraph& g, uint32_t t, int depth,
                  const std::vector<TopCandidate>& candidates, std::vector<TopChoice>* choices) {
  std::set<uint32_t> chosen;
  for (const auto& c : *choices) {
    if (!c.chosen) continue;
    for (uint32_t v : ChosenNodes(repo, c)) chosen.insert(v);
  }
  std::map<uint32_t, int> open = ReachedThroughLibrary(g, t, depth, chosen);
  for (size_t i = 0; i < choices->size(); ++i) {
    TopChoice& c = (*choices)[i];
    if (!c.chosen || candidates[i].depth < 2) continue;
    std::vector<Ent> nodes = ChosenNodes(repo, c);
    if (std::any_of(nodes.begin(), nodes.end(), [&](uint32_t v) { return open.count(v); })) {
      continue;
    }
    c.chosen = false;
    c.members.clear();
    c.why += "; but reached only through objects chosen nearer the tests";
  }
}

// The methods of a class test file t uses: those its test functions call directly (beyond
// building and checking: constructor, comparisons, repr), and the specific ones among
// them and among those it reaches (public methods at most `reach_limit` files reach and no
// other file's tests call, or those whose direct test calls come mostly from t).
struct MemberUse {
  std::vector<Ent> used, specific;
};
MemberUse MembersUsed(const Repo& repo, const DepGraph& g, Ent cls, std::optional<uint32_t> t,
                      const TestUse& use, size_t reach_limit) {
  MemberUse out;
  for (Ent mv : repo.Children(cls)) {
    const parser::Entity& m = repo.entity(mv);
    if (m.kind != EntityKind::kMethod || IsBuildOrCheck(m.name)) continue;
    bool accessor = std::any_of(m.decorators.begin(), m.decorators.end(), [](const auto& d) {
      return d.find("property") != std::string::npos || d.ends_with(".setter");
    });
    bool public_method = !IsDunder(m.name) && !m.name.starts_with("_") && !accessor;
    const auto& reach = g.nodes()[mv].test_files;
    // Reached by this file and by hardly any other: this file is where it is tested, even
    // when the tests reach it through the library's entry points.
    const bool called = CalledBy(use, mv, t);
    if (called) out.used.push_back(mv);
    if (public_method && t && Reaches(g.nodes()[mv], *t) && reach.size() <= reach_limit &&
        !OtherFilesCall(use, mv, t)) {
      out.specific.push_back(mv);
      continue;
    }
    if (!called) continue;
    if (public_method && MainTester(use.entity_calls, mv, *t)) out.specific.push_back(mv);
  }
  return out;
}

// What the direct rule weighs every candidate of one test file against.
struct DirectRule {
  const Repo& repo;
  const DepGraph& g;
  std::optional<uint32_t> t;
  const TestUse& use;
  const std::string& subject;    // the module word the test file is named after
  const std::set<Ent>& named;    // what the file's tests name
  size_t limit = 0;              // the share limit, in test files
  size_t test_files = 0;
};

// The facts about one direct candidate that the rules read.
struct DirectFacts {
  bool is_class = false, is_named = false, is_public = false, subject_module = false;
  bool called = false, exception = false;
  bool own_code_runs = false;  // a method of the class runs in this file's run, at any depth
  MemberUse members;
  size_t direct_files = 0;  // test files whose test functions call it directly
  size_t callers = 0;       // this file's test functions that call it directly
  std::string spread;       // "N of M test files use it"
};

// A shared function counts when this file is the only one whose test functions call it
// directly.
constexpr size_t kFuncLimit = 1;

DirectFacts FactsOf(const DirectRule& r, const TopCandidate& c) {
  const Ent v = c.entity;
  const parser::Entity& e = r.repo.entity(v);
  DirectFacts f;
  f.is_class = e.kind == EntityKind::kClass;
  f.members = f.is_class ? MembersUsed(r.repo, r.g, v, r.t, r.use, kReachLimit) : MemberUse{};
  f.is_named = r.named.count(v) > 0;
  // A dunder (a module's `__dir__` or `__getattr__`) is a protocol hook builtins call, no
  // private name.
  f.is_public = !e.name.starts_with("_") || IsDunder(e.name);
  // Defined in the module the file is named after (test_markers.py: markers.py).
  f.subject_module =
      !r.subject.empty() && r.subject == ModuleWord(r.repo.table(v).path, false);
  f.called = CalledBy(r.use, v, r.t);
  f.exception = IsExceptionClass(r.repo, r.g, v);
  auto calling = r.use.entity_calls.find(v);
  f.direct_files = calling != r.use.entity_calls.end() ? calling->second.size() : 0;
  auto callers = r.use.callers.find(v);
  f.callers = callers != r.use.callers.end() ? callers->second.size() : 0;
  f.spread = SpreadText(c.spread, r.test_files);
  if (f.is_class && r.t) {
    for (Ent m : r.repo.Children(v)) {
      bool method = r.repo.entity(m).kind == EntityKind::kMethod;
      f.own_code_runs = f.own_code_runs || (method && Reaches(r.g.nodes()[m], *r.t));
    }
  }
  return f;
}

// The rules that decide whatever the spread: what this file's tests do not test here, and
// exception classes. nullopt when none applies.
std::optional<TopChoice> ChooseByKind(const DirectRule& r, Ent v, const DirectFacts& f) {
  TopChoice choice{v, false, {}, ""};
  const bool specific_members = !f.members.specific.empty();
  if (!f.is_public && !f.is_named) {
    choice.why = "private, reached through other code";
  } else if (!f.is_named && !f.called && f.members.used.empty()) {
    choice.why = "neither named nor called by this file's tests (fixtures, helpers)";
  } else if (!r.use.exercised.count(v)) {
    choice.why =
        "not called or named by this file's test functions or their helpers (fixtures, "
        "callbacks and classes defined in tests)";
  } else if (f.exception && !specific_members && f.is_public && f.subject_module) {
    choice.chosen = true;
    choice.why = "an exception class of the module this file is named after";
  } else if (f.exception && !specific_members) {
    choice.why = "an exception class (its own methods are not called by the tests)";
  } else if (f.exception) {
    choice.chosen = true;
    choice.why = "an exception class whose own methods the tests call";
  } else {
    return std::nullopt;
  }
  return choice;
}

// A function only this file's tests call that most of the suite runs
// (`compile_linkcheck_allowed_redirects`, connected to every sphinx build): no feature of one
// file. Not a dunder: a module's `__getattr__` runs wherever Python probes the module for a
// name (click's, in all of its test files), which says nothing of who uses it.
bool RunsEverywhere(const DirectRule& r, const TopCandidate& c) {
  return !IsDunder(r.repo.entity(c.entity).name) && MostOfTheSuite(c.spread, r.test_files);
}

// The rules by spread: within the share limit unless it builds inputs or is one; beyond it
// only where this file is where it is tested.
TopChoice ChooseBySpread(const DirectRule& r, const TopCandidate& c, const DirectFacts& f) {
  const Ent v = c.entity;
  TopChoice choice{v, false, {}, ""};
  const std::string& n = f.spread;
  const bool within = c.spread <= r.limit;
  // Beyond the limit a function is chosen where this file tests it, but not one that most
  // of the suite runs and no other file's tests call (a hook the application calls); a
  // function of the module the file is named after is its subject anyway.
  const bool everywhere = !f.is_class && f.direct_files <= kFuncLimit && RunsEverywhere(r, c);
  if (within && BuildsInputs(r.use.calls, v, *r.t)) {
    choice.why = n + ", but the tests of " + std::to_string(CallingFiles(r.use, v)) +
                 " files call it directly, this file's less than " +
                 std::to_string(static_cast<int>(kBuilderShare * 100)) + "%: it builds inputs";
  } else if (within && f.is_class && f.callers == 0 && !BuiltThroughBase(r.repo, r.g, r.use, v)) {
    choice.chosen = f.subject_module && f.own_code_runs;
    choice.why = n + (choice.chosen
                          ? "; built as an input, but defined in the module this file is named "
                            "after and its own code runs in this file's tests"
                          : ", but this file's test functions never run its own code (they pass "
                            "it or build it with a generated or inherited constructor): an input");
  } else if (within) {
    choice.chosen = true;
    choice.why = n + " (at most " + std::to_string(r.limit) + ")";
  } else if (!f.is_class && f.called && f.direct_files <= kFuncLimit && !everywhere) {
    choice.chosen = true;
    choice.why = n + ", but only this file's test functions call it directly";
  } else if (!f.members.specific.empty()) {
    choice.chosen = true;
    choice.members = f.members.specific;
    choice.why = n + "; tested through methods specific to this file";
  } else if (f.is_public && f.subject_module) {
    choice.chosen = true;
    choice.why = n + ", but it is defined in the module this file is named after";
  } else if (MainTester(r.use.calls, v, *r.t) && f.callers >= 2 && !everywhere) {
    choice.chosen = true;
    choice.why = n + ", but this file's test functions make most direct test calls into it";
  } else if (everywhere && f.called) {
    choice.why = n + ": more than half of them, so it is part of what every test runs (though "
                 "only this file's test functions call it directly)";
  } else {
    choice.why = n + (f.is_class ? ", and no method of it is specific to this file's tests"
                                 : ": a utility");
  }
  return choice;
}

// The share rule before (--top-chooser share): within the limit or a utility.
TopChoice ChooseByShare(const TopCandidate& c, size_t limit, size_t test_files) {
  TopChoice choice{c.entity, c.spread <= limit, {}, ""};
  choice.why = SpreadText(c.spread, test_files) +
               (choice.chosen ? " (at most " + std::to_string(limit) + ")" : ": a utility");
  return choice;
}

}  // namespace

bool IsTestSupport(std::string_view path, std::string_view f2p) {
  for (size_t start = 0; start < path.size();) {
    size_t end = std::min(path.find('/', start), path.size());
    std::string_view part = path.substr(start, end - start);
    if (end == path.size() && part.ends_with(".py")) part.remove_suffix(3);
    if (part == "testing" || part == "_testing") {
      const std::string_view root = path.substr(0, start + part.size());
      return !(f2p.starts_with(root) && f2p.size() > root.size() && f2p[root.size()] == '/') &&
             ModuleWord(f2p, true) != "testing";
    }
    start = end + 1;
  }
  return false;
}

size_t ShareLimit(const DepGraph& g, double share) {
  const double n = static_cast<double>(g.test_files().size());
  return std::max<size_t>(1, static_cast<size_t>(share * n));
}

bool IsTestHelper(const Repo& repo, const DepGraph& g, Ent v, std::string_view f2p) {
  return repo.entity(v).kind == EntityKind::kFunction && IsTestSupport(g.nodes()[v].path, f2p);
}

std::vector<TopChoice> ChooseTopObjects(const Repo& repo, const DepGraph& g, const std::string& f2p,
                                        const std::vector<TopCandidate>& candidates,
                                        const SelectOptions& options) {
  if (options.chooser == TopRule::kLearned) return ChooseLearned(repo, g, f2p, candidates, options);
  size_t limit = ShareLimit(g, options.max_share);
  bool specific = options.chooser != TopRule::kShare;
  auto t = TestFileIndex(g, f2p);
  TestUse use = specific && t ? CollectTestUse(repo, g, *t) : TestUse{};
  const std::string subject = ModuleWord(f2p, true);
  const std::set<Ent> named = specific ? NamedBy(repo, g, f2p) : std::set<Ent>{};
  const DirectRule rule{repo, g, t, use, subject, named, limit, g.test_files().size()};
  // The deeper candidates are many where the tests drive an application: only the most
  // specific count, those used by at most `deep_width` times as many files as the most
  // specific of them (and never more than `limit`).
  size_t fewest = limit;
  for (const auto& c : candidates) {
    if (c.depth > 1 && c.spread > 0) fewest = std::min(fewest, c.spread);
  }
  const size_t width = static_cast<size_t>(std::max(1, options.deep_width));
  const size_t deep_limit = std::min(limit, std::max<size_t>(2, width * fewest));
  std::vector<TopChoice> out;
  for (const auto& c : candidates) {
    if (specific && IsTestHelper(repo, g, c.entity, f2p)) {
      out.push_back({c.entity, false, {}, "a test helper of the library's testing module"});
    } else if (c.depth > 1) {
      out.push_back(ChooseDeep(repo, g, c, t, use, deep_limit, options.deep));
    } else if (!specific) {
      out.push_back(ChooseByShare(c, limit, rule.test_files));
    } else {
      DirectFacts facts = FactsOf(rule, c);
      auto by_kind = ChooseByKind(rule, c.entity, facts);
      out.push_back(by_kind ? std::move(*by_kind) : ChooseBySpread(rule, c, facts));
    }
  }
  if (options.deep && t) DropShadowed(repo, g, *t, options.depth, candidates, &out);
  return out;
}

namespace {

// The calls test file t's run made from the file's own code, followed through test code
// (helpers, fixtures, conftests) at most `depth` calls deep: `visit` gets each node outside
// test code so reached, once.
void ForEachCalledFromTestCode(const DepGraph& g, uint32_t t, int depth,
                               const std::function<void(uint32_t)>& visit) {
  std::set<std::string> tests = TestFileSet(g);
  const std::string& file = g.test_files()[t];
  std::set<uint32_t> seen;
  std::vector<uint32_t> layer;
  for (uint32_t v = 0; v < g.nodes().size(); ++v) {
    if (g.nodes()[v].path == file) layer.push_back(v), seen.insert(v);
  }
  for (int d = 0; d < depth && !layer.empty(); ++d) {
    std::vector<uint32_t> next;
    for (uint32_t v : layer) {
      auto [b, e] = OutEdges(g, v);
      for (const Edge* x = b; x != e; ++x) {
        // The edge must belong to this file's run before its target counts as reached: an
        // edge of another file's run (through a shared conftest) must not hide it.
        if (x->kind != EdgeKind::kCall ||
            !std::binary_search(x->test_files.begin(), x->test_files.end(), t) ||
            !seen.insert(x->to).second) {
          continue;
        }
        if (taskdir::IsTestCode(g.nodes()[x->to].path, tests)) {
          next.push_back(x->to);
        } else {
          visit(x->to);
        }
      }
    }
    layer = std::move(next);
  }
}

// The unit an entity belongs to as an interface: the outermost function or method it is (or
// is nested in), else itself (a class, a module).
Ent OutermostUnit(const Repo& repo, Ent v) {
  Ent unit = v;
  for (Ent up = v;;) {
    auto p = repo.Parent(up);
    if (!p || repo.entity(*p).kind == EntityKind::kModule) break;
    up = *p;
    if (repo.entity(up).kind != EntityKind::kClass) unit = up;
  }
  return unit;
}

// FeatureBench's top objects without its model: every function and method (cuttable unit)
// the test file's code calls in its run — from its test functions, or through its helpers,
// fixtures and conftests — except builders of inputs (BuildsInputs: the general-purpose
// tools the model is told to leave out). Sorted by id.
std::vector<Ent> DirectlyTested(const Repo& repo, const DepGraph& g, uint32_t t) {
  TestUse use = CollectTestUse(repo, g, t);
  std::set<Ent> out;
  ForEachCalledFromTestCode(g, t, 5, [&](Ent v) {
    if (g.nodes()[v].kind == EntityKind::kModule || BuildsInputs(use.entity_calls, v, t)) return;
    out.insert(OutermostUnit(repo, v));
  });
  return repo.ByIdOrder(out);
}

}  // namespace

namespace {

// Appends the top objects choice `c` gives: the object itself, or (unless `whole`) the
// methods it is tested through. Whether it gave methods.
bool AppendTops(const TopChoice& c, bool whole, std::vector<Ent>* tops) {
  if (c.members.empty() || whole) {
    tops->push_back(c.entity);
    return false;
  }
  tops->insert(tops->end(), c.members.begin(), c.members.end());
  return true;
}

// Step 2: the top objects of test file t (a model's choice, else the rule's; the most specific
// candidate when nothing is chosen).
util::Status ChooseTops(const Repo& repo, const DepGraph& g, uint32_t t,
                        const std::vector<TopCandidate>& candidates, const SelectOptions& options,
                        const TopChooser& chooser, Plan* plan) {
  if (chooser) {  // a model; an empty choice leaves it to the rule below
    auto chosen = chooser(plan->f2p, candidates, TopItems(repo, g, plan->f2p, candidates, options));
    if (!chosen.ok()) return chosen.failure();
    plan->top_objects = *chosen;
    plan->member_tops = std::any_of(chosen->begin(), chosen->end(),
                                    [&](Ent v) { return !repo.IsTopLevel(v); });
  }
  if (!plan->top_objects.empty()) return util::Status::Ok();
  if (options.chooser == TopRule::kFeatureBench) {
    plan->top_objects = DirectlyTested(repo, g, t);
    plan->member_tops = true;
  } else {
    // The choices are the candidates', in their order.
    std::vector<TopChoice> choices = ChooseTopObjects(repo, g, plan->f2p, candidates, options);
    for (size_t i = 0; i < choices.size(); ++i) {
      if (!choices[i].chosen) continue;
      // Whole only where at most half of the test files use it: a class more use is the
      // application every test runs (sphinx's `Sphinx`), tested here through its methods.
      bool whole = options.whole_classes &&
                   !MostOfTheSuite(candidates[i].spread, g.test_files().size());
      if (AppendTops(choices[i], whole, &plan->top_objects)) plan->member_tops = true;
    }
  }
  if (plan->top_objects.empty()) plan->top_objects.push_back(candidates.front().entity);
  return util::Status::Ok();
}

// Why a test file has no direct candidate, for its rejection: the nearest objects its run
// reaches through library code (and how deep), or that it reaches none outside test code.
std::string NoCandidateEvidence(const Repo& repo, const std::vector<TopCandidate>& candidates,
                                bool package_init) {
  std::string init = package_init ? "" : " and outside __init__.py files (--no-init-tops)";
  if (candidates.empty()) {
    return ": its tests call or name no module-level function or class outside test code" + init;
  }
  std::string out = ": its tests reach the library only through other code (nearest, calls deep: ";
  for (size_t i = 0; i < candidates.size() && i < 3; ++i) {
    out += (i ? ", " : "") + repo.id(candidates[i].entity) + " " + std::to_string(candidates[i].depth);
  }
  return out + (candidates.size() > 3 ? ", ...)" : ")");
}

}  // namespace

util::Expected<Plan> PlanTask(const Repo& repo, const DepGraph& g,
                              const std::vector<PassingFile>& passing, const PassingFile& f2p,
                              const SelectOptions& options, const TopChooser& chooser) {
  auto t = TestFileIndex(g, f2p.file);
  if (!t) return util::Error{f2p.file + " is not a test file of the graph"};
  Plan plan;
  plan.f2p = f2p.file;
  plan.utility_limit = options.keep_share > 0 ? ShareLimit(g, options.keep_share) : 0;
  for (const auto& id : f2p.tests) {
    if (std::find(f2p.xfail_marked.begin(), f2p.xfail_marked.end(), id) == f2p.xfail_marked.end()) {
      plan.f2p_tests.push_back(id);
    }
  }
  if (plan.f2p_tests.empty()) return util::Error{f2p.file + " has no test the harness can score"};
  plan.package_init = PackageInitTops(options);
  std::vector<TopCandidate> candidates =
      TopCandidates(repo, g, f2p.file, options.depth, plan.package_init);
  if (candidates.empty() || (candidates.front().depth > 1 && !options.deep)) {
    return util::Error{"no repository object is tested directly" +
                       NoCandidateEvidence(repo, candidates, plan.package_init)};
  }
  if (auto s = ChooseTops(repo, g, *t, candidates, options, chooser, &plan); !s.ok()) {
    return s.failure();
  }
  // The extraction follows into __init__.py files only for a feature defined there.
  plan.package_init = plan.package_init &&
                      std::any_of(plan.top_objects.begin(), plan.top_objects.end(),
                                  [&](Ent v) { return InPackageInit(g.nodes()[v]); });
  std::vector<std::string> pool = P2PCandidates(repo, g, passing, options, &plan);
  if (pool.size() < static_cast<size_t>(options.min_p2p)) {
    return util::Error{"only " + std::to_string(pool.size()) + " passing test files share no " +
                       "top-level object (--min-p2p " + std::to_string(options.min_p2p) + ")"};
  }
  util::Rng rng(TaskSeed(options.seed, f2p.file));
  plan.p2p = DrawP2P(g, *t, f2p.file, std::move(pool), options, rng);
  plan.kept = ImportTimeKept(repo, g, plan.p2p);
  plan.cap =
      options.min_cap +
      static_cast<int>(rng.Below(static_cast<uint64_t>(options.max_cap - options.min_cap + 1)));
  if (auto s = Reextract(repo, g, &plan); !s.ok()) return s.failure();
  return plan;
}

std::vector<Ent> DeepTopObjects(const Repo& repo, const DepGraph& g, const std::string& f2p,
                                const SelectOptions& options) {
  if (options.depth <= 1) return {};
  SelectOptions deep = options;
  deep.deep = true;
  std::vector<TopCandidate> candidates =
      TopCandidates(repo, g, f2p, deep.depth, PackageInitTops(options));
  std::vector<TopChoice> choices = ChooseTopObjects(repo, g, f2p, candidates, deep);
  std::vector<Ent> out;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i].chosen && candidates[i].depth > 1) AppendTops(choices[i], false, &out);
  }
  return out;
}

util::Status Reextract(const Repo& repo, const DepGraph& g, Plan* plan) {
  auto t = TestFileIndex(g, plan->f2p);
  if (!t) return util::Error{plan->f2p + " is not a test file of the graph"};
  const std::set<uint32_t> p2p_index = TestFileIndices(g, plan->p2p);
  plan->extracted.clear();
  plan->stand_ins.clear();
  plan->capped = false;
  WalkFromTops(g, repo, *t, p2p_index, plan);
  if (plan->extracted.empty()) {
    return util::Error{plan->kept.empty()
                           ? "every top-level object is also used by the P2P files"
                           : "everything left to extract is used by code that stays"};
  }
  return util::Status::Ok();
}

std::set<Ent> Interfaces(const Repo& repo, const DepGraph& g, const std::string& f2p,
                         const std::vector<Ent>& tops, const std::set<Ent>& extracted, int depth) {
  std::set<Ent> out;
  const auto t = TestFileIndex(g, f2p);
  // What the test code calls first of the extracted code: shown, and not followed further.
  if (t) {
    ForEachCalledFromTestCode(g, *t, depth, [&](Ent v) {
      Ent unit = OutermostUnit(repo, v);
      if (extracted.count(unit)) out.insert(unit);
    });
  }
  for (Ent v : tops) {
    EntityKind kind = repo.entity(v).kind;
    if ((kind == EntityKind::kFunction || kind == EntityKind::kMethod) && extracted.count(v)) {
      out.insert(v);
    }
  }
  // A top class that stays (a shell others subclass or import) and that the test code
  // reaches no method of shows the methods it loses that code which stays calls in the F2P
  // file's run: where the library enters the feature (seaborn's marks, drawn by `Plot`).
  std::set<Ent> shells;
  for (Ent v : tops) {
    if (repo.entity(v).kind != EntityKind::kClass || extracted.count(v)) continue;
    if (std::none_of(out.begin(), out.end(), [&](Ent s) { return repo.Within(s, v); })) {
      shells.insert(v);
    }
  }
  for (const Edge& x : g.edges()) {
    if (shells.empty() || !t) break;
    if (x.kind != EdgeKind::kCall || extracted.count(x.from) || !extracted.count(x.to) ||
        !std::binary_search(x.test_files.begin(), x.test_files.end(), *t)) {
      continue;
    }
    auto parent = repo.Parent(x.to);
    if (parent && shells.count(*parent)) out.insert(x.to);
  }
  // A top class none of whose methods was reached is shown whole.
  for (Ent v : tops) {
    if (repo.entity(v).kind != EntityKind::kClass || !extracted.count(v)) continue;
    if (std::none_of(out.begin(), out.end(), [&](Ent s) { return repo.Within(s, v); })) {
      out.insert(v);
    }
  }
  return out;
}

std::set<Ent> ExecutedBy(const DepGraph& g, const std::vector<std::string>& files) {
  const std::set<uint32_t> index = TestFileIndices(g, files);
  std::set<Ent> out;
  for (Ent v = 0; v < g.nodes().size(); ++v) {
    EntityKind kind = g.nodes()[v].kind;
    if (kind != EntityKind::kClass && kind != EntityKind::kModule && RanIn(g, v, index)) {
      out.insert(v);
    }
  }
  return out;
}

int ExtractedLines(const Repo& repo, const std::set<Ent>& extracted) {
  std::map<size_t, std::vector<bool>> seen;
  int lines = 0;
  for (Ent v : extracted) {
    const auto& e = repo.entity(v);
    auto& marks = seen[repo.file(v)];
    if (marks.size() <= static_cast<size_t>(e.end_line))
      marks.resize(static_cast<size_t>(e.end_line) + 1);
    for (int l = e.start_line; l <= e.end_line; ++l) {
      if (!marks[static_cast<size_t>(l)]) marks[static_cast<size_t>(l)] = true, ++lines;
    }
  }
  return lines;
}

// The helpers select_internal.h declares (shared with top_facts.cc).

std::optional<uint32_t> TestFileIndex(const DepGraph& g, const std::string& file) {
  const auto& files = g.test_files();
  auto it = std::lower_bound(files.begin(), files.end(), file);
  if (it == files.end() || *it != file) return std::nullopt;
  return static_cast<uint32_t>(it - files.begin());
}

int Lines(const graph::Node& n) { return n.end_line - n.start_line + 1; }

// Code a package's __init__.py defines: under FeatureBench's rule (!package_init) never a top
// object, never extracted, and nothing is followed through it (its classifier: neither top
// nor specific, so it stays).
bool InPackageInit(const graph::Node& n) {
  return n.path == "__init__.py" || n.path.ends_with("/__init__.py");
}

bool IsDunder(const std::string& name) {
  return name.size() > 4 && name.starts_with("__") && name.ends_with("__");
}

// Members through which tests build inputs and check results rather than test a class.
bool IsBuildOrCheck(const std::string& name) {
  static const std::set<std::string> kNames = {
      "__init__", "__new__",  "__post_init__", "__eq__", "__ne__", "__hash__", "__repr__",
      "__str__",  "__bool__", "__lt__",        "__le__", "__gt__", "__ge__",   "__init_subclass__"};
  return kNames.count(name) > 0;
}

// A test function as pytest collects them by default: test* at module level, or a test*
// method of a module-level Test* class.
bool IsTestFunction(const Repo& repo, Ent v) {
  const parser::Entity& e = repo.entity(v);
  if (!e.name.starts_with("test")) return false;
  if (repo.IsTopLevel(v)) return e.kind == EntityKind::kFunction;
  auto p = repo.Parent(v);
  if (!p) return false;
  const parser::Entity& cls = repo.entity(*p);
  return cls.kind == EntityKind::kClass && cls.name.starts_with("Test") && repo.IsTopLevel(*p);
}

// Collects TestUse for test file t: edges whose source is testing code (TestingCode).
TestUse CollectTestUse(const Repo& repo, const DepGraph& g, uint32_t t) {
  std::vector<bool> is_test = TestingCode(repo, g);
  TestUse use;
  for (const Edge& x : g.edges()) {
    if (x.kind != EdgeKind::kCall && x.kind != EdgeKind::kReference) continue;
    if (!is_test[x.from]) continue;
    uint32_t file = *TestFileIndex(g, g.nodes()[x.from].path);
    auto top = TopLevel(repo, x.to);
    if (file == t && top) use.exercised.insert(*top);
    if (file == t && top && x.kind == EdgeKind::kReference) use.named_by[*top].insert(x.from);
    if (x.kind != EdgeKind::kCall) continue;
    if (file == t) use.callees[x.from].insert(x.to);
    use.entity_calls[x.to][file] += x.count;
    if (!top) continue;
    use.calls[*top][file] += x.count;
    if (file == t) use.callers[*top].insert(x.from);
  }
  return use;
}

// The share of all test functions' direct calls into v (counted per call) that come from
// test file t; 0 when no test calls it directly.
double CallShare(const std::map<uint32_t, std::map<uint32_t, int64_t>>& calls, uint32_t v,
                 uint32_t t) {
  auto it = calls.find(v);
  if (it == calls.end()) return 0;
  int64_t mine = 0, all = 0;
  for (const auto& [file, n] : it->second) {
    all += n;
    if (file == t) mine = n;
  }
  return all > 0 ? static_cast<double>(mine) / static_cast<double>(all) : 0;
}

// Test files whose test functions call v (a top-level object, its members included) directly.
size_t CallingFiles(const TestUse& use, uint32_t v) {
  auto it = use.calls.find(v);
  return it == use.calls.end() ? 0 : it->second.size();
}

// The module a test file is named after: tests/test_markers.py -> "markers"; the module of
// src/pkg/_markers.py -> "markers" (leading underscores and a plural s ignored).
std::string ModuleWord(std::string_view path, bool test_file) {
  if (size_t slash = path.rfind('/'); slash != std::string::npos) path.remove_prefix(slash + 1);
  if (path.ends_with(".py")) path.remove_suffix(3);
  if (test_file) {
    if (!path.starts_with("test")) return "";
    path.remove_prefix(4);
  }
  std::string word;
  for (char c : path) {
    if (c != '_') word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (word.size() > 1 && word.back() == 's') word.pop_back();
  return word;
}

// An exception class: named like one, or with such a base in the repository (transitively:
// click's MissingParameter -> BadParameter -> UsageError -> ClickException(Exception)).
bool IsExceptionClass(const Repo& repo, const DepGraph& g, Ent v) {
  const parser::Entity& e = repo.entity(v);
  if (NamedLikeException(e)) return true;
  if (e.kind != EntityKind::kClass) return false;
  std::set<Ent> bases = Ancestors(g, v);
  return std::any_of(bases.begin(), bases.end(),
                     [&](Ent b) { return NamedLikeException(repo.entity(b)); });
}

// What test file `f2p` names (imports, dotted uses), as top-level objects.
std::set<Ent> NamedBy(const Repo& repo, const DepGraph& g, const std::string& f2p) {
  std::set<Ent> named;
  for (Ent v = 0; v < g.nodes().size(); ++v) {
    if (g.nodes()[v].path != f2p) continue;
    auto [b, e] = OutEdges(g, v);
    for (const Edge* x = b; x != e; ++x) {
      if (x->kind != EdgeKind::kImport && x->kind != EdgeKind::kReference) continue;
      if (auto top = TopLevel(repo, x->to)) named.insert(*top);
    }
  }
  return named;
}

// Whether test file t's test functions call v directly.
bool CalledBy(const TestUse& use, Ent v, std::optional<uint32_t> t) {
  auto it = use.entity_calls.find(v);
  return it != use.entity_calls.end() && t && it->second.count(*t) > 0;
}

}  // namespace fbkit::extract::make

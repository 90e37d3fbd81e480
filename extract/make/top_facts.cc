// The facts of a top-object item and the learned choice over them (select.h TopItems,
// TopFactNames; TopRule::kLearned).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "extract/make/select.h"
#include "extract/make/select_internal.h"
#include "extract/make/top_model.h"
#include "util/strings.h"

namespace fbkit::extract::make {

using graph::DepGraph;
using parser::EntityKind;

const std::vector<std::string>& TopFactNames() {
  static const std::vector<std::string> names = {
      "function",       "class",          "method",         "depth",
      "log_spread",     "spread_share",   "log_spread_over_fewest",
      "log_direct_files", "called",       "log_callers",    "call_share",
      "named",          "public",         "dunder",         "exception",
      "subject_module", "log_lines",      "accessor",       "build_or_check",
      "test_helper",    "rule_chosen",    "in_source",      "in_test_names",
      "in_file_name",   "in_package_init", "near_test_file", "log_members_reached",
      "within_share",   "log_candidates", "exercised"};
  return names;
}

namespace {

// Lower-case words of an identifier: snake_case and CamelCase parts of two letters or more.
std::vector<std::string> NameWords(std::string_view name) {
  std::vector<std::string> out;
  std::string word;
  auto flush = [&] {
    if (word.size() > 1) out.push_back(word);
    word.clear();
  };
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      flush();
      continue;
    }
    bool upper = std::isupper(static_cast<unsigned char>(c));
    bool after_lower = i > 0 && std::islower(static_cast<unsigned char>(name[i - 1]));
    if (upper && after_lower) flush();
    word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  flush();
  return out;
}

// The identifiers a source text spells.
std::set<std::string> Identifiers(std::string_view text) {
  std::set<std::string> out;
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (!(std::isalpha(c) || c == '_')) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
    out.insert(std::string(text.substr(i, j - i)));
    i = j;
  }
  return out;
}

// The last directory of `path` that is not a test directory ("" when none).
std::string LastPackage(std::string_view path) {
  std::vector<std::string> parts = util::Split(std::string(path), '/');
  if (!parts.empty()) parts.pop_back();
  while (!parts.empty() && (parts.back() == "tests" || parts.back() == "test" ||
                            parts.back() == "testing" || parts.back().empty())) {
    parts.pop_back();
  }
  if (parts.empty()) return "";
  std::string last = parts.back();
  return last.starts_with("_") ? last.substr(1) : last;
}

double Log1p(double x) { return std::log1p(std::max(0.0, x)); }

// What TopItems reads once per test file.
struct FileContext {
  std::optional<uint32_t> t;
  TestUse use;
  std::set<Ent> named;
  std::string subject;  // ModuleWord of the test file
  std::string package;  // LastPackage of the test file
  std::set<std::string> identifiers;  // of the test file's source
  std::set<std::string> test_words;   // words of its test functions' names
  std::map<Ent, size_t> callers;      // entity -> this file's test functions calling it directly
  std::set<Ent> rule_chosen;          // what the specific rule (deep too) takes
  size_t limit = 0, test_files = 0, fewest = 1, candidates = 0;
};

FileContext ReadFile(const Repo& repo, const DepGraph& g, const std::string& f2p,
                     const std::vector<TopCandidate>& candidates, const SelectOptions& options) {
  FileContext x;
  x.t = TestFileIndex(g, f2p);
  if (x.t) x.use = CollectTestUse(repo, g, *x.t);
  x.named = NamedBy(repo, g, f2p);
  x.subject = ModuleWord(f2p, true);
  x.package = LastPackage(f2p);
  if (auto file = repo.FileOf(f2p)) {
    x.identifiers = Identifiers(repo.source(*file));
    for (Ent v : repo.EntitiesOf(*file)) {
      if (!IsTestFunction(repo, v)) continue;
      for (auto& w : NameWords(repo.entity(v).name)) x.test_words.insert(w);
    }
    x.test_words.erase("test");
  }
  for (const auto& [fn, callees] : x.use.callees) {
    for (Ent v : callees) x.callers[v]++;
  }
  SelectOptions rule = options;
  rule.chooser = TopRule::kSpecific;
  rule.deep = true;
  auto choices = ChooseTopObjects(repo, g, f2p, candidates, rule);
  for (const auto& c : choices) {
    if (!c.chosen) continue;
    if (c.members.empty()) {
      x.rule_chosen.insert(c.entity);
      for (Ent d : repo.Descendants(c.entity)) x.rule_chosen.insert(d);
    }
    x.rule_chosen.insert(c.members.begin(), c.members.end());
  }
  x.limit = ShareLimit(g, options.max_share);
  x.test_files = g.test_files().size();
  x.candidates = candidates.size();
  size_t fewest = 0;
  for (const auto& c : candidates) {
    if (c.spread > 0 && (fewest == 0 || c.spread < fewest)) fewest = c.spread;
  }
  x.fewest = std::max<size_t>(1, fewest);
  return x;
}

bool IsAccessor(const parser::Entity& m) {
  return std::any_of(m.decorators.begin(), m.decorators.end(), [](const auto& d) {
    return d.find("property") != std::string::npos || d.ends_with(".setter");
  });
}

// The facts of one item (TopFactNames' order): `v` is the candidate itself or, with
// `member`, one of its class's methods.
std::vector<double> ItemFacts(const Repo& repo, const DepGraph& g, const FileContext& x,
                              const TopCandidate& c, Ent v, bool member) {
  const parser::Entity& e = repo.entity(v);
  const Ent top = c.entity;
  const bool is_class = !member && repo.entity(top).kind == EntityKind::kClass;
  const size_t spread = member ? g.nodes()[v].test_files.size() : c.spread;
  size_t direct_files = 0;
  double share = 0;
  bool called = false;
  size_t callers = 0;
  if (member || !is_class) {
    auto it = x.use.entity_calls.find(v);
    direct_files = it != x.use.entity_calls.end() ? it->second.size() : 0;
    share = x.t ? CallShare(x.use.entity_calls, v, *x.t) : 0;
    called = CalledBy(x.use, v, x.t);
    auto k = x.callers.find(v);
    callers = k != x.callers.end() ? k->second : 0;
  } else {
    direct_files = CallingFiles(x.use, top);
    share = x.t ? CallShare(x.use.calls, top, *x.t) : 0;
    auto k = x.use.callers.find(top);
    callers = k != x.use.callers.end() ? k->second.size() : 0;
    called = callers > 0;
  }
  std::string flat;
  for (char ch : e.name) {
    if (ch != '_') flat += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  std::vector<std::string> words = NameWords(e.name);
  size_t in_tests = 0;
  for (const auto& w : words) in_tests += x.test_words.count(w);
  const bool in_file_name = !x.subject.empty() && flat.size() >= 3 &&
                            (x.subject.find(flat) != std::string::npos ||
                             (x.subject.size() >= 4 && flat.find(x.subject) != std::string::npos));
  const std::string pkg = LastPackage(repo.table(v).path + "/x");
  const std::string module = ModuleWord(repo.table(v).path, false);
  const bool near = !x.package.empty() && (pkg == x.package || module == x.package);
  std::vector<double> f = {
      !member && !is_class ? 1.0 : 0.0,
      is_class ? 1.0 : 0.0,
      member ? 1.0 : 0.0,
      static_cast<double>(c.depth),
      Log1p(static_cast<double>(spread)),
      x.test_files ? static_cast<double>(spread) / static_cast<double>(x.test_files) : 0,
      std::log(std::max(1.0, static_cast<double>(spread) / static_cast<double>(x.fewest))),
      Log1p(static_cast<double>(direct_files)),
      called ? 1.0 : 0.0,
      Log1p(static_cast<double>(callers)),
      share,
      x.named.count(top) ? 1.0 : 0.0,
      !e.name.starts_with("_") || IsDunder(e.name) ? 1.0 : 0.0,
      IsDunder(e.name) ? 1.0 : 0.0,
      IsExceptionClass(repo, g, top) ? 1.0 : 0.0,
      !x.subject.empty() && x.subject == ModuleWord(repo.table(top).path, false) ? 1.0 : 0.0,
      Log1p(static_cast<double>(Lines(g.nodes()[v]))),
      member && IsAccessor(e) ? 1.0 : 0.0,
      member && IsBuildOrCheck(e.name) ? 1.0 : 0.0,
      IsTestHelper(repo, g, top, g.test_files()[x.t.value_or(0)]) ? 1.0 : 0.0,
      x.rule_chosen.count(v) ? 1.0 : 0.0,
      x.identifiers.count(e.name) ? 1.0 : 0.0,
      words.empty() ? 0.0 : static_cast<double>(in_tests) / static_cast<double>(words.size()),
      in_file_name ? 1.0 : 0.0,
      InPackageInit(g.nodes()[top]) ? 1.0 : 0.0,
      near ? 1.0 : 0.0,
      is_class ? Log1p(static_cast<double>(c.members.size())) : 0.0,
      spread <= x.limit ? 1.0 : 0.0,
      Log1p(static_cast<double>(x.candidates)),
      x.use.exercised.count(top) ? 1.0 : 0.0,
  };
  return f;
}

// "p 0.83: called +1.20, rule_chosen +0.81, log_spread -0.55": an item's probability and the
// three facts that moved it most.
std::string Explain(const TopModel& model, double p, const std::vector<double>& contributions) {
  std::vector<size_t> order(contributions.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::fabs(contributions[a]) > std::fabs(contributions[b]);
  });
  char buf[64];
  std::snprintf(buf, sizeof buf, "p %.2f", p);
  std::string out = buf;
  for (size_t k = 0; k < order.size() && k < 3; ++k) {
    std::snprintf(buf, sizeof buf, "%s%s %+.2f", k ? ", " : ": ", model.facts[order[k]].c_str(),
                  contributions[order[k]]);
    out += buf;
  }
  return out;
}

}  // namespace

std::vector<TopChoice> ChooseLearned(const Repo& repo, const DepGraph& g, const std::string& f2p,
                                     const std::vector<TopCandidate>& candidates,
                                     const SelectOptions& options) {
  const TopModel& model = options.model ? *options.model : DefaultTopModel();
  std::vector<TopItem> items = TopItems(repo, g, f2p, candidates, options);
  std::vector<double> p(items.size());
  std::vector<std::string> why(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    std::vector<double> contributions;
    p[i] = TopScore(model, items[i].facts, &contributions);
    why[i] = Explain(model, p[i], contributions);
  }
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  std::vector<bool> take(items.size(), false);
  size_t taken = 0;
  for (size_t i : order) {
    if (p[i] < model.threshold) break;
    if (model.max_items > 0 && taken >= static_cast<size_t>(model.max_items)) break;
    take[i] = true, ++taken;
  }
  if (taken == 0 && !order.empty()) take[order.front()] = true, taken = 1;
  // The retry's extra items, best first, each one that widens the choice: a method of a
  // class taken whole (which would show the class through it alone) and a class already
  // taken through its methods are passed over.
  const size_t want = taken + static_cast<size_t>(std::max(0, options.learned_more));
  std::set<size_t> whole, through;  // candidates taken whole, through a member
  for (size_t i = 0; i < items.size(); ++i) {
    if (take[i]) (items[i].member ? through : whole).insert(items[i].candidate);
  }
  for (size_t i : order) {
    if (taken >= want) break;
    const size_t k = items[i].candidate;
    const bool shrinks = items[i].member ? whole.count(k) && !through.count(k) : through.count(k);
    if (take[i] || shrinks) continue;
    take[i] = true, ++taken;
    (items[i].member ? through : whole).insert(k);
  }
  std::vector<TopChoice> out;
  for (size_t k = 0; k < candidates.size(); ++k) out.push_back({candidates[k].entity, false, {}, ""});
  for (size_t i = 0; i < items.size(); ++i) {
    TopChoice& c = out[items[i].candidate];
    if (!items[i].member) {
      c.chosen = take[i];
      char below[48];
      std::snprintf(below, sizeof below, " (below %.2f)", model.threshold);
      c.why = why[i] + (take[i] ? "" : below);
    } else if (take[i]) {
      c.members.push_back(items[i].entity);
      c.why += "; " + repo.entity(items[i].entity).name + " " + why[i];
    }
  }
  for (auto& c : out) {
    if (!c.members.empty()) c.chosen = true;  // through its members, not whole
  }
  return out;
}

std::vector<TopItem> TopItems(const Repo& repo, const DepGraph& g, const std::string& f2p,
                              const std::vector<TopCandidate>& candidates,
                              const SelectOptions& options) {
  std::vector<TopItem> out;
  if (candidates.empty()) return out;
  FileContext x = ReadFile(repo, g, f2p, candidates, options);
  for (size_t k = 0; k < candidates.size(); ++k) {
    const TopCandidate& c = candidates[k];
    out.push_back({c.entity, k, false, ItemFacts(repo, g, x, c, c.entity, false)});
    for (Ent m : c.members) out.push_back({m, k, true, ItemFacts(repo, g, x, c, m, true)});
  }
  return out;
}

}  // namespace fbkit::extract::make

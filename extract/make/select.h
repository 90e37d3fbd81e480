// FeatureBench's selection steps over the dependency graph: which test files pass (F2P
// candidates and the P2P pool), the top-level objects a test file tests, the P2P files that
// share none of them, and the breadth-first extraction under a line cap.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "extract/make/repo.h"
#include "graph/dep_graph.h"
#include "tracer/trace.h"
#include "util/expected.h"

namespace fbkit::extract::make {

struct PassingFile {
  std::string file;
  std::vector<std::string> tests;  // passed, xfailed or xpassed test ids, in collection order
  size_t skipped = 0;
  // Tests left out because their ids name the checkout's absolute path (parametrised with
  // it): in another copy they have other ids.
  size_t path_ids = 0;
  // Those of `tests` marked xfail (xfailed or xpassed): no F2P point, since the harness
  // counts an F2P test as passing only when it passed (an xfail proves nothing of a patch:
  // a library can mark or xfail any test); a P2P point like the others.
  std::vector<std::string> xfail_marked = {};
};

// Test files that ran completely with every test passed or xfailed (skipped ones allowed,
// at least one point; tests whose ids name the checkout's path left out), sorted by path;
// `rejected` gets the others with the reason.
std::vector<PassingFile> PassingFiles(const tracer::TraceSet& trace,
                                      std::map<std::string, std::string>* rejected);

// The deterministic rules for top objects (--top-chooser, named as TopRulesByName says).
enum class TopRule {
  kSpecific,      // "specific": member-level specificity (the default)
  kShare,         // "share": objects used by at most max_share of the test files (fbkit's rule before)
  kFeatureBench,  // "featurebench": every function and method the test code calls directly
  kLearned,       // "learned": a model fitted on FeatureBench's published choices (top_model.h)
};

struct TopModel;

// Each rule by its name, for option parsing.
const std::map<std::string, TopRule>& TopRulesByName();

struct SelectOptions {
  int p2p = 5;      // P2P files drawn, at most
  // Fewest P2P files a task may have (FeatureBench's min_p2p_files): top objects are demoted,
  // most widely used first, only while fewer eligible files remain.
  int min_p2p = 1;
  int min_cap = 3000;
  int max_cap = 5000;
  uint64_t seed = 42;
  double max_share = 0.25;  // a top object is reached by at most this share of test files
  // A helper more than this share of the test files reach stays whatever P2P files were
  // drawn (0, the default: none does; FeatureBench lets the P2P runs alone decide).
  double keep_share = 0;
  // P2P files sharing the fewest reached entities with the F2P file first (ties by the
  // seeded shuffle) instead of a plain seeded random choice: more code can be cut.
  bool least_overlap = false;
  // FeatureBench's choice: a seeded random sample of the eligible files wherever they are
  // (default: the F2P file's own directory first).
  bool p2p_anywhere = false;
  // How the deterministic default picks top objects (see ChooseTopObjects).
  TopRule chooser = TopRule::kSpecific;
  // The model of TopRule::kLearned (null: DefaultTopModel(), the one fbkit ships).
  std::shared_ptr<const TopModel> model;
  // TopRule::kLearned also takes this many of its next-best items beyond the model's own
  // choice (the retry when that choice leaves too little to cut).
  int learned_more = 0;
  // Classes chosen through their specific methods become top objects whole (the retry when
  // the methods alone leave fewer lines than --min-lines).
  bool whole_classes = false;
  // How many calls deep through library code candidates are looked for (FeatureBench's
  // classifier sees the objects the tests reach up to five calls deep).
  int depth = 5;
  // The default chooser also takes the specific objects found deeper than the test file's
  // own links (the retry when the direct choice leaves too few lines or nothing to cut: the
  // feature is reached through the application).
  bool deep = false;
  // Objects a package's __init__.py defines (not those it re-exports: only definitions are
  // entities) may be top objects of a test file that links to no object defined elsewhere
  // (else FeatureBench's choice stands), and then the extraction follows into __init__.py
  // files. FeatureBench's classifier never takes them: PackageInitTops says when this holds.
  bool package_init = true;
  // Of the deeper candidates, those used by at most this many times as many test files as
  // the most specific of them are weighed (never more than max_share); the deep retry
  // doubles it while its choice still leaves too little to cut.
  int deep_width = 2;
};

struct TopCandidate {
  Ent entity = 0;
  int64_t calls = 0;  // direct calls and static links from the test file into it
  size_t spread = 0;  // test files that reach it
  int lines = 0;
  // 1: the test file links to it; k > 1: first reached k calls deep, through library code,
  // in the test file's run.
  int depth = 1;
  // A class's methods (its own body's) that the test file's run reaches: what a model may
  // choose instead of the class whole, as FeatureBench's classifier chooses methods.
  std::vector<Ent> members;
};

// Why the default chooser took or left a candidate (for `fb-extract plan`).
struct TopChoice {
  Ent entity = 0;  // the candidate (a top-level function or class)
  bool chosen = false;
  std::vector<Ent> members;  // chosen members of a shared class
  std::string why;
};

// The deterministic default (SelectOptions::chooser "specific"): which candidates the test
// file tests. "Test functions" are test* functions and test* methods of Test* classes, their
// own bodies only (code nested in them builds inputs). With N test files and
// limit = max(1, max_share * N):
//   - private objects (a leading underscore, but no dunder: a module's `__dir__` is what
//     `dir()` calls) the file does not name never: they are reached through the public API;
//   - objects the file neither names nor calls from its test functions never (fixtures,
//     helpers), nor those its test functions neither call nor name (used only in fixtures,
//     parametrize lists or code nested in tests);
//   - exception classes (named *Error, *Exception, *Warning or with such a base) only when
//     the tests call their own methods, or when they belong to the module the file is named
//     after (test_metadata.py: metadata.py): tests raise and catch them;
//   - a function or class used by at most `limit` test files is chosen;
//   - a function used by more files is chosen when this file's test functions are the only
//     ones that call it directly;
//   - a class used by more files is chosen through its methods: the public, non-dunder,
//     non-property methods that this file's test functions call directly and whose direct
//     test calls come at least half from this file, and those this file reaches, at most one
//     other file reaches and no other file's tests call directly; those methods become the
//     top objects and the class stays (its other members through the P2P rule);
//   - a public object of the module the file is named after is chosen (its subject);
//   - an object whose direct test calls (its members included) come at least half from this
//     file's test functions is chosen: this is the file where it is tested;
//   - anything else is a utility.
// Candidates deeper than the file's own links (depth > 1) are chosen only with
// SelectOptions::deep, and only the most specific: with `fewest` the smallest spread among
// them, deep_limit = min(limit, max(2, 2 * fewest)); a function or class used by at most
// deep_limit files (exception classes and builders of inputs never), a shared class through
// its non-dunder methods that this file reaches, at most deep_limit files reach and no
// other file's tests call directly; and,
// as FeatureBench's classifier does not look below what it chose, only those the run reaches
// by a path through no other chosen object.
// "share" (fbkit's rule before): every candidate used by at most `limit` test files.
// "learned": each item (TopItems) whose probability under the model is at or above its
// threshold, at most its max_items, best first (the best item when none is); a class through
// its chosen members, else whole when its own item is chosen; whatever the depth. With
// `learned_more`, up to that many of the next best items too, past max_items and the
// threshold, each one that widens the choice.
// When nothing is chosen the caller takes the most specific candidate.
std::vector<TopChoice> ChooseTopObjects(const Repo& repo, const graph::DepGraph& g,
                                        const std::string& f2p,
                                        const std::vector<TopCandidate>& candidates,
                                        const SelectOptions& options);

// The top objects the deep choice (SelectOptions::deep) takes below test file `f2p`'s own
// links: the chosen candidates its run reaches 2 to `options.depth` calls deep, a shared
// class through its methods. Empty with depth 1.
std::vector<Ent> DeepTopObjects(const Repo& repo, const graph::DepGraph& g, const std::string& f2p,
                                const SelectOptions& options);

// The facts the learned chooser weighs about one candidate or member, by name: the order of
// TopItem::facts (docs/top-objects.md says what each means).
const std::vector<std::string>& TopFactNames();

// One thing a test file's top-object choice can take: a function or class candidate, or a
// method of a class candidate that the file's run reaches (`member`).
struct TopItem {
  Ent entity = 0;
  size_t candidate = 0;  // its candidate's index
  bool member = false;
  std::vector<double> facts;  // TopFactNames' order
};

// The items of test file `f2p`'s candidates, each with its facts: each candidate, then its
// members, in the candidates' order.
std::vector<TopItem> TopItems(const Repo& repo, const graph::DepGraph& g, const std::string& f2p,
                              const std::vector<TopCandidate>& candidates,
                              const SelectOptions& options);

// Picks the top-level objects among candidates (may be replaced by a model's choice); `items`
// are the candidates' TopItems, whose facts a model is shown.
using TopChooser = std::function<util::Expected<std::vector<Ent>>(
    const std::string& f2p, const std::vector<TopCandidate>& candidates,
    const std::vector<TopItem>& items)>;

struct Plan {
  std::string f2p;
  std::vector<std::string> f2p_tests;
  std::vector<Ent> top_objects;     // most specific first
  bool member_tops = false;         // some are methods chosen for their class
  std::vector<Ent> demoted;         // top objects given up to find P2P files
  std::vector<std::string> p2p;     // test files, sorted
  std::set<Ent> extracted;          // nested ones included
  std::set<Ent> kept;               // entities that must stay (code that stays uses them)
  // Extracted objects that stand for a top object that stays (a function code that stays
  // names, e.g. in a registry filled at import time): the first removed ones below it.
  std::set<Ent> stand_ins;
  int cap = 0;
  bool capped = false;
  // A helper (anything but a top object) that more test files than this reach stays, as a
  // utility of the suite (0: no limit). PlanTask sets it from SelectOptions::keep_share.
  size_t utility_limit = 0;
  // The extraction follows into __init__.py files (PlanTask: PackageInitTops of the options,
  // and a top object defined in one).
  bool package_init = false;
};

// Whether objects an __init__.py defines are candidates and extracted: the option, but never
// under --top-chooser featurebench (FeatureBench's classifier).
bool PackageInitTops(const SelectOptions& options);

// A seed for one task: the run's seed mixed with the test file's path.
uint64_t TaskSeed(uint64_t seed, const std::string& f2p);

// max(1, share * N) for the N test files of the graph: the most test files a top object may
// reach (share: --max-share), and those a helper may reach before it stays (--keep-share).
size_t ShareLimit(const graph::DepGraph& g, double share);

// Whether a function of `path` is one of the library's test helpers for the test file
// `f2p`: `path` is in a module or package named `testing` or `_testing` (the checks and
// context managers tests wrap around the code: sphinx.testing's assert_node, seaborn's
// _testing.assert_colors_equal, sympy.testing's warns) and `f2p` does not test it (it lies
// inside that package, or is named after it, as test_testing.py). Such a function is never a
// top object; FeatureBench's model is told the same. Classes of such modules are machinery
// that can be a feature (click.testing's stream wrappers) and are weighed as any other.
bool IsTestSupport(std::string_view path, std::string_view f2p);

// Whether `v` is a function of the library's testing module that `f2p` does not test
// (IsTestSupport).
bool IsTestHelper(const Repo& repo, const graph::DepGraph& g, Ent v, std::string_view f2p);

// The candidates a test file could test: repository objects (module-level functions and
// classes outside test code; those a package's __init__.py defines only with `package_init`
// and when no object defined elsewhere is a direct candidate) it links to and reaches (depth
// 1), then with depth > 1 those its run reaches at most `depth` calls deep through library
// code; each group most specific (fewest test files) first.
std::vector<TopCandidate> TopCandidates(const Repo& repo, const graph::DepGraph& g,
                                        const std::string& f2p, int depth = 1,
                                        bool package_init = true);

// What FeatureBench's masking never removes from the files the `p2p` runs import (their
// module bodies ran, by the trace; a plan starts with them kept): names the file's own
// `__all__` lists; the container protocol (`__len__`, `__iter__`, `__getitem__`,
// `__setitem__`, `__delitem__`), whose loss changes behaviour without an error; every def
// whose name the file reads when it is imported (module-level and class-level code, bases,
// decorators such as `@x.setter`, default values); and the methods of a class whose body ran
// and whose chain of bases leaves its file (a builtin, a third-party or another module's
// class), which cannot be told apart from what the base needs. A class defined where the
// import never went (an `except NameError:` fallback) keeps nothing. A kept top object
// stays, but what it calls for this test file may go.
std::set<Ent> ImportTimeKept(const Repo& repo, const graph::DepGraph& g,
                             const std::vector<std::string>& p2p);

// Steps 2-4 for one F2P file. Fails with the reason when no task can be planned.
util::Expected<Plan> PlanTask(const Repo& repo, const graph::DepGraph& g,
                              const std::vector<PassingFile>& passing, const PassingFile& f2p,
                              const SelectOptions& options, const TopChooser& chooser);

// Step 4 again after a cut found entities that must stay (`plan->kept`): a kept function
// stays whole; a kept class stays as a shell whose members are weighed one by one like those
// of a class the P2P files use, and so does a class whose constructor or checks
// (IsBuildOrCheck) more than two test files reach (their constructor and checks stay). Fails
// when nothing can be extracted any more.
util::Status Reextract(const Repo& repo, const graph::DepGraph& g, Plan* plan);

// The interfaces a task shows (FeatureBench's top objects as its statement shows them): the
// extracted objects the test code calls in the F2P file's run — its test functions, and
// through its helpers, fixtures and conftests (at most `depth` calls deep) — plus top
// objects that are functions or methods (FeatureBench shows every top object it removed,
// however deep). Extracted code reached only through other extracted code or
// through library code that stays is not shown (FeatureBench's model stops at the library
// objects the tests call, and shows the removed ones): functions, classes (no method
// reached), methods.
std::set<Ent> Interfaces(const Repo& repo, const graph::DepGraph& g, const std::string& f2p,
                         const std::vector<Ent>& tops, const std::set<Ent>& extracted,
                         int depth = 5);

// The functions and methods that the given test files execute, per the trace.
std::set<Ent> ExecutedBy(const graph::DepGraph& g, const std::vector<std::string>& files);

// Lines of the extracted entities, each line counted once.
int ExtractedLines(const Repo& repo, const std::set<Ent>& extracted);

}  // namespace fbkit::extract::make

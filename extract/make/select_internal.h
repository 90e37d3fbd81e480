// The helpers extract/make's selection shares between its files (select.cc: the passing
// files, the top-object rule; walk.cc: the extraction walk; p2p.cc: the P2P draw;
// top_facts.cc: the facts of a top-object item and the learned choice). Not part of the
// module's interface.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "extract/make/select.h"
#include "util/random.h"

namespace fbkit::extract::make {

// How test functions use the repository: who calls what directly, and what this file's test
// functions exercise.
struct TestUse {
  // top-level object -> test file -> calls from that file's test functions into it or its
  // members (call counts)
  std::map<uint32_t, std::map<uint32_t, int64_t>> calls;
  std::map<uint32_t, std::map<uint32_t, int64_t>> entity_calls;  // the same per entity
  std::set<uint32_t> exercised;  // top-level objects this file's tests call or name
  std::map<uint32_t, std::set<uint32_t>> callers;   // top-level object -> this file's test
                                                    // functions that call it directly
  std::map<uint32_t, std::set<uint32_t>> named_by;  // top-level object -> this file's test
                                                    // functions that name it
  std::map<uint32_t, std::set<uint32_t>> callees;   // this file's test function -> entities
                                                    // it calls directly
};

std::optional<uint32_t> TestFileIndex(const graph::DepGraph& g, const std::string& file);

// Whether node n's runs include test file t's.
bool Reaches(const graph::Node& n, uint32_t t);

// The test files that use an entity: those that reach it, or for a class, any of its members
// (its body runs at import time for every file that imports its module: no use of it).
std::set<uint32_t> UsedBy(const graph::DepGraph& g, const Repo& repo, Ent v);

// The passing files that share no top object (p2p.cc), demoting the most widely used top
// objects until there are `options.min_p2p` (or one is left).
std::vector<std::string> P2PCandidates(const Repo& repo, const graph::DepGraph& g,
                                       const std::vector<PassingFile>& passing,
                                       const SelectOptions& options, Plan* plan);

// Step 3 (p2p.cc): `options.p2p` files of the pool (all when fewer), in the seeded order (then
// those beside the F2P file first, or those sharing the fewest entities with it), sorted.
std::vector<std::string> DrawP2P(const graph::DepGraph& g, uint32_t t, const std::string& f2p,
                                 std::vector<std::string> pool, const SelectOptions& options,
                                 util::Rng& rng);

int Lines(const graph::Node& n);

// Test files beyond this many that reach a member make it shared: a method of a shared class
// is specific to a file only when at most this many reach it, and a constructor or check
// (IsBuildOrCheck) more reach is how those files build and check their inputs.
inline constexpr size_t kReachLimit = 2;

// The out-edges of v (edges are sorted by from).
std::pair<const graph::Edge*, const graph::Edge*> OutEdges(const graph::DepGraph& g, uint32_t v);

// The graph's test files, as a set.
std::set<std::string> TestFileSet(const graph::DepGraph& g);

// A method named `name` of class `cls` overrides an abstract method (an `abstractmethod`
// decorator) of one of its repository bases: without it the class could not be instantiated.
bool ImplementsAbstract(const Repo& repo, const graph::DepGraph& g, Ent cls, const std::string& name);

// Whether any of `files` (test file indices) ran entity v, by the trace: for a module or a
// class, that its body ran (the module was imported, in collection or later).
bool RanIn(const graph::DepGraph& g, Ent v, const std::set<uint32_t>& files);

// The extraction walk (walk.cc, FeatureBench step 6): from `plan`'s top objects, breadth first
// over what F2P file t's run called, into plan->extracted and plan->stand_ins (plan->capped
// when its line cap stopped it); what P2P files `p2p` reach, `plan->kept` and shared builders
// stay.
void WalkFromTops(const graph::DepGraph& g, const Repo& repo, uint32_t t,
                  const std::set<uint32_t>& p2p, Plan* plan);

// Code a package's __init__.py defines: under FeatureBench's rule (!package_init) never a top
// object, never extracted, and nothing is followed through it (its classifier: neither top
// nor specific, so it stays).
bool InPackageInit(const graph::Node& n);

bool IsDunder(const std::string& name);

// Members through which tests build inputs and check results rather than test a class.
bool IsBuildOrCheck(const std::string& name);

// A test function as pytest collects them by default: test* at module level, or a test*
// method of a module-level Test* class.
bool IsTestFunction(const Repo& repo, Ent v);

// Collects TestUse for test file t: edges whose source is testing code (TestingCode).
TestUse CollectTestUse(const Repo& repo, const graph::DepGraph& g, uint32_t t);

// The share of all test functions' direct calls into v (counted per call) that come from
// test file t; 0 when no test calls it directly.
double CallShare(const std::map<uint32_t, std::map<uint32_t, int64_t>>& calls, uint32_t v,
                 uint32_t t);

// Test files whose test functions call v (a top-level object, its members included) directly.
size_t CallingFiles(const TestUse& use, uint32_t v);

// The module a test file is named after: tests/test_markers.py -> "markers"; the module of
// src/pkg/_markers.py -> "markers" (leading underscores and a plural s ignored).
std::string ModuleWord(std::string_view path, bool test_file);

// An exception class: named like one, or with such a base in the repository (transitively:
// click's MissingParameter -> BadParameter -> UsageError -> ClickException(Exception)).
bool IsExceptionClass(const Repo& repo, const graph::DepGraph& g, Ent v);

// What test file `f2p` names (imports, dotted uses), as top-level objects.
std::set<Ent> NamedBy(const Repo& repo, const graph::DepGraph& g, const std::string& f2p);

// Whether test file t's test functions call v directly.
bool CalledBy(const TestUse& use, Ent v, std::optional<uint32_t> t);

// TopRule::kLearned: the items at or above the model's threshold, and `learned_more` next
// best ones (select.h ChooseTopObjects says how).
std::vector<TopChoice> ChooseLearned(const Repo& repo, const graph::DepGraph& g,
                                     const std::string& f2p,
                                     const std::vector<TopCandidate>& candidates,
                                     const SelectOptions& options);

}  // namespace fbkit::extract::make

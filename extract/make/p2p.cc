// The P2P draw (select.h's step 3): the passing files that share no top object, the top
// objects demoted until there are enough of them, and the seeded choice among them.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "extract/make/select_internal.h"
#include "util/random.h"

namespace fbkit::extract::make {

using graph::DepGraph;
using parser::EntityKind;

namespace {

// Passing test files (other than the F2P file) that use none of the top objects.
std::vector<std::string> P2PPool(const DepGraph& g, const std::vector<PassingFile>& passing,
                                 const std::string& f2p, const std::vector<Ent>& tops,
                                 const std::map<Ent, std::set<uint32_t>>& users) {
  std::set<uint32_t> reaching;
  for (Ent v : tops) reaching.insert(users.at(v).begin(), users.at(v).end());
  std::vector<std::string> pool;
  for (const auto& p : passing) {
    if (p.file == f2p) continue;
    auto t = TestFileIndex(g, p.file);
    if (t && !reaching.count(*t)) pool.push_back(p.file);
  }
  return pool;
}

}  // namespace

// The passing files that share no top object, demoting the most widely used top objects
// until there are `options.min_p2p` (or one is left).
std::vector<std::string> P2PCandidates(const Repo& repo, const DepGraph& g,
                                       const std::vector<PassingFile>& passing,
                                       const SelectOptions& options, Plan* plan) {
  std::map<Ent, std::set<uint32_t>> users;  // top object -> test files using it
  for (Ent v : plan->top_objects) users[v] = UsedBy(g, repo, v);
  for (;;) {
    auto pool = P2PPool(g, passing, plan->f2p, plan->top_objects, users);
    if (pool.size() >= static_cast<size_t>(options.min_p2p) || plan->top_objects.size() <= 1) {
      return pool;
    }
    auto widest = std::max_element(plan->top_objects.begin(), plan->top_objects.end(),
                                   [&](Ent a, Ent b) {
                                     size_t sa = users[a].size(), sb = users[b].size();
                                     return sa != sb ? sa < sb : repo.id(a) < repo.id(b);
                                   });
    plan->demoted.push_back(*widest);
    plan->top_objects.erase(widest);
  }
}

// Step 3: `options.p2p` files of the pool (all when fewer), in the seeded order (then those
// beside the F2P file first, or those sharing the fewest entities with it), sorted.
std::vector<std::string> DrawP2P(const DepGraph& g, uint32_t t, const std::string& f2p,
                                 std::vector<std::string> pool, const SelectOptions& options,
                                 util::Rng& rng) {
  for (size_t i = pool.size(); i > 1; --i) std::swap(pool[i - 1], pool[rng.Below(i)]);
  if (options.p2p_anywhere) {
    // FeatureBench's plain seeded random choice.
  } else if (!options.least_overlap) {
    // Test files beside the F2P file first (its own test package): they run the code around
    // the feature, which then stays; the seeded order holds within each group.
    auto dir = [](const std::string& path) { return path.substr(0, path.rfind('/') + 1); };
    std::stable_partition(pool.begin(), pool.end(),
                          [&](const std::string& p) { return dir(p) == dir(f2p); });
  } else {
    std::map<uint32_t, size_t> overlap;  // test file -> entities it shares with the F2P file
    for (const auto& n : g.nodes()) {
      if (n.kind == EntityKind::kModule || !Reaches(n, t)) continue;
      for (uint32_t f : n.test_files) overlap[f]++;
    }
    std::stable_sort(pool.begin(), pool.end(), [&](const std::string& a, const std::string& b) {
      return overlap[*TestFileIndex(g, a)] < overlap[*TestFileIndex(g, b)];
    });
  }
  pool.resize(std::min(pool.size(), static_cast<size_t>(options.p2p)));
  std::sort(pool.begin(), pool.end());
  return pool;
}

}  // namespace fbkit::extract::make

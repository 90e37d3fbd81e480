// The extraction walk (FeatureBench step 6): from a plan's top objects, breadth first over
// the calls the F2P file's run made, what goes with them and what stays.
#include <algorithm>
#include <deque>

#include "extract/make/select_internal.h"
#include "extract/taskdir/task_dir.h"

namespace fbkit::extract::make {

using graph::DepGraph;
using graph::Edge;
using graph::EdgeKind;
using parser::EntityKind;

namespace {

// BFS over the graph from the top objects (FeatureBench step 6).
class Extractor {
 public:
  Extractor(const DepGraph& g, const Repo& repo, uint32_t t, const std::set<uint32_t>& p2p,
            const std::set<Ent>& kept, int cap, size_t utility_limit, bool package_init)
      : g_(g), repo_(repo), t_(t), p2p_(p2p), kept_(kept), cap_(cap),
        utility_limit_(utility_limit), package_init_(package_init), tests_(TestFileSet(g)) {}

  void Run(const std::vector<Ent>& tops, Plan* plan) {
    std::deque<Item> queue;
    for (Ent v : tops) queue.push_back({v, false, false});
    const std::set<Ent> top_set(tops.begin(), tops.end());
    std::set<Ent> seen;
    while (!queue.empty()) {
      auto [v, inside, stands_in] = queue.front();
      queue.pop_front();
      if (!seen.insert(v).second) continue;
      const graph::Node& n = g_.nodes()[v];
      if (n.kind == EntityKind::kModule || (!inside && !Cuttable(v))) continue;
      if (!inside && taskdir::IsTestCode(n.path, tests_)) continue;  // callbacks the tests pass
      if (!inside && !package_init_ && InPackageInit(n)) continue;
      // A class whose constructor or checks other test files use stays as a shell: only
      // its members go (FeatureBench removes methods, and leaves how others build inputs).
      bool shell = n.kind == EntityKind::kClass && HasSharedBuilder(v);
      if (!inside && (shell || ReachedByP2P(v) || kept_.count(v) || SharedBuilder(v) ||
                      (!top_set.count(v) && Utility(n)))) {
        if (n.kind == EntityKind::kClass) Children(v, false, &queue);
        // A function that stays only because code that stays names it (a registry filled
        // at import time, an import by name) and that no P2P file runs: what it calls
        // for this test file may still go (FeatureBench lets code no P2P test runs name
        // what is removed).
        if (n.kind != EntityKind::kClass && kept_.count(v) && !ReachedByP2P(v) &&
            !Utility(n)) {
          Follow(v, seen, stands_in || top_set.count(v), &queue);
        }
        continue;
      }
      if (!inside) {
        if (lines_ + Lines(n) > cap_ && !plan->extracted.empty()) {
          plan->capped = true;
          break;
        }
        lines_ += Lines(n);
      }
      plan->extracted.insert(v);
      if (stands_in && !inside) plan->stand_ins.insert(v);
      Children(v, true, &queue);
      Follow(v, seen, false, &queue);
    }
  }

  // A constructor or check (IsBuildOrCheck) more than kReachLimit test files reach.
  bool SharedBuilder(Ent v) const {
    const parser::Entity& e = repo_.entity(v);
    return e.kind == EntityKind::kMethod && IsBuildOrCheck(e.name) &&
           g_.nodes()[v].test_files.size() > kReachLimit;
  }

  bool HasSharedBuilder(Ent cls) const {
    auto members = repo_.Children(cls);
    return std::any_of(members.begin(), members.end(), [&](Ent m) { return SharedBuilder(m); });
  }

  bool Utility(const graph::Node& n) const {
    return utility_limit_ > 0 && n.kind != EntityKind::kClass && n.test_files.size() > utility_limit_;
  }

  // Reached by a P2P file: for a class, through any of its members (a class body runs at
  // import time for every file that imports its module, which is no use of the class).
  bool ReachedByP2P(uint32_t v) {
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    const graph::Node& n = g_.nodes()[v];
    bool reached = n.kind != EntityKind::kClass && RanIn(g_, v, p2p_);
    auto [b, e] = OutEdges(g_, v);
    for (const Edge* x = b; x != e && !reached; ++x) {
      if (x->kind == EdgeKind::kContains) reached = ReachedByP2P(x->to);
    }
    return memo_[v] = reached;
  }

 private:
  struct Item {
    uint32_t node;
    bool inside;     // in an extracted entity
    bool stands_in;  // reached from a top object that stays, through what stays
  };

  // Queues what v calls in the F2P file's run and what it names or inherits that the run
  // reaches.
  void Follow(uint32_t v, const std::set<uint32_t>& seen, bool stands_in,
              std::deque<Item>* queue) {
    auto [b, e] = OutEdges(g_, v);
    for (const Edge* x = b; x != e; ++x) {
      bool follow = x->kind == EdgeKind::kCall
                        ? std::binary_search(x->test_files.begin(), x->test_files.end(), t_)
                        : (x->kind == EdgeKind::kReference || x->kind == EdgeKind::kInherits) &&
                              Reaches(g_.nodes()[x->to], t_);
      if (follow && !seen.count(x->to)) queue->push_back({x->to, false, stands_in});
    }
  }

  void Children(uint32_t v, bool inside, std::deque<Item>* queue) {
    auto [b, e] = OutEdges(g_, v);
    for (const Edge* x = b; x != e; ++x) {
      if (x->kind != EdgeKind::kContains) continue;
      if (inside || Reaches(g_.nodes()[x->to], t_)) queue->push_back({x->to, inside, false});
    }
  }

  // Module-level functions and classes and the members of classes can be cut out; a def
  // nested in a function belongs to that function.
  bool Cuttable(Ent v) const {
    if (repo_.IsTopLevel(v)) return true;
    auto parent = repo_.Parent(v);
    // A class decorator inspects special methods when the module is imported
    // (functools.total_ordering needs an ordering method, dataclass keeps a `__eq__` or
    // `__post_init__` it finds), and a class without its implementation of an abstract
    // method cannot be instantiated: such members go only with the whole class. Other
    // methods of a decorated class go alone, as FeatureBench removes them (seaborn's marks).
    const std::string& name = repo_.entity(v).name;
    return parent && repo_.entity(*parent).kind == EntityKind::kClass &&
           (repo_.entity(*parent).decorators.empty() || !IsDunder(name)) &&
           !ImplementsAbstract(repo_, g_, *parent, name);
  }

  const DepGraph& g_;
  const Repo& repo_;
  uint32_t t_;
  const std::set<uint32_t>& p2p_;
  const std::set<Ent>& kept_;
  int cap_;
  size_t utility_limit_;
  bool package_init_;
  const std::set<std::string> tests_;
  int lines_ = 0;
  std::map<uint32_t, bool> memo_;
};

}  // namespace

void WalkFromTops(const DepGraph& g, const Repo& repo, uint32_t t, const std::set<uint32_t>& p2p,
                  Plan* plan) {
  Extractor(g, repo, t, p2p, plan->kept, plan->cap, plan->utility_limit, plan->package_init)
      .Run(plan->top_objects, plan);
}

}  // namespace fbkit::extract::make

// Cutting extracted entities out of a repository's sources, on bytes: removes each entity
// with its decorators and the comments just above it, drops its names from import lists,
// `__init__` re-exports and `__all__`, gives emptied blocks a `pass` at their own
// indentation, removes imports and constants only the removed code used, and leaves no
// blank-line holes. Before editing it checks statically that no name still in use by code that
// runs becomes undefined (CutRules); when one would, it reports the entities that must stay.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "extract/make/repo.h"
#include "parser/python_parser.h"

namespace fbkit::extract::make {

// What the cut may do to a file.
enum class FilePolicy {
  kEditable,  // library code: rewritten as needed, and checked
  kFrozen,    // test code that must keep working (P2P files, conftest.py): checked, never edited
  kIgnored,   // test code that may break (other test files): neither edited nor checked
};

struct CutResult {
  // Entities that define a name something that stays still uses: they must remain, and the
  // cut be planned again. Nothing else below is filled when this is not empty.
  std::vector<Ent> conflicts;
  std::vector<std::string> reasons;          // one line per conflict, for reports
  std::map<std::string, std::string> texts;  // path -> new source, changed files only
  std::vector<std::string> removed;          // removed entities (outermost only), sorted
  std::vector<std::string> orphans;          // "path: name" imports and constants dropped
  std::vector<std::string> problems;         // "path:line:col: message" parse errors after the cut
  // Uses of removed names left in code that stays but that no P2P test executes
  // ("path:line: qualname uses name"; CutRules::executed), sorted.
  std::vector<std::string> dangling;
};

// Which code that stays may still name what the cut removes.
struct CutRules {
  // The entities the P2P runs execute. A kept function or method outside this
  // set may keep a dangling use of a removed name in its body, as in FeatureBench, where the
  // P2P runs are the judge. Code run at import time (module and class bodies, decorators,
  // signatures: defaults and annotations) and test code always count as executed.
  const std::set<Ent>* executed = nullptr;
  // fbkit's rule before: no name that stays may become undefined anywhere (`executed` unused).
  bool strict = true;
};

// Facts about a repository the cut needs for every task (built once per repository).
class CutIndex {
 public:
  explicit CutIndex(const Repo& repo);
  ~CutIndex();
  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// `extracted`: the entities to remove (their nested entities go with them). `policy`: one
// per repo file. `parser` re-parses changed files to check them.
CutResult PlanCut(const Repo& repo, const CutIndex& index, const std::set<Ent>& extracted,
                  const std::vector<FilePolicy>& policy, parser::PythonParser& parser,
                  const CutRules& rules = {});

}  // namespace fbkit::extract::make

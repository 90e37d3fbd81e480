// Cutting extracted entities out of a repository's sources, on bytes: removes each entity
// with its decorators and the comments just above it, drops its names from import lists,
// `__init__` re-exports and `__all__`, gives emptied blocks a `pass` at their own
// indentation, removes imports and constants only the removed code used, and leaves no
// blank-line holes. Before editing it checks statically that no name still in use becomes
// undefined anywhere; when one would, it reports the entities that must stay instead.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "extract/repo.h"
#include "parser/python_parser.h"

namespace fbkit::extract {

// What the cut may do to a file.
enum class FilePolicy {
  kEditable,  // library code: rewritten as needed, and checked
  kFrozen,    // test code that must keep working (P2P files, conftest.py): checked, never edited
  kIgnored,   // test code that may break (other test files): neither edited nor checked
};

struct CutResult {
  // Entities that define a name something that stays still uses: they must remain, and the
  // cut be planned again. Nothing else below is filled when this is not empty.
  std::vector<std::string> conflicts;
  std::vector<std::string> reasons;          // one line per conflict, for reports
  std::map<std::string, std::string> texts;  // path -> new source, changed files only
  std::vector<std::string> removed;          // removed entities (outermost only), sorted
  std::vector<std::string> orphans;          // "path: name" imports and constants dropped
  std::vector<std::string> problems;         // "path:line:col: message" parse errors after the cut
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

// `extracted`: entity ids to remove (their nested entities go with them). `policy`: one
// per repo file. `parser` re-parses changed files to check them.
CutResult PlanCut(const Repo& repo, const CutIndex& index, const std::set<std::string>& extracted,
                  const std::vector<FilePolicy>& policy, parser::PythonParser& parser);

}  // namespace fbkit::extract

// The problem statement of a task, in FeatureBench's template: a Task section (core
// functionality, features, challenges, notes) and one interface block per top-level object
// with its import path, its exact signature rendered from the source, and its docstring (or
// a description when it has none: a model's (--llm-cmd) or one derived from the code and the
// observed types). Without a model, the title and the core functionality come from what the
// test file exercises (the public names it reads from the package, its own test names),
// never from a private helper, and no bullet only restates a name. At level 2 every name the
// tests read from agent_code gets an interface block with its signature (a class with its
// public and special methods; a module-level value with its assignment).
#pragma once

#include <set>
#include <string>
#include <vector>

#include <functional>

#include "extract/make/repo.h"
#include "tracer/trace.h"
#include "util/expected.h"

namespace fbkit::extract::make {

// Where the words come from that the code does not have. Empty functions: fbkit's own
// (DescribeFromCode; the Task section built from the interfaces).
struct StatementModel {
  // A docstring (text without quotes) for an entity that has none.
  std::function<util::Expected<std::string>(Ent)> docstring;
  // The Task section's statement (title, core functionalities, main features, key
  // challenges) from the interfaces (rendered Python: signatures and docstrings).
  std::function<util::Expected<std::string>(const std::string& interfaces, int level)>
      task_statement;
};

struct StatementInput {
  std::string repo_name;               // "owner/repo"
  std::string f2p;                     // the test file
  std::vector<Ent> tops;               // top-level objects
  std::set<Ent> removed;               // every removed entity (nested ones included)
  // The interfaces to show (Interfaces(): functions, classes, methods in their class's
  // block; shown in the order of their ids); empty: the top objects, a class with all its
  // removed methods.
  std::set<Ent> shown;
  int level = 1;                       // 1: inside the repository; 2: from scratch as agent_code
  std::string package;                 // L2: the original top-level package agent_code replaces
  std::vector<std::string> test_uses;  // L2: what the tests read from agent_code
  const StatementModel* model = nullptr;  // nullptr: fbkit's own words
  // The trace: the types observed while the F2P file's tests ran (else while other test
  // files' did) are shown in fbkit's own docstrings; nullptr: none known.
  const tracer::TraceSet* trace = nullptr;
};

// How the test file imports an entity: "from click.termui import progressbar".
std::string ImportPath(const Repo& repo, const std::string& f2p, Ent entity);

// An error when the model's command fails.
util::Expected<std::string> ProblemStatement(const Repo& repo, const StatementInput& in);

// Docstring text for an entity: its own, else `describe`'s.
using Describe = std::function<util::Expected<std::string>(Ent)>;

// The interface of one entity as Python source: decorators, header, docstring, class-level
// statements, and for a class those of its methods in `members`.
util::Expected<std::string> RenderInterface(const Repo& repo, Ent entity,
                                            const std::set<Ent>& members,
                                            const Describe& describe);

}  // namespace fbkit::extract::make

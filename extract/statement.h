// The problem statement of a task, in FeatureBench's template: a Task section (core
// functionality, features, challenges, notes) and one interface block per top-level object
// with its import path, its exact signature rendered from the source, and its docstring (or
// a summary derived from the code when it has none).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "extract/repo.h"

namespace fbkit::extract {

struct StatementInput {
  std::string repo_name;               // "owner/repo"
  std::string f2p;                     // the test file
  std::vector<std::string> tops;       // top-level objects (entity ids)
  std::set<std::string> removed;       // every removed entity id (nested ones included)
  int level = 1;                       // 1: inside the repository; 2: from scratch as agent_code
  std::string package;                 // L2: the original top-level package agent_code replaces
  std::vector<std::string> test_uses;  // L2: what the tests read from agent_code
};

// How the test file imports an entity: "from click.termui import progressbar".
std::string ImportPath(const Repo& repo, const std::string& f2p, const std::string& id);

std::string ProblemStatement(const Repo& repo, const StatementInput& in);

// The interface of one entity as Python source: decorators, header, docstring, class-level
// statements, and the removed methods of a class.
std::string RenderInterface(const Repo& repo, const std::string& id,
                            const std::set<std::string>& removed);

}  // namespace fbkit::extract

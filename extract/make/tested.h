// What a task's test file exercises of the repository, for the problem statement's title,
// its Task text and the L2 interfaces: the names it reads from the library's package, the
// entities they stand for (through re-exports), and the test file's own test names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extract/make/repo.h"

namespace fbkit::extract::make {

// The dotted names ("pkg.mod.Name") the test file `f2p` reads from `package`'s modules (its
// test modules aside): the names it imports from them and the dotted uses of the modules it
// imports ("pkg.keys.hashkey" for `import pkg.keys` and `pkg.keys.hashkey(1)`); sorted,
// unique. Empty when the file is not in the table.
std::vector<std::string> TestedNames(const Repo& repo, const std::string& f2p,
                                     const std::string& package);

// A name an L2 test reads from agent_code ("from agent_code.keys import hashkey",
// "agent_code.keys.hashkey") as the original dotted name ("pkg.keys.hashkey").
std::string UseAsDotted(const std::string& use, const std::string& package);

// The function, class or method a dotted name stands for ("pkg.Cache", "pkg.Cache.get"),
// following the re-exports of the modules on the way (`from ._cached import cached` in
// pkg/__init__.py); nullopt for a module, a variable or a name defined outside the table.
std::optional<Ent> ResolveDotted(const Repo& repo, std::string_view dotted);

// The module-level assignment statement that defines a dotted name ("pkg.mod.VALUE"), as
// written (at most 300 characters), or nullopt.
std::optional<std::string> AssignmentOf(const Repo& repo, std::string_view dotted);

// The test file's own top-level test classes, else its test functions, in source order, at
// most `max`.
std::vector<std::string> TestFileNames(const Repo& repo, const std::string& f2p, size_t max);

}  // namespace fbkit::extract::make

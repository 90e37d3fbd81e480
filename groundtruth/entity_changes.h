// Entity-level changes between two versions of a set of Python files (RACE's "specific
// tasks"): functions and methods classified new, modified, cosmetic (only whitespace or
// comments differ), deleted or renamed (a deleted and a new entity with the same
// normalised body under the same parent in the same file). Classes are containers: a class
// added or deleted as a whole is reported itself (kind "class") besides its methods.
// Functions nested in functions are part of the enclosing function and not reported.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parser/entity.h"
#include "parser/python_parser.h"
#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::groundtruth {

enum class Change { kNew, kModified, kCosmetic, kDeleted, kRenamed };
const char* ChangeName(Change change);
struct EntityChange {
  std::string entity;  // "path::qualname" (the after version's; the before's if deleted)
  std::string file;
  std::string qualname;
  std::string kind;  // function, method or class
  Change change = Change::kModified;
  std::string old_entity;  // renamed: the before version's id
  int start_line = 0;      // in the after version (the before one if deleted)
  int end_line = 0;
  // Byte spans in each version; -1 where the entity does not exist.
  int64_t before_start = -1, before_end = -1, after_start = -1, after_end = -1;
};

struct FileChange {
  std::string path;
  std::string status;  // new, modified or deleted
  bool python = false;
  std::vector<parser::ParseError> parse_errors;  // of the after version (before if deleted)
};

struct ChangeSet {
  std::vector<FileChange> files;       // sorted by path
  std::vector<EntityChange> entities;  // by file, then line
};

// One file in both versions; nullopt where it does not exist.
struct FileVersions {
  std::string path;
  std::optional<std::string> before;
  std::optional<std::string> after;
};

// Python source with comments, blank lines and insignificant whitespace removed: one line
// per logical line as "<block depth>:<tokens separated by single spaces>". Two codes that
// differ only in whitespace or comments normalise to the same string.
std::string NormalizeCode(std::string_view code);

// The entity changes between the versions of `files` (non-.py files are only listed).
ChangeSet DiffEntities(parser::PythonParser& parser, const std::vector<FileVersions>& files);

// The before and after versions of the files `patch` touches, the before from `commit` of
// the git repository `repo`, the after by applying the patch to them in `work_dir` (a
// scratch directory). Fails when the patch does not parse or apply.
util::Expected<std::vector<FileVersions>> PatchVersions(util::Env& env, sandbox::Launcher& launcher,
                                                        const std::string& repo,
                                                        const std::string& commit,
                                                        const std::string& patch,
                                                        const std::string& work_dir);

// fbkit.race-entities/1: {schema, files: [...], changes: [...]}, keys sorted.
std::string ChangeSetJson(const ChangeSet& set);

}  // namespace fbkit::groundtruth

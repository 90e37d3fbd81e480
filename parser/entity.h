// The entity table of one Python file: what fbkit knows statically about its source.
// Lines are 1-based and inclusive; bytes are 0-based offsets into the file, half-open.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fbkit::parser {

enum class EntityKind { kModule, kClass, kFunction, kMethod };

const char* EntityKindName(EntityKind kind);

struct Entity {
  std::string id;        // "path::qualname", "#2", "#3"... for later definitions of a qualname
  EntityKind kind = EntityKind::kModule;
  std::string name;      // the bare name (for the module: the last part of its dotted name)
  std::string qualname;  // "Outer.method", nested function "f.g", the module "<module>"
  std::string parent;    // the enclosing entity's id; empty for the module
  int start_line = 0;    // first decorator line (= CPython's co_firstlineno)
  int def_line = 0;      // the line of the `def` / `class` keyword
  int end_line = 0;      // last line of the last statement (trailing comments excluded)
  int64_t start_byte = 0;
  int64_t end_byte = 0;
  bool is_async = false;
  std::vector<std::string> decorators;  // decorator expressions, without the '@'
  std::string signature;  // as written: "(a, /, b=1, *, c: int = 2) -> int"; a class's bases
  std::optional<std::string> docstring;
  // Names its code uses (identifiers and dotted attribute chains such as "os.path.join"),
  // sorted and unique; nested defs and classes keep their own. Only collected on request.
  std::vector<std::string> references;
  // Those of `references` read at least once other than as a call's callee (`f` in `x = f`,
  // `{k: f}`, `g(f)`; not in `f()`), sorted. Collected with `references`.
  std::vector<std::string> value_reads;
};

struct ImportName {
  std::string name;  // imported name or dotted module; "*" for a star import
  std::optional<std::string> alias;
  int64_t start_byte = 0;  // span of "name as alias" in the statement
  int64_t end_byte = 0;
};

struct Import {
  int line = 0;
  int end_line = 0;
  int64_t start_byte = 0;  // the whole statement
  int64_t end_byte = 0;
  std::string module;  // "a.b"; "" for `from . import x`
  int level = 0;       // leading dots of a relative import
  bool is_from = false;
  std::vector<ImportName> names;
  std::string scope;  // id of the innermost entity containing the statement
};

// A name bound at module level by an assignment (=, augmented, annotated) statement,
// including statements nested in module-level if/try/with/for/while blocks.
struct Assignment {
  std::string name;
  int line = 0;
  int end_line = 0;
  int64_t start_byte = 0;  // the whole statement
  int64_t end_byte = 0;
  // The statement reads the name it binds (`f = wrap(f)`, `n += 1`): it needs an earlier
  // binding and does not make the name available by itself.
  bool rebinds = false;
};

struct ParseError {
  int line = 0;
  int column = 0;  // 1-based, in bytes
  std::string message;
};

struct FileTable {
  std::string path;    // relative to the root, '/'-separated
  std::string module;  // dotted module name ("pkg.sub.mod"; a package's is its __init__'s)
  std::string sha256;  // of the file's bytes
  std::vector<ParseError> parse_errors;
  std::vector<Entity> entities;  // source order; the module first
  std::vector<Import> imports;   // source order
  std::optional<std::vector<std::string>> all;  // literal __all__, with += / extend / append
  std::vector<Assignment> assignments;
  bool has_references = false;  // entities carry `references`
  // With references: the names the file's code reads when it is imported (the first part of
  // each dotted name), sorted and unique: the values of module- and class-level assignments
  // and expression statements, decorators, and the defaults of methods (class bodies run at
  // import time; function bodies and if/try blocks are not looked into).
  std::vector<std::string> import_time_reads;
};

}  // namespace fbkit::parser

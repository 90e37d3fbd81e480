// Parses one Python file's bytes into its FileTable with tree-sitter. One PythonParser per
// thread; Parse() never fails: syntax problems go to FileTable::parse_errors and whatever
// tree-sitter recovered is still reported.
#pragma once

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "parser/entity.h"
#include "util/expected.h"

namespace fbkit::parser {

class PythonParser {
 public:
  // Fails when the grammar's ABI does not match the tree-sitter runtime.
  static util::Expected<std::unique_ptr<PythonParser>> Create();
  ~PythonParser();
  PythonParser(const PythonParser&) = delete;
  PythonParser& operator=(const PythonParser&) = delete;

  // `path` is the file's root-relative path (it prefixes ids), `module` its dotted name;
  // `references` also collects the names each entity's code uses.
  FileTable Parse(std::string_view path, std::string_view module, std::string_view source,
                  bool references = false);

  // The indented blocks of a file (bodies of def, class, if, for, try, ...): the start of
  // the statement owning the block and the byte spans of its statements' code (comments
  // excluded, also those after a statement's last token), so that a cut can tell when it
  // empties one. A block without statements is text Python rejects, which tree-sitter may
  // parse without an error (a body of comments only).
  struct Block {
    int64_t owner_start = 0;
    std::vector<std::pair<int64_t, int64_t>> statements;
  };
  std::vector<Block> Blocks(std::string_view source);

  // The literal `__all__` statements of a module (`__all__ = [...]`, `(...)`, `'a', 'b'`,
  // sums of such, `+=`), from its syntax tree: where each starts, its value's bytes, whether
  // the value is a tuple without parentheses, and each string's bytes and value.
  struct AllList {
    int64_t statement_start = 0;
    std::pair<int64_t, int64_t> value;
    bool bare = false;
    std::vector<std::pair<std::pair<int64_t, int64_t>, std::string>> entries;
  };
  std::vector<AllList> AllLists(std::string_view source);

  // `source` with the text of every string literal (str and bytes; an f-string's
  // interpolations kept) and every comment blanked to spaces, newlines and offsets kept:
  // what a scan for keywords or names reads is code alone.
  std::string CodeOnly(std::string_view source);

  // The byte spans of the literal text of every str literal (f-strings' text between their
  // interpolations included; bytes literals excluded), in source order; with `bytes`, the
  // spans of the bytes literals instead.
  std::vector<std::pair<int64_t, int64_t>> StringTexts(std::string_view source,
                                                       bool bytes = false);

  struct Impl;

 private:
  explicit PythonParser(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fbkit::parser

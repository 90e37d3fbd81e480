// Parses one Python file's bytes into its FileTable with tree-sitter. One PythonParser per
// thread; Parse() never fails: syntax problems go to FileTable::parse_errors and whatever
// tree-sitter recovered is still reported.
#pragma once

#include <memory>
#include <string_view>

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

  struct Impl;

 private:
  explicit PythonParser(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fbkit::parser

// Finds the Python files of a repository: every *.py under the root, sorted by path, with
// each file's dotted module name (a directory with __init__.py is a package, and so is any
// directory inside a package, as a namespace portion). Skips VCS and cache directories,
// virtualenvs (any directory holding pyvenv.cfg, .venv, .tox, .nox), node_modules and
// paths matching an --exclude glob. Directory symlinks are not followed; file symlinks are read through.
#pragma once

#include <string>
#include <vector>

#include "util/env.h"
#include "util/expected.h"

namespace fbkit::parser {

struct SourceFile {
  std::string path;    // relative to the root, '/'-separated
  std::string module;  // dotted module name
};

struct FileError {
  std::string path;
  std::string message;
};

struct SourceTree {
  std::vector<SourceFile> files;
  std::vector<FileError> errors;  // unreadable directories, dangling symlinks
};

// Fails only if the root itself is not a readable directory.
util::Expected<SourceTree> FindPythonFiles(util::Env& env, const std::string& root,
                                           const std::vector<std::string>& excludes);

// `message` with "ROOT/" removed wherever it occurs, so that errors recorded in outputs
// name root-relative paths and do not depend on where the repository is checked out.
std::string RelativeToRoot(const std::string& message, const std::string& root);

// Whether a root-relative path matches an exclude glob (fnmatch, '*' crosses '/'); a
// pattern without '/' also matches any single path component, as in .gitignore.
bool IsExcluded(const std::string& rel_path, const std::vector<std::string>& excludes);

}  // namespace fbkit::parser

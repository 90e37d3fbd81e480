#include "parser/source_files.h"

#include <fnmatch.h>

#include <algorithm>
#include <optional>
#include <set>

namespace fbkit::parser {
namespace {

const std::set<std::string>& SkippedDirNames() {
  static const std::set<std::string> names = {
      ".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".tox", ".nox",
      ".eggs", ".mypy_cache", ".pytest_cache", ".fbkit-cache"};
  return names;
}

bool HasEntry(const std::vector<util::DirEntry>& entries, const std::string& name) {
  return std::any_of(entries.begin(), entries.end(),
                     [&](const util::DirEntry& e) { return e.name == name; });
}

std::string BaseName(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

class TreeWalker {
 public:
  TreeWalker(util::Env& env, const std::string& root, const std::vector<std::string>& excludes)
      : env_(env), root_(root), excludes_(excludes) {}

  // `rel` is the directory relative to the root ("" for the root); `package` its dotted
  // package name ("" when it is not a package).
  void Walk(const std::string& rel, const std::vector<util::DirEntry>& entries,
            const std::string& package) {
    for (const auto& entry : entries) {
      std::string child = rel.empty() ? entry.name : rel + "/" + entry.name;
      if (IsExcluded(child, excludes_)) continue;
      if (entry.type == util::FileType::kDirectory) {
        WalkDir(child, entry.name, package);
      } else if (entry.name.size() > 3 && entry.name.ends_with(".py")) {
        AddFile(child, entry, package);
      }
    }
  }

  SourceTree Finish() {
    std::sort(tree_.files.begin(), tree_.files.end(),
              [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
    std::sort(tree_.errors.begin(), tree_.errors.end(),
              [](const FileError& a, const FileError& b) { return a.path < b.path; });
    return std::move(tree_);
  }

 private:
  void WalkDir(const std::string& rel, const std::string& name, const std::string& package) {
    if (SkippedDirNames().count(name)) return;
    auto entries = env_.ListDir(util::JoinPath(root_, rel));
    if (!entries.ok()) {
      tree_.errors.push_back(FileError{rel, RelativeToRoot(entries.error(), root_)});
      return;
    }
    if (HasEntry(*entries, "pyvenv.cfg")) return;  // a virtualenv
    // A directory inside a package is part of it even without __init__.py (a namespace
    // portion); elsewhere only __init__.py makes a package.
    bool is_package = HasEntry(*entries, "__init__.py") || !package.empty();
    Walk(rel, *entries, is_package ? (package.empty() ? name : package + "." + name) : "");
  }

  void AddFile(const std::string& rel, const util::DirEntry& entry, const std::string& package) {
    if (entry.type == util::FileType::kSymlink) {
      auto target = env_.Stat(util::JoinPath(root_, rel), /*follow_symlinks=*/true);
      if (!target.ok()) {
        tree_.errors.push_back(
            FileError{rel, "dangling symlink: " + RelativeToRoot(target.error(), root_)});
        return;
      }
      if (target->type != util::FileType::kRegular) return;
      // A link out of the tree is no file of the repository: its target is a host file
      // that fbkit would read, and show in what it writes, on the repository's word.
      if (!InsideRoot(rel)) {
        tree_.errors.push_back(FileError{rel, "a symlink to a file outside the tree: not read"});
        return;
      }
    } else if (entry.type != util::FileType::kRegular) {
      return;
    }
    std::string stem = entry.name.substr(0, entry.name.size() - 3);
    std::string module = stem == "__init__" ? package
                         : package.empty()  ? stem
                                            : package + "." + stem;
    tree_.files.push_back(SourceFile{rel, module.empty() ? stem : module});
  }

  // Whether `rel` resolves to a path inside the root (an unresolvable one is not).
  bool InsideRoot(const std::string& rel) {
    if (!real_root_) {
      auto r = env_.RealPath(root_);
      real_root_ = r.ok() ? *r : "";
    }
    auto real = env_.RealPath(util::JoinPath(root_, rel));
    return !real_root_->empty() && real.ok() &&
           real->starts_with(*real_root_ == "/" ? "/" : *real_root_ + "/");
  }

  util::Env& env_;
  const std::string& root_;
  const std::vector<std::string>& excludes_;
  SourceTree tree_;
  std::optional<std::string> real_root_;
};

}  // namespace

std::string RelativeToRoot(const std::string& message, const std::string& root) {
  std::string prefix = root.ends_with("/") ? root : root + "/";
  std::string out;
  size_t pos = 0;
  for (size_t hit = message.find(prefix); hit != std::string::npos;
       hit = message.find(prefix, pos)) {
    out.append(message, pos, hit - pos);
    pos = hit + prefix.size();
  }
  return out + message.substr(pos);
}

bool IsExcluded(const std::string& rel_path, const std::vector<std::string>& excludes) {
  for (const auto& pattern : excludes) {
    if (fnmatch(pattern.c_str(), rel_path.c_str(), 0) == 0) return true;
    if (pattern.find('/') == std::string::npos &&
        fnmatch(pattern.c_str(), BaseName(rel_path).c_str(), 0) == 0) {
      return true;
    }
  }
  return false;
}

util::Expected<SourceTree> FindPythonFiles(util::Env& env, const std::string& root,
                                           const std::vector<std::string>& excludes) {
  auto info = env.Stat(root, /*follow_symlinks=*/true);
  if (!info.ok()) return info.failure();
  if (info->type != util::FileType::kDirectory) return util::Error{root + ": not a directory"};
  auto entries = env.ListDir(root);
  if (!entries.ok()) return entries.failure();
  TreeWalker walker(env, root, excludes);
  std::string package = HasEntry(*entries, "__init__.py") ? BaseName(root) : "";
  walker.Walk("", *entries, package);
  return walker.Finish();
}

}  // namespace fbkit::parser

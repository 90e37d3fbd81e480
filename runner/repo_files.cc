#include "runner/repo_files.h"

#include <algorithm>
#include <map>
#include <system_error>

#include "util/strings.h"

namespace fbkit::runner {

util::Expected<std::vector<std::string>> ListRepoFiles(util::Env& env, Git& git,
                                                       const std::string& root,
                                                       const std::string& skip_dir,
                                                       bool tracked_only) {
  std::vector<std::string> files;
  std::vector<std::string> args = {"ls-files", "-z", "--cached"};
  if (!tracked_only) args.insert(args.end(), {"--others", "--exclude-standard"});
  auto listed = git.Run(root, args);
  // A checkout git cannot list (its configuration refused, a broken index) is an error: the
  // walk below would take what git leaves out (build trees, environments) without a word.
  if (!listed.ok() && env.Stat(util::JoinPath(root, ".git"), false).ok()) {
    return listed.failure();
  }
  if (listed.ok() && !listed->empty()) {
    for (std::string_view f : util::Records(*listed, '\0')) {
      if (!f.empty()) files.emplace_back(f);
    }
  } else {
    std::vector<std::string> stack = {""};
    while (!stack.empty()) {
      std::string rel = stack.back();
      stack.pop_back();
      auto entries = env.ListDir(util::JoinPath(root, rel));
      if (!entries.ok()) return entries.failure();
      for (const auto& e : *entries) {
        std::string path = rel.empty() ? e.name : rel + "/" + e.name;
        if (e.type == util::FileType::kDirectory) {
          if (e.name != ".git" && e.name != "__pycache__" && e.name != ".pytest_cache" &&
              e.name != ".fbkit-cache") {
            stack.push_back(path);
          }
        } else {
          files.push_back(path);
        }
      }
    }
  }
  std::string prefix =
      skip_dir.starts_with(root + "/") ? skip_dir.substr(root.size() + 1) + "/" : "";
  // Whether a directory of the listing is a real one (no link: a file listed below a link
  // would be read, and copied, from wherever the link points), memoised.
  std::map<std::string, bool> real_dirs;
  auto under_real_dirs = [&](const std::string& f) {
    for (size_t slash = f.find('/'); slash != std::string::npos; slash = f.find('/', slash + 1)) {
      std::string dir = f.substr(0, slash);
      auto [it, fresh] = real_dirs.emplace(dir, false);
      if (fresh) {
        auto st = env.Stat(util::JoinPath(root, dir), false);
        it->second = st.ok() && st->type == util::FileType::kDirectory;
      }
      if (!it->second) return false;
    }
    return true;
  };
  std::vector<std::string> out;
  for (auto& f : files) {
    if (!prefix.empty() && f.starts_with(prefix)) continue;
    if (f.find("__pycache__/") != std::string::npos || !InsideRelative(f)) continue;
    if (!under_real_dirs(f)) continue;
    auto st = env.Stat(util::JoinPath(root, f), false);
    if (!st.ok()) continue;
    // A regular file with other hard links may be any file of the host's (a directory
    // handed over with a link to /etc/shadow): never copied.
    if (st->type == util::FileType::kRegular && st->links > 1) continue;
    if (st->type == util::FileType::kSymlink && !env.Stat(util::JoinPath(root, f), true).ok()) {
      continue;  // a dangling link is not there to read
    }
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool PlainFile(util::Env& env, const std::string& path) {
  auto st = env.Stat(path, false);
  return st.ok() && st->type == util::FileType::kRegular && st->links == 1;
}

bool InsideRelative(std::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  for (size_t b = 0; b <= path.size();) {
    size_t e = std::min(path.find('/', b), path.size());
    std::string_view part = path.substr(b, e - b);
    if (part.empty() || part == "." || part == "..") return false;
    b = e + 1;
  }
  return true;
}

util::Status CopyRepoFiles(util::Env& env, const std::string& root,
                           const std::vector<std::string>& files, const std::string& dest) {
  for (const auto& f : files) {
    if (!InsideRelative(f)) return util::Error{"not a path inside the repository: " + f};
    std::string from = util::JoinPath(root, f), to = util::JoinPath(dest, f);
    if (auto s = env.MakeDirs(util::DirName(to)); !s.ok()) return s;
    if (auto s = env.CopyFile(from, to); !s.ok()) {
      return util::Error{"cannot copy " + from + " to " + to + ": " + s.error()};
    }
  }
  return util::Status::Ok();
}

}  // namespace fbkit::runner

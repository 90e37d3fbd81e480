#include "extract/eval/apply.h"

#include <algorithm>

#include "util/strings.h"

namespace fbkit::extract::eval {

util::Expected<std::vector<std::string>> ChangedPaths(runner::Git& git, const std::string& tree) {
  // Ignored files too: a .gitignore the patch adds must not hide what else it adds.
  auto out = git.Run(tree, {"status", "--porcelain=v1", "-z", "--untracked-files=all",
                            "--ignored=matching", "--no-renames"});
  if (!out.ok()) return util::Error{out.error()};
  std::vector<std::string> paths;
  size_t start = 0;
  while (start < out->size()) {
    size_t end = out->find('\0', start);
    if (end == std::string::npos) end = out->size();
    if (end - start > 3) paths.push_back(out->substr(start + 3, end - start - 3));
    start = end + 1;
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

util::Status RestorePaths(runner::Git& git, const std::string& tree,
                          const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    if (git.Run(tree, {"cat-file", "-e", "HEAD:" + p}).ok()) {
      (void)git.Run(tree, {"reset", "-q", "HEAD", "--", p});
      if (auto r = git.Run(tree, {"checkout", "-q", "HEAD", "--", p}); !r.ok()) {
        return util::Error{r.error()};
      }
    } else {
      // Removed by git (sandboxed where `git` is): the path may lead through a link the
      // patch planted, which a host-side removal would follow.
      (void)git.Run(tree, {"rm", "-q", "--cached", "--ignore-unmatch", "--", p});
      if (auto r = git.Run(tree, {"clean", "-q", "-f", "-d", "-x", "--", p}); !r.ok()) {
        return util::Error{r.error()};
      }
    }
  }
  return util::Status::Ok();
}

}  // namespace fbkit::extract::eval

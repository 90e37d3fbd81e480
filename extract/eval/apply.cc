#include "extract/eval/apply.h"

#include <algorithm>

#include "util/strings.h"

namespace fbkit::extract::eval {

util::Expected<std::vector<std::string>> ChangedPaths(runner::Git& git, const std::string& tree) {
  // Ignored files too: a .gitignore the patch adds must not hide what else it adds.
  auto out = git.Run(tree, {"status", "--porcelain=v1", "-z", "--untracked-files=all",
                            "--ignored=matching", "--no-renames"});
  if (!out.ok()) return out.failure();
  std::vector<std::string> paths;
  for (std::string_view entry : util::Records(*out, '\0')) {  // "XY path"
    if (entry.size() > 3) paths.emplace_back(entry.substr(3));
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
        return r.failure();
      }
    } else {
      // Removed by git (sandboxed where `git` is): the path may lead through a link the
      // patch planted, which a host-side removal would follow.
      (void)git.Run(tree, {"rm", "-q", "--cached", "--ignore-unmatch", "--", p});
      if (auto r = git.Run(tree, {"clean", "-q", "-f", "-d", "-x", "--", p}); !r.ok()) {
        return r.failure();
      }
    }
  }
  return util::Status::Ok();
}

}  // namespace fbkit::extract::eval

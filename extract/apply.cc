#include "extract/apply.h"

#include <algorithm>

#include "util/strings.h"

namespace fbkit::extract {

namespace {

util::Status Reset(tracer::Git& git, const std::string& tree) {
  if (auto r = git.Run(tree, {"reset", "-q", "--hard", "HEAD"}); !r.ok()) return util::Error{r.error()};
  if (auto r = git.Run(tree, {"clean", "-q", "-f", "-d"}); !r.ok()) return util::Error{r.error()};
  return util::Status::Ok();
}

// GNU patch with fuzz; rejects discarded (a partial application counts as a failure).
util::Status FuzzyPatch(util::Env& env, tracer::Launcher& launcher, const std::string& tree,
                        const std::string& file, const std::string& scratch) {
  tracer::ProcessSpec spec;
  spec.argv = {"patch", "--batch", "--forward", "-p1", "--fuzz=3", "--no-backup-if-mismatch",
               "--reject-file=-", "-i", file};
  spec.cwd = tree;
  spec.env = {{"LC_ALL", "C"}};
  spec.log_path = util::JoinPath(scratch, "patch-fuzz.log");
  auto exit = tracer::RunToCompletion(launcher, spec);
  if (!exit.ok()) return util::Error{"patch: " + exit.error()};
  if (exit->code == 0) return util::Status::Ok();
  auto log = env.ReadFile(spec.log_path);
  return util::Error{"patch --fuzz=3: " + util::Tail(log.ok() ? *log : "", 1500)};
}

}  // namespace

std::string NormalizePatch(std::string_view patch) {
  std::string out;
  out.reserve(patch.size() + 1);
  for (size_t i = 0; i < patch.size(); ++i) {
    if (patch[i] == '\r' && i + 1 < patch.size() && patch[i + 1] == '\n') continue;
    out.push_back(patch[i]);
  }
  if (!out.empty() && out.back() != '\n') out.push_back('\n');
  return out;
}

std::string BinaryPatchProblem(std::string_view patch, uint64_t max_bytes) {
  uint64_t total = 0;
  for (size_t b = 0; b < patch.size();) {
    size_t e = patch.find('\n', b);
    if (e == std::string_view::npos) e = patch.size();
    std::string_view line = patch.substr(b, e - b);
    b = e + 1;
    if (line.starts_with("delta ")) {
      return "the patch holds a binary delta, whose output size the patch does not bound "
             "(binary deltas are not applied)";
    }
    if (!line.starts_with("literal ")) continue;
    uint64_t n = 0;
    for (char c : line.substr(8)) {
      if (c < '0' || c > '9' || n > (UINT64_MAX - 9) / 10) break;
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    total += n;
    if (total > max_bytes) {
      return "the patch's binary files inflate to more than " + std::to_string(max_bytes >> 20) +
             " MiB (not applied)";
    }
  }
  return "";
}

ApplyResult ApplyPatch(util::Env& env, tracer::Launcher& launcher, const std::string& tree,
                       std::string_view patch, const std::string& scratch) {
  ApplyResult result;
  if (std::string why = BinaryPatchProblem(patch, kMaxBinaryPatchBytes); !why.empty()) {
    result.error = why;
    return result;
  }
  std::string file = util::JoinPath(scratch, "agent.patch");
  if (auto s = env.WriteFileAtomic(file, NormalizePatch(patch)); !s.ok()) {
    result.error = s.error();
    return result;
  }
  tracer::Git git(env, launcher, scratch);
  struct Attempt {
    std::string method;
    std::vector<std::string> args;
  };
  const std::vector<Attempt> attempts = {
      {"git apply", {"apply", "--whitespace=nowarn", file}},
      {"git apply --3way", {"apply", "--3way", "--whitespace=nowarn", file}},
  };
  for (const auto& a : attempts) {
    auto r = git.Run(tree, a.args);
    if (r.ok()) {
      result.applied = true;
      result.method = a.method;
      return result;
    }
    result.error = r.error();
    if (auto s = Reset(git, tree); !s.ok()) {
      result.error = s.error();
      return result;
    }
  }
  if (FuzzyPatch(env, launcher, tree, file, scratch).ok()) {
    result.applied = true;
    result.method = "patch --fuzz";
    return result;
  }
  (void)Reset(git, tree);
  return result;
}

util::Expected<std::vector<std::string>> ChangedPaths(tracer::Git& git, const std::string& tree) {
  auto out = git.Run(tree, {"status", "--porcelain=v1", "-z", "--untracked-files=all",
                            "--no-renames"});
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

util::Status RestorePaths(util::Env& env, tracer::Git& git, const std::string& tree,
                          const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    if (git.Run(tree, {"cat-file", "-e", "HEAD:" + p}).ok()) {
      (void)git.Run(tree, {"reset", "-q", "HEAD", "--", p});
      if (auto r = git.Run(tree, {"checkout", "-q", "HEAD", "--", p}); !r.ok()) {
        return util::Error{r.error()};
      }
    } else {
      (void)git.Run(tree, {"rm", "-q", "--cached", "--ignore-unmatch", "--", p});
      if (auto s = env.RemoveAll(util::JoinPath(tree, p)); !s.ok()) return s;
    }
  }
  return util::Status::Ok();
}

}  // namespace fbkit::extract

#include "runner/exposure.h"

#include <algorithm>

namespace fbkit::runner {
namespace {


bool UnderAny(const std::string& path, const std::vector<std::string>& dirs) {
  return std::any_of(dirs.begin(), dirs.end(), [&](const std::string& d) { return util::IsUnder(path, d); });
}

// The host trees `sandbox` shows, outermost only.
std::vector<std::string> ShownRoots(const Sandbox& sandbox, const HostInfo& host) {
  std::vector<std::string> roots;
  for (const auto& s : sandbox.whole_system ? host.whole : host.system) {
    if (s.target.empty()) roots.push_back(s.path);
  }
  roots.insert(roots.end(), sandbox.read_only.begin(), sandbox.read_only.end());
  roots.insert(roots.end(), sandbox.writable.begin(), sandbox.writable.end());
  for (const auto& b : sandbox.binds) roots.push_back(b.source);
  std::erase_if(roots, [](const std::string& r) {
    return !r.starts_with("/") || util::IsUnder(r, "/proc") || util::IsUnder(r, "/dev") || util::IsUnder(r, "/sys");
  });
  std::sort(roots.begin(), roots.end());
  std::vector<std::string> outer;
  for (const auto& r : roots) {
    if (outer.empty() || !util::IsUnder(r, outer.back())) outer.push_back(r);
  }
  return outer;
}

class Walk {
 public:
  Walk(util::Env& env, const std::set<std::string>& packages, std::vector<std::string> skip,
       size_t limit)
      : env_(env), packages_(packages), skip_(std::move(skip)), limit_(limit) {}

  void Root(const std::string& root) {
    auto st = env_.Stat(root, false);
    if (!st.ok()) return;
    if (st->type == util::FileType::kRegular) {
      std::string name = root.substr(root.rfind('/') + 1);
      if (name.ends_with(".py") && packages_.count(name.substr(0, name.size() - 3))) {
        Found(name.substr(0, name.size() - 3), root);
      }
      return;
    }
    if (st->type == util::FileType::kDirectory) Dir(root, 0);
  }

  std::vector<ExposedCopy> found() && { return std::move(found_); }

 private:
  void Found(const std::string& package, const std::string& path) {
    if (found_.size() < limit_) found_.push_back({package, path});
  }

  bool HoldsSource(const std::string& dir) {
    auto entries = env_.ListDir(dir);
    if (!entries.ok()) return false;
    return std::any_of(entries->begin(), entries->end(), [](const util::DirEntry& e) {
      return e.type == util::FileType::kRegular && e.name.ends_with(".py");
    });
  }

  void Dir(const std::string& dir, int depth) {
    if (depth > 40 || found_.size() >= limit_ || ++visited_ > kMaxEntries) return;
    if (UnderAny(dir, skip_)) return;
    auto entries = env_.ListDir(dir);
    if (!entries.ok()) return;
    for (const auto& e : *entries) {
      std::string path = util::JoinPath(dir, e.name);
      if (e.type == util::FileType::kDirectory) {
        if (packages_.count(e.name) && !UnderAny(path, skip_) && HoldsSource(path)) {
          Found(e.name, path);
          continue;
        }
        Dir(path, depth + 1);
      } else if (e.type == util::FileType::kRegular && e.name.ends_with(".py") &&
                 packages_.count(e.name.substr(0, e.name.size() - 3)) && !UnderAny(path, skip_)) {
        Found(e.name.substr(0, e.name.size() - 3), path);
      }
    }
  }

  static constexpr size_t kMaxEntries = 2'000'000;  // directories listed, a bound on the walk
  util::Env& env_;
  const std::set<std::string>& packages_;
  std::vector<std::string> skip_;
  size_t limit_;
  size_t visited_ = 0;
  std::vector<ExposedCopy> found_;
};

}  // namespace

util::Expected<CopyPolicy> ParseCopyPolicy(const std::string& name) {
  if (name == "refuse") return CopyPolicy::kRefuse;
  if (name == "hide") return CopyPolicy::kHide;
  if (name == "allow") return CopyPolicy::kAllow;
  return util::Error{"unknown exposed_copies '" + name + "' (use refuse, hide or allow)"};
}

const char* CopyPolicyName(CopyPolicy policy) {
  switch (policy) {
    case CopyPolicy::kHide: return "hide";
    case CopyPolicy::kAllow: return "allow";
    default: return "refuse";
  }
}

std::vector<ExposedCopy> FindCopies(util::Env& env, const Sandbox& sandbox, const HostInfo& host,
                                    const std::set<std::string>& packages,
                                    const std::vector<std::string>& own, size_t limit) {
  if (packages.empty() || sandbox.kind != SandboxKind::kBwrap) return {};
  std::vector<std::string> skip = own;
  skip.insert(skip.end(), sandbox.hidden.begin(), sandbox.hidden.end());
  skip.insert(skip.end(), sandbox.masked.begin(), sandbox.masked.end());
  for (const auto& c : sandbox.copies) skip.push_back(c.source);
  Walk walk(env, packages, skip, limit);
  for (const auto& root : ShownRoots(sandbox, host)) {
    if (!UnderAny(root, skip)) walk.Root(root);
  }
  auto found = std::move(walk).found();
  std::sort(found.begin(), found.end(),
            [](const ExposedCopy& a, const ExposedCopy& b) { return a.path < b.path; });
  return found;
}

util::Expected<std::vector<ExposedCopy>> GuardCopies(util::Env& env, Sandbox* sandbox,
                                                     const HostInfo& host,
                                                     const std::set<std::string>& packages,
                                                     const std::vector<std::string>& own,
                                                     CopyPolicy policy, const std::string& what) {
  auto found = FindCopies(env, *sandbox, host, packages, own);
  if (found.empty() || policy == CopyPolicy::kAllow) return found;
  if (policy == CopyPolicy::kHide) {
    // Masking may uncover nothing new, but a walk cut at its limit may have stopped short.
    for (int round = 0; round < 50 && !found.empty(); ++round) {
      for (const auto& c : found) sandbox->masked.push_back(c.path);
      found = FindCopies(env, *sandbox, host, packages, own);
    }
    if (found.empty()) return std::vector<ExposedCopy>{};
  }
  std::string list;
  for (const auto& c : found) list += (list.empty() ? "" : ", ") + c.path;
  return util::Error{what + ": the sandbox would show a copy of the repository's " +
                     (found.size() == 1 ? "package " : "packages ") + found.front().package +
                     (found.size() == 1 ? "" : ", ...") + " outside its work copy (" + list +
                     "), where the code under test or an agent could read the answer; set "
                     "exposed_copies = \"hide\" in the spec to run with each hidden, or "
                     "\"allow\" to run with them seen (docs/repo-spec.md#exposed-copies)"};
}

}  // namespace fbkit::runner

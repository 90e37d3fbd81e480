#include "sandbox/exposure.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <mutex>

#include "sandbox/sandbox.h"
#include "util/env.h"
#include "util/strings.h"

namespace fbkit::sandbox {
namespace {


bool UnderAny(const std::string& path, const std::vector<std::string>& dirs) {
  return std::any_of(dirs.begin(), dirs.end(), [&](const std::string& d) { return util::IsUnder(path, d); });
}

// A distribution's name as its files spell it either way: lower case, '_' as '-'.
std::string DistName(const std::string& name) {
  std::string out = util::AsciiLower(name);
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

// Where a module file is importable as a top-level module, or a vendored one: a
// site-packages or dist-packages, a lib/pythonX.Y, a vendoring directory. Elsewhere a
// `packaging.py` is some package's own module (pip/_internal/utils/packaging.py).
bool ImportRoot(const std::string& dir) {
  std::string name = dir.substr(dir.rfind('/') + 1);
  for (const char* root : {"site-packages", "dist-packages", "_vendor", "vendor", "vendored",
                           "third_party", "extern", "externals", "lib"}) {
    if (name == root) return true;
  }
  return name.starts_with("python");
}

// The archives a distribution comes in (the code inside), lower case.
constexpr const char* kDistExtensions[] = {".whl", ".egg", ".zip", ".pyz", ".tar.gz", ".tar.bz2", ".tgz"};

// The package of `packages` the regular file `path` is a copy of, or "": a module file of a
// package's name (`shapes.py`, its .pyc, `__pycache__/shapes.cpython-311.pyc`) where it is
// importable as one, or a distribution of it (`Shapes-0.1-py3-none-any.whl`, an .egg, an
// sdist, a zip: any case, '_' or '-'). Both walks, the host's and the image's, ask this.
std::string CopiedPackage(const std::string& path, const std::set<std::string>& packages) {
  std::string name = path.substr(path.rfind('/') + 1);
  std::string dir = path.substr(0, path.rfind('/'));
  for (const char* ext : {".py", ".pyc"}) {
    if (name.ends_with(ext)) {
      std::string stem = name.substr(0, name.size() - std::strlen(ext));
      if (packages.count(stem) && ImportRoot(dir)) return stem;
    }
  }
  if (name.ends_with(".pyc") && dir.ends_with("/__pycache__")) {
    std::string stem = name.substr(0, name.find('.'));
    if (packages.count(stem) && ImportRoot(dir.substr(0, dir.rfind('/')))) return stem;
  }
  std::string lower = DistName(name);
  for (const char* ext : kDistExtensions) {
    if (!lower.ends_with(ext)) continue;
    // The distribution's name ends where its version starts ("-" and a digit).
    size_t version = 0;
    while ((version = lower.find('-', version + 1)) != std::string::npos &&
           !(version + 1 < lower.size() && std::isdigit(static_cast<unsigned char>(lower[version + 1])))) {
    }
    if (version == std::string::npos) return "";
    for (const auto& p : packages) {
      if (DistName(p) == lower.substr(0, version)) return p;
    }
    return "";
  }
  return "";
}

// The host trees `sandbox` shows, as bubblewrap binds them (through links), outermost only.
std::vector<std::string> ShownRoots(util::Env& env, const Sandbox& sandbox, const HostInfo& host) {
  std::vector<std::string> roots;
  for (const auto& s : sandbox.whole_system ? host.whole : host.system) {
    if (s.target.empty()) roots.push_back(s.path);
  }
  roots.insert(roots.end(), sandbox.read_only.begin(), sandbox.read_only.end());
  roots.insert(roots.end(), sandbox.writable.begin(), sandbox.writable.end());
  for (const auto& b : sandbox.binds) roots.push_back(b.source);
  for (auto& r : roots) {
    if (auto real = env.RealPath(r); real.ok()) r = *real;  // a versioned install's `current`
  }
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
      File(root);
      return;
    }
    if (st->type == util::FileType::kDirectory) Dir(root, 0);
  }

  std::vector<ExposedCopy> found() && { return std::move(found_); }
  // Where the walk stopped short (too deep, too many directories): "" when it did not.
  const std::string& cut() const { return cut_; }

 private:
  void Found(const std::string& package, const std::string& path) {
    if (found_.size() < limit_) found_.push_back({package, path});
  }

  // Python source or what it compiles to: a .py or .pyc file, or a __pycache__ directory.
  bool HoldsSource(const std::string& dir) {
    auto entries = env_.ListDir(dir);
    if (!entries.ok()) return false;
    return std::any_of(entries->begin(), entries->end(), [](const util::DirEntry& e) {
      return (e.type == util::FileType::kRegular && (e.name.ends_with(".py") || e.name.ends_with(".pyc"))) ||
             (e.type == util::FileType::kDirectory && e.name == "__pycache__");
    });
  }

  void File(const std::string& path) {
    if (std::string p = CopiedPackage(path, packages_); !p.empty()) Found(p, path);
  }

  void Dir(const std::string& dir, int depth) {
    if (found_.size() >= limit_ || !cut_.empty()) return;
    if (depth > kMaxDepth || ++visited_ > kMaxEntries) {  // fails closed: said, not skipped
      cut_ = dir;
      return;
    }
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
      } else if (e.type == util::FileType::kRegular && !UnderAny(path, skip_)) {
        File(path);
      }
    }
  }

  static constexpr size_t kMaxEntries = 2'000'000;  // directories listed, a bound on the walk
  static constexpr int kMaxDepth = 256;
  std::string cut_;
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
                                    const std::vector<std::string>& own, size_t limit,
                                    std::string* cut) {
  if (cut) cut->clear();
  // A container shows only its bound host paths (VisibleInSandbox); its image is
  // FindCopiesInImage's.
  if (packages.empty() || sandbox.kind == SandboxKind::kNone) return {};
  std::vector<std::string> skip = own;
  skip.insert(skip.end(), sandbox.hidden.begin(), sandbox.hidden.end());
  skip.insert(skip.end(), sandbox.masked.begin(), sandbox.masked.end());
  // A private copy's source is the work copy; its built_dir, the environment's own copy of the
  // tree it was built from (an evaluation's: the task's presolved/, which holds no answer).
  for (const auto& c : sandbox.copies) {
    skip.push_back(c.source);
    if (!c.built_dir.empty()) skip.push_back(c.built_dir);
  }
  Walk walk(env, packages, skip, limit);
  for (const auto& root : ShownRoots(env, sandbox, host)) {
    if (!UnderAny(root, skip)) walk.Root(root);
  }
  if (cut) *cut = walk.cut();
  auto found = std::move(walk).found();
  std::sort(found.begin(), found.end(),
            [](const ExposedCopy& a, const ExposedCopy& b) { return a.path < b.path; });
  return found;
}

util::Expected<std::vector<ExposedCopy>> FindCopiesInImage(Launcher& launcher, const Sandbox& sandbox,
                                                           const std::set<std::string>& packages,
                                                           const std::string& log_dir) {
  if (packages.empty() || sandbox.kind != SandboxKind::kContainer) return std::vector<ExposedCopy>{};
  static std::mutex mu;
  static std::map<std::string, std::vector<ExposedCopy>> cache;
  std::string key = sandbox.container.engine + "\n" + sandbox.container.image;
  for (const auto& p : packages) key += "\n" + p;
  // What the sandbox hides or masks is out of sight (an agent's image's own /testbed).
  std::vector<std::string> unseen = sandbox.hidden;
  unseen.insert(unseen.end(), sandbox.masked.begin(), sandbox.masked.end());
  for (const auto& u : unseen) key += "\n-" + u;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  // What CopiedPackage may take for a copy, and a directory of a package's name: the script
  // lists them, CopiedPackage decides as it does on the host.
  std::string names;
  for (const auto& p : packages) {
    for (const std::string& n : {p, p + ".py", p + ".pyc", p + ".*.pyc"}) {
      names += std::string(names.empty() ? "" : " -o") + " -name " + util::ShellQuote(n);
    }
    std::string dashed = p;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    names += " -o \\( -type f \\( -iname " + util::ShellQuote(p + "-*") + " -o -iname " +
             util::ShellQuote(dashed + "-*") + " \\) \\)";
  }
  std::string prune;
  for (const char* d : {"/proc", "/sys", "/dev", "/tmp", "/var/tmp", "/root", "/home", "/srv", "/mnt",
                        "/media", kImageSource}) {
    prune += std::string(prune.empty() ? "" : " -o") + " -path " + util::ShellQuote(d);
  }
  // A directory counts when it holds Python code, as FindCopies has it, or when it may not be
  // listed (its files' names are the modules' own). A path with a line break in it is named
  // by a line that starts with no '/' (fbkit-line-break), which the reader refuses.
  std::string script = "find / \\(" + prune + " \\) -prune -o \\(" + names + " \\) \\( -path " +
                       util::ShellQuote("*\n*") + " -exec echo fbkit-line-break \\; -o -print \\) | "
                       "while IFS= read -r p; do if [ -d \"$p\" ]; then "
                       "[ -r \"$p\" ] || { echo \"d $p\"; continue; }; "
                       "for f in \"$p\"/*.py \"$p\"/*.pyc \"$p\"/__pycache__; do "
                       "[ -e \"$f\" ] && { echo \"d $p\"; break; }; done; "
                       "else echo \"f $p\"; fi; done; echo fbkit-find-done";
  ProcessSpec spec;
  spec.argv = {sandbox.container.engine, "run", "--rm", "--pull=never", "--network", "none",
               "--user", std::to_string(kSandboxUid) + ":" + std::to_string(kSandboxGid),
               "--read-only", "--log-driver=none", "--entrypoint", "/bin/sh",
               sandbox.container.image, "-c", script};
  // What find says on stderr (a directory it may not read) goes to its own file: written to
  // the same pipe as the list it would split a line of it, and the copy on it be missed.
  spec.log_path = util::JoinPath(log_dir, "image-copies.log");
  spec.err_path = util::JoinPath(log_dir, "image-copies.err");
  auto exit = RunToCompletion(launcher, spec, 600);
  auto log = util::RealEnv().ReadFile(spec.log_path);
  auto err = util::RealEnv().ReadFile(spec.err_path);
  std::string text = log.ok() ? *log : "";
  auto unchecked = [&](const std::string& why) -> util::Error {
    return util::Error{"the image " + sandbox.container.image + " could not be checked for copies "
                       "of the repository's packages: " + why};
  };
  const std::string done = "fbkit-find-done\n";
  if (!exit.ok()) return unchecked(exit.error());
  if (exit->code != 0 || exit->output_cut || !text.ends_with(done)) {
    return unchecked(util::Tail(text + (err.ok() ? *err : ""), 400));
  }
  text.resize(text.size() - done.size());
  std::vector<ExposedCopy> found;
  for (const auto& line : util::Split(text, '\n')) {
    if (line.empty()) continue;
    // Every line is one the script printed: anything else (a path with a line break in it) is
    // a list that cannot be read, and an unread list is no proof of an image without a copy.
    if (line.size() < 3 || (line[0] != 'd' && line[0] != 'f') || line[1] != ' ' || line[2] != '/') {
      return unchecked(line == "f fbkit-line-break"
                           ? "a path of a package's name in it has a line break in it"
                           : "a line of find's list is not one it printed (" + util::Tail(line, 200) + ")");
    }
    std::string path = line.substr(2), base = path.substr(path.rfind('/') + 1);
    if (UnderAny(path, unseen)) continue;
    if (line[0] == 'd') {
      if (packages.count(base)) found.push_back({base, path, true, true});
    } else if (std::string p = CopiedPackage(path, packages); !p.empty()) {
      found.push_back({p, path, true, false});
    }
  }
  std::sort(found.begin(), found.end(),
            [](const ExposedCopy& a, const ExposedCopy& b) { return a.path < b.path; });
  std::lock_guard<std::mutex> lock(mu);
  cache[key] = found;
  return found;
}

util::Expected<std::vector<ExposedCopy>> GuardCopies(util::Env& env, Sandbox* sandbox,
                                                     const HostInfo& host,
                                                     const std::set<std::string>& packages,
                                                     const std::vector<std::string>& own,
                                                     CopyPolicy policy, const std::string& what,
                                                     Launcher* launcher, const std::string& log_dir) {
  std::string cut;
  auto found = FindCopies(env, *sandbox, host, packages, own, 20, &cut);
  if (sandbox->kind == SandboxKind::kContainer) {
    if (launcher == nullptr) return util::Error{what + ": the container's image cannot be checked here"};
    auto inside = FindCopiesInImage(*launcher, *sandbox, packages, log_dir);
    if (!inside.ok()) return util::Error{what + ": " + inside.error()};
    if (policy == CopyPolicy::kHide) {
      for (const auto& c : *inside) (c.directory ? sandbox->hidden : sandbox->masked).push_back(c.path);
    } else {
      found.insert(found.begin(), inside->begin(), inside->end());
    }
  }
  if (policy == CopyPolicy::kAllow) return found;
  if (!cut.empty()) {
    return util::Error{what + ": what the sandbox would show could not be checked for copies of "
                       "the repository's packages to its end (" + cut + " is more than 256 "
                       "levels deep, or past 2,000,000 directories); set exposed_copies = "
                       "\"allow\" to run anyway (docs/repo-spec.md#exposed-copies)"};
  }
  if (found.empty()) return found;
  if (policy == CopyPolicy::kHide) {
    // Masking may uncover nothing new, but a walk cut at its limit may have stopped short.
    for (int round = 0; round < 50 && !found.empty(); ++round) {
      for (const auto& c : found) sandbox->masked.push_back(c.path);
      found = FindCopies(env, *sandbox, host, packages, own, 20, &cut);
    }
    if (found.empty()) return std::vector<ExposedCopy>{};
  }
  std::string list, names;
  std::set<std::string> named;
  for (const auto& c : found) {
    list += (list.empty() ? "" : ", ") + c.path;
    if (named.insert(c.package).second) names += (names.empty() ? "" : ", ") + c.package;
  }
  return util::Error{what + ": the sandbox would show " +
                     (found.size() == 1 ? "a copy" : std::to_string(found.size()) + " copies") +
                     " of the repository's " + (named.size() == 1 ? "package " : "packages ") +
                     names + " outside its work copy (" + list +
                     "), where the code under test or an agent could read the answer; set "
                     "exposed_copies = \"hide\" in the spec to run with each hidden, or "
                     "\"allow\" to run with them seen (docs/repo-spec.md#exposed-copies)"};
}

}  // namespace fbkit::sandbox

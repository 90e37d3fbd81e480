#include "sandbox/sandbox.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "sandbox/process.h"
#include "util/env.h"
#include "util/strings.h"

namespace fbkit::sandbox {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool Under(const std::string& path, const std::string& dir) { return util::IsUnder(path, dir); }

std::string Prefix(const std::string& executable) {
  return util::DirName(util::DirName(executable));
}

}  // namespace

std::string FindProgram(const std::string& name,
                        const std::function<bool(const std::string&)>& accept) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t b = 0, e; b <= dirs.size(); b = e + 1) {
    e = dirs.find(':', b);
    if (e == std::string::npos) e = dirs.size();
    std::string candidate = util::JoinPath(dirs.substr(b, e - b), name);
    if (::access(candidate.c_str(), X_OK) == 0 && (!accept || accept(candidate))) return candidate;
  }
  return "";
}

util::Expected<SandboxKind> ParseSandboxKind(const std::string& name) {
  if (name == "bwrap") return SandboxKind::kBwrap;
  if (name == "none") return SandboxKind::kNone;
  if (name == "container") return SandboxKind::kContainer;
  return util::Error{"unknown sandbox '" + name + "' (use bwrap, container or none)"};
}

const char* SandboxKindName(SandboxKind kind) {
  switch (kind) {
    case SandboxKind::kBwrap: return "bwrap";
    case SandboxKind::kContainer: return "container";
    case SandboxKind::kNone: break;
  }
  return "none";
}

const std::vector<std::string>& SystemPaths() {
  static const std::vector<std::string> paths = {"/usr", "/etc", "/opt", "/sys", "/bin",
                                                 "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
  return paths;
}

std::vector<std::string> SystemView(const std::vector<std::string>& multiarch) {
  std::vector<std::string> view = {
      "/etc", "/sys", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr/bin",
      "/usr/sbin", "/usr/libexec", "/usr/lib64", "/usr/lib32", "/usr/libx32", "/usr/lib/git-core",
      "/usr/lib/locale", "/usr/lib/os-release", "/usr/lib/ssl", "/usr/share/ca-certificates",
      "/usr/share/zoneinfo", "/usr/share/terminfo", "/usr/share/git-core", "/usr/share/misc",
      "/usr/share/file", "/usr/share/i18n", "/usr/local/bin", "/usr/local/share/ca-certificates"};
  for (const auto& m : multiarch) view.push_back("/usr/lib/" + m);
  return view;
}

namespace {

// The /usr/lib/<triplet> directories of this host ("x86_64-linux-gnu"), listed once.
const std::vector<std::string>& HostMultiarch() {
  static const std::vector<std::string> found = [] {
    std::vector<std::string> out;
    auto entries = util::RealEnv().ListDir("/usr/lib");
    if (!entries.ok()) return out;
    for (const auto& e : *entries) {
      if (e.type == util::FileType::kDirectory && e.name.find("-linux-") != std::string::npos) {
        out.push_back(e.name);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }();
  return found;
}

}  // namespace

bool VisibleInSandbox(const Sandbox& sandbox, const std::string& path) {
  auto under_any = [&](const std::vector<std::string>& dirs) {
    return std::any_of(dirs.begin(), dirs.end(), [&](const std::string& d) { return Under(path, d); });
  };
  if (under_any(sandbox.masked)) return false;
  if (under_any(sandbox.read_only) || under_any(sandbox.writable)) return true;
  if (std::any_of(sandbox.binds.begin(), sandbox.binds.end(),
                  [&](const Bind& b) { return Under(path, b.target); }) ||
      std::any_of(sandbox.copies.begin(), sandbox.copies.end(),
                  [&](const PrivateCopy& c) { return Under(path, c.target); })) {
    return true;
  }
  if (Under(path, "/dev") || Under(path, "/proc")) return true;  // its own /dev and /proc
  if (sandbox.kind == SandboxKind::kContainer) return false;     // the image's system
  return under_any(sandbox.whole_system ? SystemPaths() : SystemView(HostMultiarch())) &&
         !under_any(sandbox.hidden);
}

namespace {

// The entries of `paths` that exist on this host: directories, and the links that merge
// /bin or /lib into /usr (recreated as links); other files are bound as they are.
std::vector<SystemPath> Existing(const std::vector<std::string>& paths) {
  std::vector<SystemPath> out;
  for (const auto& p : paths) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) continue;
    SystemPath entry{p, ""};
    if (S_ISLNK(st.st_mode)) {
      char buf[4096];
      ssize_t n = ::readlink(p.c_str(), buf, sizeof buf - 1);
      if (n <= 0) continue;
      entry.target.assign(buf, static_cast<size_t>(n));
    } else if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
      continue;
    }
    out.push_back(entry);
  }
  return out;
}

}  // namespace

HostInfo CurrentHost() {
  HostInfo host;
  host.bwrap = FindProgram("bwrap");
  host.setpriv = FindProgram("setpriv");
  host.tar = FindProgram("tar");
  host.env = FindProgram("env");
  const char* home = std::getenv("HOME");
  host.home = home ? home : "";
  host.root = ::geteuid() == 0;
  host.system = Existing(SystemView(HostMultiarch()));
  host.whole = Existing(SystemPaths());
  return host;
}

namespace {

// A private tmpfs at `dir`, writable by everyone (sticky) and at most `mb` large.
void AddTmpfs(std::vector<std::string>* a, const std::string& dir, int64_t mb) {
  a->insert(a->end(), {"--perms", "1777"});
  if (mb > 0) a->insert(a->end(), {"--size", std::to_string(mb << 20)});
  a->insert(a->end(), {"--tmpfs", dir});
}

// bubblewrap makes the missing parents of a mount point private to root (0700): each is made
// first, readable by all, so the dropped uid can reach what is bound below it.
class Parents {
 public:
  explicit Parents(std::vector<std::string>* a) : a_(a) {}
  // `anywhere`: also when `path` is no host path (a bind's target of its own, /run/fbkit/...).
  void Before(const std::string& path, const std::function<bool(const std::string&)>& system,
              bool anywhere = false) {
    if (!anywhere && !Exists(path)) return;
    for (size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      std::string dir = path.substr(0, slash);
      if (system(dir) || !made_.insert(dir).second) continue;
      bool in_scratch = std::any_of(scratch_.begin(), scratch_.end(),
                                    [&](const std::string& r) { return dir != r && Under(dir, r); });
      a_->insert(a_->end(), {"--perms", in_scratch ? "1777" : "0755", "--dir", dir});
    }
  }
  // `root` is a tmpfs every process may write (/tmp, HOME): the parents made in it stay
  // writable for everyone, sticky (HOME/.cache above a bound environment: tools make their
  // caches beside it).
  void Scratch(const std::string& root) { scratch_.push_back(root); }
  // The directories between `top` and `path` (a mount point below it), made writable for
  // everyone: what a private copy holds there is written into them by the sandbox's user.
  void Open(const std::string& path, const std::string& top) {
    for (size_t slash = path.find('/', top.size() + 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      std::string dir = path.substr(0, slash);
      if (made_.insert(dir).second) a_->insert(a_->end(), {"--perms", "1777", "--dir", dir});
    }
  }

 private:
  std::vector<std::string>* a_;
  std::set<std::string> made_;
  std::vector<std::string> scratch_;
};

void AddNamespaces(std::vector<std::string>* a, const Sandbox& sandbox, const HostInfo& host) {
  if (host.root) {
    // No user namespace: bubblewrap, as root, maps the sandbox's ids onto uid 0, whose
    // file permissions are root's. The command drops to kSandboxUid instead (setpriv).
    a->insert(a->end(), {"--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"});
    if (!sandbox.network) a->push_back("--unshare-net");
    a->insert(a->end(), {"--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"});
  } else {
    a->insert(a->end(), {"--unshare-all", "--unshare-user", "--disable-userns"});
    if (sandbox.network) a->push_back("--share-net");
  }
}

// Where copy `i`'s source is bound read-only inside the sandbox, for the prelude to read.
std::string CopySource(size_t i) { return "/.fbkit-copy/" + std::to_string(i); }

// Whether protected path `p` may be bound from the host: bubblewrap follows links in a
// bind's source, so a repository's `.git -> /` (or a linked directory above a test file)
// would mount the host's files inside. Not a link itself, and, inside a private copy's
// target, still inside it with every link followed. A missing path binds nothing anyway.
bool ProtectsWhatItNames(const Sandbox& sandbox, const std::string& p) {
  util::Env& env = util::RealEnv();
  auto st = env.Stat(p, false);
  if (!st.ok()) return true;
  if (st->type == util::FileType::kSymlink) return false;
  for (const auto& c : sandbox.copies) {
    if (!Under(p, c.target)) continue;
    auto inside = env.RealPath(p), tree = env.RealPath(c.target);
    return inside.ok() && tree.ok() && Under(*inside, *tree);
  }
  return true;
}

// The mount points bubblewrap makes below `target` (protected paths, binds, other trees):
// the prelude leaves them as mounted.
std::vector<std::string> MountsBelow(const Sandbox& sandbox, const std::string& target) {
  std::vector<std::string> below;
  auto add = [&](const std::string& p) {
    if (p != target && Under(p, target)) below.push_back(p);
  };
  for (const auto& p : sandbox.protect) add(p);
  for (const auto& b : sandbox.binds) add(b.target);
  for (const auto& p : sandbox.writable) add(p);
  for (const auto& o : sandbox.overlays) add(o.target);
  for (const auto& c : sandbox.copies) add(c.target);
  return below;
}

// The size of copy `i`'s tmpfs: what its source takes (`copy_bytes[i]`, with some room for
// the tmpfs's own rounding) plus the disk limit.
int64_t CopyTmpfsBytes(const Sandbox& sandbox, const std::vector<int64_t>& copy_bytes, size_t i) {
  int64_t bytes = i < copy_bytes.size() ? copy_bytes[i] : 0;
  return bytes + bytes / 8 + (1 << 20) + std::max<int64_t>(sandbox.limits.disk_mb, 0) * (1 << 20);
}

// Each copy: its source read-only at CopySource(i), and at its target a tmpfs as large as
// the source (with some room for the tmpfs's own rounding) plus the disk limit.
void AddCopies(std::vector<std::string>* a, const Sandbox& sandbox,
               const std::vector<int64_t>& copy_bytes, Parents* parents,
               const std::function<bool(const std::string&)>& system) {
  if (sandbox.copies.empty()) return;
  a->insert(a->end(), {"--perms", "0755", "--dir", "/.fbkit-copy"});
  for (size_t i = 0; i < sandbox.copies.size(); ++i) {
    const PrivateCopy& c = sandbox.copies[i];
    int64_t size = CopyTmpfsBytes(sandbox, copy_bytes, i);
    a->insert(a->end(), {"--ro-bind", c.source, CopySource(i)});
    parents->Before(c.target, system);
    // Sticky, like the directories made for mount points below: what bubblewrap made (the
    // mount points' directories, root's when fbkit is) cannot be renamed away by the tests.
    a->insert(a->end(), {"--perms", "1777", "--size", std::to_string(size), "--tmpfs", c.target});
    for (const auto& m : MountsBelow(sandbox, c.target)) parents->Open(m, c.target);
  }
}

// A find(1) -path pattern matching `path` literally.
std::string FindPattern(const std::string& path) {
  std::string out;
  for (char ch : path) {
    if (ch == '\\' || ch == '*' || ch == '?' || ch == '[') out += '\\';
    out += ch;
  }
  return util::ShellQuote(out);
}

// Whether mount point `m` is a regular file on the host: tar's --skip-old-files leaves it
// (and the directories bubblewrap made for it) as mounted, with nothing to list for it.
bool IsPlainFile(const std::string& m) {
  auto st = util::RealEnv().Stat(m, false);
  return st.ok() && st->type == util::FileType::kRegular;
}

// The shell run first inside the sandbox (as the sandbox's user): fills each copy, every
// stage's failure noted, then runs the command ("$@") in `cwd`. find lists the source's
// entries but the directories mounted below the target (pruned); tar copies what it lists
// and skips what exists already: the files mounted below the target and the directories
// bubblewrap made for mount points (it would change a directory it does not own). So the
// script's length does not grow with the protected files (one argument holds at most
// 128 KiB). An incomplete copy fails with status 125.
std::string CopyPrelude(const Sandbox& sandbox, const HostInfo& host, const std::string& cwd) {
  std::string tar = util::ShellQuote(host.tar.empty() ? "tar" : host.tar);
  std::string failed = "/tmp/.fbkit-copy-failed";
  std::string script;
  for (size_t i = 0; i < sandbox.copies.size(); ++i) {
    const PrivateCopy& c = sandbox.copies[i];
    std::string prune, skip = " \\! -path .";
    for (const auto& m : MountsBelow(sandbox, c.target)) {
      if (IsPlainFile(m)) continue;
      std::string rel = "./" + m.substr(c.target.size() + 1);
      prune += std::string(prune.empty() ? "" : " -o") + " -path " + FindPattern(rel);
    }
    if (!prune.empty()) prune = " \\(" + prune + " \\) -prune -o";
    std::string source = util::ShellQuote(CopySource(i));
    std::string fail = "{ echo " + util::ShellQuote("fbkit: cannot copy " + c.source + " into the sandbox") +
                       " >&2; exit 125; }";
    script += "{ (cd " + source + " && find ." + prune + skip + " -print0) || : > " + failed + "; } | { " +
              tar + " -C " + source + " --null --no-recursion -T - -cf - || : > " + failed + "; } | " +
              tar + " -C " + util::ShellQuote(c.target) + " --skip-old-files -xpf - || " + fail + "\n";
    script += "[ -e " + failed + " ] && " + fail + "\n";
    if (!c.built_files.empty()) {
      std::string files;
      for (const auto& f : c.built_files) files += " " + util::ShellQuote("./" + f);
      script += tar + " -C " + util::ShellQuote(c.built_dir) + " -cf -" + files + " | " + tar +
                " -C " + util::ShellQuote(c.target) + " -xpf - || " + fail + "\n";
    }
    if (!c.built_list.empty()) {
      std::string list = util::ShellQuote(c.built_list);
      script += "if [ -s " + list + " ]; then " + tar + " -C " + util::ShellQuote(c.built_dir) +
                " --verbatim-files-from -T " + list + " -cf - | " + tar + " -C " +
                util::ShellQuote(c.target) + " -xpf - || " + fail + "; fi\n";
    }
  }
  if (!cwd.empty()) script += "cd " + util::ShellQuote(cwd) + " || exit 125\n";
  script += "exec \"$@\"\n";
  return script;
}

// Whether every regular file below directory `dir` (links not followed) is in `set`, and
// nothing below it is anything but a directory, a regular file or a link.
bool AllProtected(util::Env& env, const std::string& dir, const std::set<std::string>& set) {
  auto entries = env.ListDir(dir);
  if (!entries.ok()) return false;
  for (const auto& e : *entries) {
    std::string path = util::JoinPath(dir, e.name);
    if (e.type == util::FileType::kDirectory) {
      if (!AllProtected(env, path, set)) return false;
    } else if (e.type == util::FileType::kRegular ? !set.count(path)
                                                 : e.type != util::FileType::kSymlink) {
      return false;
    }
  }
  return true;
}

// Each of sandbox.protect, unless there are more than kMaxProtectMounts of them (a large
// repository's test-side files, all of them the grader's): then
// directories all of whose regular files are protected are bound whole instead, the
// deepest first, until the mounts fit. Such a directory is read-only as a whole (no new
// file either). Inside a private copy or a writable tree only. bubblewrap's start-up grows
// with the square of its mounts (bench/bench_protect_mounts.py: 0.18 s for 256 files, 2.6 s
// for 1,000, 10 s for 2,000, against 0.008 s for none), and it takes at most 9,000 arguments.
std::vector<std::string> ProtectMounts(const Sandbox& sandbox) {
  constexpr size_t kMaxProtectMounts = 256;
  if (sandbox.protect.size() <= kMaxProtectMounts) return sandbox.protect;
  std::vector<std::string> trees = sandbox.writable;
  for (const auto& c : sandbox.copies) trees.push_back(c.target);
  std::set<std::string> set(sandbox.protect.begin(), sandbox.protect.end());
  std::map<std::string, size_t> count;  // candidate directory -> protected files below
  for (const auto& p : sandbox.protect) {
    for (size_t slash = p.rfind('/'); slash != std::string::npos && slash > 0; slash = p.rfind('/', slash - 1)) {
      std::string dir = p.substr(0, slash);
      if (!std::any_of(trees.begin(), trees.end(), [&](const std::string& t) { return dir != t && Under(dir, t); })) break;
      ++count[dir];
    }
  }
  std::vector<std::string> dirs;
  for (const auto& [dir, n] : count) {
    if (n > 1) dirs.push_back(dir);
  }
  auto depth = [](const std::string& d) { return std::count(d.begin(), d.end(), '/'); };
  std::stable_sort(dirs.begin(), dirs.end(), [&](const std::string& x, const std::string& y) {
    return depth(x) != depth(y) ? depth(x) > depth(y) : count[x] > count[y];
  });
  std::set<std::string> whole;
  size_t mounts = sandbox.protect.size();
  auto covered = [&](const std::string& p) {
    return std::any_of(whole.begin(), whole.end(), [&](const std::string& d) { return Under(p, d); });
  };
  util::Env& env = util::RealEnv();
  for (const auto& dir : dirs) {
    if (mounts <= kMaxProtectMounts) break;
    if (!AllProtected(env, dir, set)) continue;
    size_t before = 0;  // mounts below `dir` now: its files not yet covered, and covered dirs
    for (const auto& p : sandbox.protect) before += Under(p, dir) && !covered(p);
    for (auto it = whole.begin(); it != whole.end();) {
      if (Under(*it, dir)) ++before, it = whole.erase(it);
      else ++it;
    }
    whole.insert(dir);
    mounts = mounts - before + 1;
  }
  std::vector<std::string> out(whole.begin(), whole.end());
  for (const auto& p : sandbox.protect) {
    if (!covered(p)) out.push_back(p);
  }
  return out;
}

std::vector<std::string> BwrapArgsOf(const Sandbox& sandbox, const HostInfo& host,
                                     const std::string& cwd, const std::vector<std::string>& argv,
                                     int seccomp_fd, const std::vector<int64_t>& copy_bytes) {
  std::vector<std::string> a = {host.bwrap, "--die-with-parent", "--new-session"};
  AddNamespaces(&a, sandbox, host);
  if (seccomp_fd >= 0) a.insert(a.end(), {"--seccomp", std::to_string(seccomp_fd)});
  const std::vector<SystemPath>& shown = sandbox.whole_system ? host.whole : host.system;
  auto system = [&](const std::string& p) {
    return std::any_of(shown.begin(), shown.end(),
                       [&](const SystemPath& s) { return s.target.empty() && Under(p, s.path); });
  };
  Parents parents(&a);
  for (const auto& s : shown) {
    if (!s.target.empty()) {
      a.insert(a.end(), {"--symlink", s.target, s.path});
      continue;
    }
    parents.Before(s.path, system);  // /usr, /usr/lib: readable by all, holding nothing else
    a.insert(a.end(), {"--ro-bind", s.path, s.path});
  }
  int64_t tmpfs_mb = sandbox.limits.file_size_mb;
  a.insert(a.end(), {"--dev", "/dev"});
  AddTmpfs(&a, "/dev/shm", tmpfs_mb);
  a.insert(a.end(), {"--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--ro-bind-try",
                     "/proc/sysrq-trigger", "/proc/sysrq-trigger"});
  AddTmpfs(&a, "/tmp", tmpfs_mb);
  AddTmpfs(&a, "/var/tmp", tmpfs_mb);
  parents.Scratch("/tmp");
  parents.Scratch("/var/tmp");
  if (!host.home.empty() && host.home != "/" && host.home != "/tmp" && host.home != "/var/tmp" &&
      !system(host.home)) {
    parents.Before(host.home, system);
    AddTmpfs(&a, host.home, tmpfs_mb);
    parents.Scratch(host.home);
  }
  for (const auto& dir : sandbox.hidden) {
    parents.Before(dir, system);
    // Empty, read-only to everyone and a page large: nothing written there reaches the host's
    // memory (red team: 2 GB written into an unbounded hiding tmpfs as an ordinary user).
    a.insert(a.end(), {"--perms", "0555", "--size", "4096", "--tmpfs", dir});
  }
  AddCopies(&a, sandbox, copy_bytes, &parents, system);
  for (const auto& b : sandbox.binds) {
    parents.Before(b.target, system, true);
    a.insert(a.end(), {b.writable ? "--bind" : "--ro-bind", b.source, b.target});
  }
  if (sandbox.network && Exists("/run/systemd/resolve")) {
    a.insert(a.end(), {"--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve"});
  }
  auto covers_a_bind = [&](const std::string& p) {
    return std::any_of(sandbox.binds.begin(), sandbox.binds.end(),
                       [&](const Bind& b) { return Under(b.target, p); }) ||
           std::any_of(sandbox.copies.begin(), sandbox.copies.end(),
                       [&](const PrivateCopy& c) { return Under(c.target, p); });
  };
  auto in_a_bind = [&](const std::string& p) {
    return std::any_of(sandbox.binds.begin(), sandbox.binds.end(),
                       [&](const Bind& b) { return Under(p, b.target); });
  };
  auto hidden = [&](const std::string& p) {
    return std::any_of(sandbox.hidden.begin(), sandbox.hidden.end(),
                       [&](const std::string& d) { return Under(p, d); });
  };
  auto in_a_copy = [&](const std::string& p) {
    return std::any_of(sandbox.copies.begin(), sandbox.copies.end(),
                       [&](const PrivateCopy& c) { return Under(p, c.target); });
  };
  for (const auto& p : sandbox.read_only) {
    if (covers_a_bind(p) || in_a_copy(p) || (system(p) && !hidden(p) && !in_a_bind(p))) continue;
    parents.Before(p, system);
    a.insert(a.end(), {"--ro-bind-try", p, p});
  }
  for (const auto& p : sandbox.writable) {
    parents.Before(p, system);
    a.insert(a.end(), {"--bind", p, p});
  }
  for (const auto& p : sandbox.protect) {
    if (ProtectsWhatItNames(sandbox, p)) a.insert(a.end(), {"--ro-bind-try", p, p});
  }
  for (const auto& o : sandbox.overlays) a.insert(a.end(), {"--ro-bind", o.source, o.target});
  for (const auto& m : sandbox.masked) {
    struct stat st;
    if (::lstat(m.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) a.insert(a.end(), {"--perms", "0555", "--size", "4096", "--tmpfs", m});
    else a.insert(a.end(), {"--ro-bind", "/dev/null", m});
  }
  if (!cwd.empty() && sandbox.copies.empty()) a.insert(a.end(), {"--chdir", cwd});
  a.push_back("--");
  if (host.root) {
    a.insert(a.end(), {host.setpriv, "--reuid=" + std::to_string(kSandboxUid),
                       "--regid=" + std::to_string(kSandboxGid), "--clear-groups",
                       "--inh-caps=-all", "--"});
  }
  if (!sandbox.copies.empty()) {
    a.insert(a.end(), {"/bin/sh", "-c", CopyPrelude(sandbox, host, cwd), "fbkit-copy"});
  }
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

}  // namespace

std::vector<std::string> BwrapArgs(const Sandbox& sandbox, const HostInfo& host,
                                   const std::string& cwd, const std::vector<std::string>& argv,
                                   int seccomp_fd, const std::vector<int64_t>& copy_bytes) {
  Sandbox mounted = sandbox;
  mounted.protect = ProtectMounts(sandbox);
  return BwrapArgsOf(mounted, host, cwd, argv, seccomp_fd, copy_bytes);
}

namespace {

// Whether the engine's -v and --tmpfs syntax carries `path` as it is.
bool Mountable(const std::string& path) {
  return path.starts_with("/") && path.find_first_of(":,\n") == std::string::npos;
}

// The options of a tmpfs the engine mounts: `bytes` large (0: the engine's default), `mode`.
std::string TmpfsOptions(bool writable, int64_t bytes, const char* mode) {
  // Empty, as bubblewrap's are: podman would copy the image's files at `dir` in.
  std::string o = writable ? "rw,notmpcopyup" : "ro,notmpcopyup";
  if (bytes > 0) o += ",size=" + std::to_string((bytes + 1023) / 1024) + "k";
  return o + ",mode=" + mode;
}

// The container's mounts by destination, a later one in place of an earlier one at the same
// path (as a later bubblewrap mount covers an earlier); the engine mounts parents first.
class ContainerMounts {
 public:
  void Bind(const std::string& source, const std::string& target, bool writable) {
    Check(source);
    Check(target);
    mounts_[target] = {"-v", source + ":" + target + (writable ? ":rw" : ":ro")};
  }
  void Tmpfs(const std::string& target, const std::string& options) {
    Check(target);
    mounts_[target] = {"--tmpfs", target + ":" + options};
  }
  util::Expected<std::vector<std::string>> Args() const {
    if (!bad_.empty()) {
      return util::Error{"a container cannot mount '" + bad_ + "' (a path with ':' or ',' or a newline)"};
    }
    std::vector<std::string> a;
    for (const auto& [target, m] : mounts_) a.insert(a.end(), {m.first, m.second});
    return a;
  }

 private:
  void Check(const std::string& path) {
    if (bad_.empty() && !Mountable(path)) bad_ = path;
  }
  std::map<std::string, std::pair<std::string, std::string>> mounts_;
  std::string bad_;
};

// The engine's resource options for `limits`: memory (no swap beyond it), processes, CPUs
// (0: all the host's but one, at least one) and the largest file.
std::vector<std::string> ContainerLimits(const Limits& limits) {
  std::vector<std::string> a;
  if (limits.memory_mb > 0) {
    a.push_back("--memory=" + std::to_string(limits.memory_mb) + "m");
    a.push_back("--memory-swap=" + std::to_string(limits.memory_mb) + "m");
  }
  if (limits.processes > 0) a.push_back("--pids-limit=" + std::to_string(limits.processes));
  double cpus = limits.cpus;
  if (cpus == 0) cpus = std::max(1.0, static_cast<double>(std::thread::hardware_concurrency()) - 1);
  if (cpus > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", cpus);
    a.push_back(std::string("--cpus=") + buf);
  }
  // The largest file and each process's memory are the prelude's `ulimit` (ContainerArgs): an
  // --ulimit would replace the engine's configured limits with its own defaults, which this
  // host may refuse.
  return a;
}

// The paths of `sandbox` mounted in the container, in BwrapArgs's order (a later mount at the
// same path replacing an earlier).
void AddContainerMounts(ContainerMounts* m, const Sandbox& sandbox, const std::vector<int64_t>& copy_bytes) {
  int64_t scratch = sandbox.limits.file_size_mb > 0 ? sandbox.limits.file_size_mb << 20 : 0;
  // What bubblewrap does not show of the host the container does not show of the image.
  for (const char* dir : {"/root", "/home", "/srv", "/mnt", "/media"}) m->Tmpfs(dir, TmpfsOptions(false, 4096, "0555"));
  for (const char* dir : {"/tmp", "/var/tmp", kContainerHome}) m->Tmpfs(dir, TmpfsOptions(true, scratch, "1777"));
  for (const auto& dir : sandbox.hidden) m->Tmpfs(dir, TmpfsOptions(false, 4096, "0555"));
  for (size_t i = 0; i < sandbox.copies.size(); ++i) {
    const PrivateCopy& c = sandbox.copies[i];
    int64_t size = CopyTmpfsBytes(sandbox, copy_bytes, i);
    m->Bind(c.source, CopySource(i), false);
    m->Tmpfs(c.target, TmpfsOptions(true, size, "1777"));
  }
  for (const auto& b : sandbox.binds) m->Bind(b.source, b.target, b.writable);
  auto in_a_copy = [&](const std::string& p) {
    return std::any_of(sandbox.copies.begin(), sandbox.copies.end(),
                       [&](const PrivateCopy& c) { return Under(p, c.target) || Under(c.target, p); });
  };
  auto covers_a_bind = [&](const std::string& p) {
    return std::any_of(sandbox.binds.begin(), sandbox.binds.end(),
                       [&](const Bind& b) { return Under(b.target, p); });
  };
  for (const auto& p : sandbox.read_only) {
    if (!in_a_copy(p) && !covers_a_bind(p) && Exists(p)) m->Bind(p, p, false);
  }
  for (const auto& p : sandbox.writable) m->Bind(p, p, true);
  for (const auto& p : sandbox.protect) {
    if (Exists(p) && ProtectsWhatItNames(sandbox, p)) m->Bind(p, p, false);
  }
  for (const auto& o : sandbox.overlays) m->Bind(o.source, o.target, false);
  for (const auto& p : sandbox.masked) {
    struct stat st;
    // Not on the host: a file of the image (sandbox/exposure.h hides the image's directories
    // through `hidden`).
    if (::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) m->Tmpfs(p, TmpfsOptions(false, 4096, "0555"));
    else m->Bind("/dev/null", p, false);
  }
}

}  // namespace

util::Expected<std::vector<std::string>> ContainerArgs(
    const Sandbox& sandbox, const std::string& name, const std::string& cwd,
    const std::vector<std::string>& argv, const std::vector<std::string>& env,
    int preserved_fds, const std::vector<int64_t>& copy_bytes, const std::string& seccomp_profile) {
  if (sandbox.container.image.empty()) return util::Error{"a container sandbox needs an image"};
  Sandbox s = sandbox;
  s.protect = ProtectMounts(sandbox);
  ContainerMounts mounts;
  AddContainerMounts(&mounts, s, copy_bytes);
  auto mounted = mounts.Args();
  if (!mounted.ok()) return mounted.failure();
  std::vector<std::string> a = {s.container.engine, "run", "--rm", "-i", "--name", name,
                                "--pull=never", "--network", s.network ? "host" : "none",
                                "--user", std::to_string(kSandboxUid) + ":" + std::to_string(kSandboxGid),
                                "--cap-drop=all", "--security-opt=no-new-privileges", "--read-only",
                                // its output reaches fbkit through the client's pipe alone: no
                                // log on the host's disk outside the sandbox's limits
                                "--log-driver=none"};
  for (auto& l : ContainerLimits(s.limits)) a.push_back(std::move(l));
  if (s.limits.file_size_mb > 0) a.push_back("--shm-size=" + std::to_string(s.limits.file_size_mb) + "m");
  if (preserved_fds > 0) a.push_back("--preserve-fds=" + std::to_string(preserved_fds));
  if (!seccomp_profile.empty()) a.push_back("--security-opt=seccomp=" + seccomp_profile);
  a.insert(a.end(), mounted->begin(), mounted->end());
  for (const auto& kv : env) a.insert(a.end(), {"--env", kv});
  if (!cwd.empty() && s.copies.empty()) a.insert(a.end(), {"--workdir", cwd});
  a.push_back(s.container.image);
  // First, as the sandbox's user: the file size limit (in POSIX sh's 512-byte blocks), then
  // the private copies filled (the image's own tar), then the command.
  std::string script;
  if (s.limits.file_size_mb > 0) script = "ulimit -f " + std::to_string(s.limits.file_size_mb * 2048) + " || exit 125\n";
  if (s.limits.memory_mb > 0) script += "ulimit -v " + std::to_string(s.limits.memory_mb * 1024) + " || exit 125\n";
  HostInfo image;
  script += s.copies.empty() ? std::string("exec \"$@\"\n") : CopyPrelude(s, image, cwd);
  // The shell stays the container's init (pid 1): it reaps the orphans the command leaves
  // (a process of pid 1 that never waits would keep them as zombies against the process
  // limit), and the command is not pid 1, to which the kernel sends no default signals.
  const std::string exec = "exec \"$@\"\n";
  if (script.ends_with(exec)) script.replace(script.size() - exec.size(), exec.size(), "\"$@\"\nexit $?\n");
  a.insert(a.end(), {"/bin/sh", "-c", script, "fbkit-sandbox"});
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

std::vector<std::string> ContainerEnvironment(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                                  "LANG=C.UTF-8", std::string("HOME=") + kContainerHome, "TMPDIR=/tmp",
                                  "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory",
                                  "GIT_CONFIG_VALUE_0=*"};
  for (const auto& [k, v] : extra) {
    std::erase_if(env, [&](const std::string& kv) { return kv.starts_with(k + "="); });
    env.push_back(k + "=" + v);
  }
  return env;
}

std::vector<std::string> SandboxEnvironment(
    const char* const* parent, const std::string& home,
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (const char* const* e = parent; e && *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    // Trust anchors (the machine's CA bundle, for tools that bring their own otherwise)
    // name files, not secrets.
    static const std::set<std::string> kCaBundles = {
        "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO"};
    if (key == "PATH" || key == "LANG" || key == "TZ" || key == "TERM" ||
        key.starts_with("LC_") || kCaBundles.count(key)) {
      env.push_back(kv);
    }
  }
  env.push_back("HOME=" + (home.empty() || home == "/" ? std::string("/tmp") : home));
  env.push_back("TMPDIR=/tmp");
  // Git answers in the tree as in the user's checkout: inside, the process is another user
  // than the owner of the copy's .git, which git would refuse as of dubious ownership
  // (setuptools-scm, hatch-vcs and import-time `git rev-parse` failing). Command-line scope,
  // which a repository's own configuration cannot widen; a variable of the spec's overrides it.
  env.insert(env.end(), {"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory",
                         "GIT_CONFIG_VALUE_0=*"});
  for (const auto& [k, v] : extra) {
    std::erase_if(env, [&](const std::string& kv) { return kv.starts_with(k + "="); });
    env.push_back(k + "=" + v);
  }
  return env;
}

std::vector<std::string> SandboxedCommand(
    const HostInfo& host, const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& vars) {
  if (vars.empty()) return argv;
  std::vector<std::string> out = {host.env.empty() ? std::string("env") : host.env};
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

namespace {

// "3.11" of ".../python3.11", "" when the name carries no version.
std::string PythonVersion(const std::string& executable) {
  std::string name = executable.substr(executable.rfind('/') + 1);
  if (!name.starts_with("python3.")) return "";
  std::string v = name.substr(6);
  return v.find_first_not_of("0123456789.") == std::string::npos ? v : "";
}

// What an interpreter of the system's prefix (/usr, /usr/local) needs of it: its pythonX.Y
// directories (every python3.* when `version` is unknown) and Debian's lib/python3.
std::vector<std::string> SystemPrefixDirs(const std::string& prefix, const std::string& version) {
  std::vector<std::string> libs = {util::JoinPath(prefix, "lib")};
  if (prefix == "/usr") libs.push_back("/usr/local/lib");
  std::vector<std::string> out;
  for (const auto& lib : libs) {
    if (!version.empty()) {
      out.push_back(util::JoinPath(lib, "python" + version));
    } else if (auto entries = util::RealEnv().ListDir(lib); entries.ok()) {
      for (const auto& e : *entries) {
        if (e.name.starts_with("python3.")) out.push_back(util::JoinPath(lib, e.name));
      }
    }
    out.push_back(util::JoinPath(lib, "python3"));
  }
  return out;
}

}  // namespace

std::vector<std::string> InterpreterDirs(const std::string& python) {
  std::string found = FindProgram(python);
  if (found.empty()) return {};
  if (!found.starts_with("/")) {
    char* cwd = ::getcwd(nullptr, 0);
    found = util::JoinPath(cwd ? cwd : "/", found);
    std::free(cwd);
  }
  // A path through /proc means another place in every process: nothing to bind.
  if (found.starts_with("/proc/")) return {};
  std::string real = found;
  if (char* r = ::realpath(found.c_str(), nullptr)) {
    real = r;
    std::free(r);
  }
  if (real.starts_with("/proc/")) real = found;
  std::string version = PythonVersion(real);
  if (version.empty()) version = PythonVersion(found);
  std::vector<std::string> dirs;
  for (const auto& exe : {found, real}) {
    std::string prefix = Prefix(exe);
    std::vector<std::string> add = {prefix};
    if (prefix == "/usr" || prefix == "/usr/local" || prefix == "/") {
      add = SystemPrefixDirs(prefix == "/" ? "/usr" : prefix, version);
    }
    for (auto& d : add) {
      if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
    }
  }
  return dirs;
}

util::Status CheckContainerEngine(const std::string& engine) {
  static std::mutex mu;
  static std::map<std::string, util::Status> checked;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = checked.find(engine); it != checked.end()) return it->second;
  util::Status& status = checked[engine];
  if (FindProgram(engine).empty()) {
    status = util::Error{"the container sandbox needs the engine '" + engine + "', which is not "
                         "on PATH (apt-get install podman; docs/containers.md)"};
  } else if (engine.substr(engine.rfind('/') + 1) != "podman") {
    status = util::Error{"the container sandbox needs podman: the tests' outcomes reach fbkit "
                         "through descriptors the container inherits (podman run --preserve-fds), "
                         "which '" + engine + "' cannot hand in"};
  }
  return status;
}

util::Status CheckBwrap() {
  static std::once_flag once;
  static util::Status status;
  std::call_once(once, [] {
    HostInfo host = CurrentHost();
    if (host.bwrap.empty()) {
      status = util::Error{
          "the sandbox needs bubblewrap, which is not installed (apt-get install bubblewrap); "
          "to run repository and agent code without isolation pass --sandbox none (or set "
          "sandbox = \"none\" in the spec)"};
      return;
    }
    if (host.root && host.setpriv.empty()) {
      status = util::Error{
          "the sandbox drops root with setpriv (util-linux), which is not on PATH; install "
          "util-linux, or pass --sandbox none to run without isolation"};
      return;
    }
    char tmpl[] = "/tmp/fbkit-bwrap-check-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      status = util::Error{"cannot create a temporary directory for the sandbox check"};
      return;
    }
    std::string dir = tmpl;
    ProcessSpec spec;
    spec.argv = {"/bin/true"};
    spec.log_path = dir + "/check.log";
    spec.sandbox.kind = SandboxKind::kBwrap;
    auto exit = RunToCompletion(RealLauncher(), spec, 60);
    auto log = util::RealEnv().ReadFile(spec.log_path);
    (void)util::RealEnv().RemoveAll(dir);
    if (exit.ok() && exit->code == 0) return;
    status = util::Error{
        "bubblewrap cannot create its sandbox here (" +
        (exit.ok() ? util::Tail(log.ok() ? *log : "", 400) : exit.error()) +
        "); it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
        "or user.max_user_namespaces > 0) or root; inside a container, allow it or pass "
        "--sandbox none to run without isolation"};
  });
  return status;
}

}  // namespace fbkit::sandbox

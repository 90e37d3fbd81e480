#include "tracer/sandbox.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "tracer/process.h"
#include "util/env.h"
#include "util/strings.h"

namespace fbkit::tracer {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool Under(const std::string& path, const std::string& dir) {
  return path == dir || path.starts_with(dir.ends_with('/') ? dir : dir + "/");
}

// `name` found on PATH (or as given when it has a slash); "" when not found.
std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t b = 0, e; b <= dirs.size(); b = e + 1) {
    e = dirs.find(':', b);
    if (e == std::string::npos) e = dirs.size();
    std::string candidate = util::JoinPath(dirs.substr(b, e - b), name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string Prefix(const std::string& executable) {
  return util::DirName(util::DirName(executable));
}

}  // namespace

util::Expected<SandboxKind> ParseSandboxKind(const std::string& name) {
  if (name == "bwrap") return SandboxKind::kBwrap;
  if (name == "none") return SandboxKind::kNone;
  return util::Error{"unknown sandbox '" + name + "' (use bwrap or none)"};
}

const char* SandboxKindName(SandboxKind kind) {
  return kind == SandboxKind::kBwrap ? "bwrap" : "none";
}

std::vector<std::string> HiddenDirs(const std::string& home) {
  std::vector<std::string> dirs = {"/home", "/root", "/run", "/tmp", "/var/tmp"};
  bool covered = std::any_of(dirs.begin(), dirs.end(),
                             [&](const std::string& d) { return Under(home, d); });
  if (!home.empty() && home != "/" && !covered) dirs.push_back(home);
  return dirs;
}

HostInfo CurrentHost() {
  HostInfo host;
  host.bwrap = FindProgram("bwrap");
  const char* home = std::getenv("HOME");
  host.home = home ? home : "";
  host.root = ::geteuid() == 0;
  for (const auto& d : HiddenDirs(host.home)) {
    if (Exists(d)) host.existing.push_back(d);
  }
  return host;
}

std::vector<std::string> BwrapArgs(const Sandbox& sandbox, const HostInfo& host,
                                   const std::string& cwd, const std::vector<std::string>& argv) {
  std::vector<std::string> a = {host.bwrap, "--die-with-parent", "--new-session", "--unshare-all"};
  if (sandbox.network) a.push_back("--share-net");
  if (host.root) a.insert(a.end(), {"--cap-drop", "ALL"});
  a.insert(a.end(), {"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"});
  for (const auto& dir : host.existing) {
    if (dir == "/tmp" && sandbox.limits.file_size_mb > 0) {
      a.insert(a.end(), {"--size", std::to_string(sandbox.limits.file_size_mb << 20)});
    }
    a.insert(a.end(), {"--tmpfs", dir});
  }
  for (const auto& dir : sandbox.hidden) a.insert(a.end(), {"--tmpfs", dir});
  for (const auto& b : sandbox.binds) {
    a.insert(a.end(), {b.writable ? "--bind" : "--ro-bind", b.source, b.target});
  }
  auto hidden = [&](const std::string& p) {
    return std::any_of(host.existing.begin(), host.existing.end(),
                       [&](const std::string& d) { return Under(p, d); }) ||
           std::any_of(sandbox.hidden.begin(), sandbox.hidden.end(),
                       [&](const std::string& d) { return Under(p, d); }) ||
           std::any_of(sandbox.binds.begin(), sandbox.binds.end(),
                       [&](const Bind& b) { return Under(p, b.target); });
  };
  if (sandbox.network && Exists("/run/systemd/resolve")) {
    a.insert(a.end(), {"--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve"});
  }
  auto covers_a_bind = [&](const std::string& p) {
    return std::any_of(sandbox.binds.begin(), sandbox.binds.end(),
                       [&](const Bind& b) { return Under(b.target, p); });
  };
  for (const auto& p : sandbox.read_only) {
    if (hidden(p) && !covers_a_bind(p)) a.insert(a.end(), {"--ro-bind-try", p, p});
  }
  for (const auto& p : sandbox.writable) a.insert(a.end(), {"--bind", p, p});
  if (!cwd.empty()) a.insert(a.end(), {"--chdir", cwd});
  a.push_back("--");
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

std::vector<std::string> SandboxEnvironment(
    const char* const* parent, const std::string& home,
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (const char* const* e = parent; e && *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    if (key == "PATH" || key == "LANG" || key == "TZ" || key == "TERM" ||
        key.starts_with("LC_")) {
      env.push_back(kv);
    }
  }
  env.push_back("HOME=" + (home.empty() ? std::string("/tmp") : home));
  env.push_back("TMPDIR=/tmp");
  for (const auto& [k, v] : extra) {
    std::erase_if(env, [&](const std::string& kv) { return kv.starts_with(k + "="); });
    env.push_back(k + "=" + v);
  }
  return env;
}

std::vector<std::string> InterpreterDirs(const std::string& python) {
  std::string found = FindProgram(python);
  if (found.empty()) return {};
  if (!found.starts_with("/")) {
    char* cwd = ::getcwd(nullptr, 0);
    found = util::JoinPath(cwd ? cwd : "/", found);
    std::free(cwd);
  }
  std::vector<std::string> dirs = {Prefix(found)};
  if (char* real = ::realpath(found.c_str(), nullptr)) {
    if (Prefix(real) != dirs[0]) dirs.push_back(Prefix(real));
    std::free(real);
  }
  return dirs;
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

}  // namespace fbkit::tracer

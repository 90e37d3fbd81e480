#include "runner/environment.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "runner/repo_files.h"
#include "util/hash.h"
#include "util/json_writer.h"
#include "util/strings.h"

namespace fbkit::runner {
namespace {

constexpr uint64_t kMaxLogBytes = 64 << 20;  // what is read back of a step's log

// `path` relative to the directory `base` (both absolute and resolved): "a/b", or with ".."
// when it lies elsewhere.
std::string RelativeTo(const std::string& path, const std::string& base) {
  std::vector<std::string> p = util::Split(path, '/'), b = util::Split(base, '/');
  std::erase(p, ""), std::erase(b, "");
  size_t common = 0;
  while (common < p.size() && common < b.size() && p[common] == b[common]) ++common;
  std::string out;
  for (size_t i = common; i < b.size(); ++i) out = util::JoinPath(out, "..");
  for (size_t i = common; i < p.size(); ++i) out = util::JoinPath(out, p[i]);
  return out.empty() ? "." : out;
}

// Root-relative files whose contents key the cache: the usual dependency declarations, and
// every regular file under the spec's install_inputs (a link to one counts), each named by
// where it resolves, relative to the resolved root (a link into the tree names its target;
// one out of it a "../" path, which keying refuses); sorted, without repeats.
std::vector<std::string> KeyFiles(util::Env& env, const RepoSpec& spec, const std::string& root) {
  std::vector<std::string> files = {"pyproject.toml", "setup.py", "setup.cfg"};
  if (auto entries = env.ListDir(root); entries.ok()) {
    for (const auto& e : *entries) {
      if (e.name.starts_with("requirements") && e.name.ends_with(".txt")) files.push_back(e.name);
    }
  }
  for (const auto& input : spec.install_inputs) {
    auto st = env.Stat(util::JoinPath(root, input), true);
    if (!st.ok() || st->type != util::FileType::kDirectory) {
      files.push_back(input);
      continue;
    }
    auto real_root = env.RealPath(root);
    const std::string dir = util::JoinPath(root, input);
    util::WalkTree(env, dir, [&](const std::string& below, util::FileType type) {
      const std::string path = util::JoinPath(dir, below);
      if (type == util::FileType::kSymlink) {
        auto target = env.Stat(path, true);
        if (!target.ok() || target->type != util::FileType::kRegular) return true;
      } else if (type != util::FileType::kRegular) {
        return true;
      }
      auto real = env.RealPath(path);
      files.push_back(real.ok() && real_root.ok() ? RelativeTo(*real, *real_root)
                                                  : util::JoinPath(input, below));
      return true;
    });
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

// A finished cache entry. Its env.json is fbkit's, written after the last sandboxed step;
// what it names is checked all the same (the steps could write the directory): the
// interpreter is the entry's own or the spec's, the built files lie inside src/.
util::Expected<BuiltEnvironment> ReadEntry(util::Env& env, const std::string& dir,
                                           const std::string& spec_python) {
  auto info = env.Stat(util::JoinPath(dir, "env.json"), false);
  if (!info.ok() || info->type != util::FileType::kRegular) {
    return util::Error{dir + "/env.json: no such file"};
  }
  auto text = env.ReadUntrusted(dir, "env.json", util::kMaxTreeFileBytes);
  if (!text.ok()) return text.failure();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return util::Error{dir + "/env.json: not JSON"};
  BuiltEnvironment b;
  b.key = j.value("key", "");
  b.dir = dir;
  b.python = j.value("python", "");
  b.collected = j.value("collected", "");
  if (j.contains("collect_errors") && j["collect_errors"].is_array()) {
    for (const auto& f : j["collect_errors"]) {
      if (f.is_string()) b.collect_errors.push_back(f.get<std::string>());
    }
  }
  if (j.contains("built_files") && j["built_files"].is_array()) {
    for (const auto& f : j["built_files"]) {
      if (!f.is_string()) continue;
      std::string rel = f.get<std::string>();
      if (rel.empty() || rel.starts_with("/") || ("/" + rel + "/").find("/../") != std::string::npos) {
        return util::Error{dir + "/env.json: a built file outside the copy: " + rel};
      }
      b.built_files.push_back(rel);
    }
  }
  if (b.python != util::JoinPath(dir, "env/bin/python") && b.python != spec_python) {
    return util::Error{dir + "/env.json: an interpreter of neither the entry nor the spec"};
  }
  b.reused = true;
  return b;
}

sandbox::Sandbox InstallSandbox(const RepoSpec& spec, const std::string& root, const std::string& dir) {
  sandbox::Sandbox s;
  s.kind = spec.sandbox;
  s.network = InstallNetwork(spec);
  s.whole_system = true;  // compilers and headers; built from the original tree anyway
  s.limits = spec.limits;
  s.read_only = {root};
  for (const auto& d : sandbox::InterpreterDirs(spec.python)) s.read_only.push_back(d);
  // Absolute pythonpath entries (a dependency's checkout) are read as the tests read them.
  for (const auto& p : spec.pythonpath) {
    if (p.starts_with("/")) s.read_only.push_back(p);
  }
  s.writable = {dir};
  return s;
}

// "exited with N", "was killed by signal N" or "timed out after N s".
std::string HowItEnded(const sandbox::ExitInfo& exit, double timeout) {
  if (exit.timed_out) return "timed out after " + std::to_string(static_cast<int>(timeout)) + " s";
  if (exit.signal) return "was killed by signal " + std::to_string(exit.signal);
  return "exited with " + std::to_string(exit.code);
}

// Runs one step or check; an error carries the tail of its log.
util::Status RunLogged(util::Env& env, sandbox::Launcher& launcher, sandbox::ProcessSpec spec, double timeout,
                       const std::string& what) {
  auto exit = sandbox::RunToCompletion(launcher, spec, timeout);
  if (!exit.ok()) return util::Error{what + ": " + exit.error()};
  if (exit->code == 0) return util::Status::Ok();
  // The log lies in the entry the steps could write: read without following links.
  auto log = env.ReadUntrusted(util::DirName(spec.log_path),
                               spec.log_path.substr(spec.log_path.rfind('/') + 1), kMaxLogBytes);
  return util::Error{what + " " + HowItEnded(*exit, timeout) + " (log: " + spec.log_path + "):\n" +
                     util::Tail(log.ok() ? *log : "", 2000)};
}

// What the install steps built into `src` (the environment's copy of `root`) for Python to
// import, where `root` has none: extension modules and generated modules (a version file
// setuptools_scm writes), root-relative and sorted.
std::vector<std::string> BuiltFiles(util::Env& env, const std::string& src, const std::string& root) {
  std::vector<std::string> out;
  util::WalkTree(env, src, [&](const std::string& rel, util::FileType type) {
    if (type != util::FileType::kRegular) return true;
    if (!rel.ends_with(".so") && !rel.ends_with(".pyd") && !rel.ends_with(".py")) return true;
    if (rel.starts_with("build/")) return true;  // setuptools' staging, never imported
    if (!env.Stat(util::JoinPath(root, rel), true).ok()) out.push_back(rel);
    return true;
  });
  std::sort(out.begin(), out.end());
  return out;
}

// What an environment's copy of `root` takes, root-relative and sorted: every regular file
// with no other hard link and every link (copied as a link), outside .git and the caches a
// test run leaves (__pycache__, .pytest_cache: they change whenever the user runs the tests,
// and so would the key); no device, FIFO or socket. The copy is made on the host as fbkit's
// user: a hard link in a repository handed over as a directory (or a device node) would give
// the install steps any file.
std::vector<std::string> CopyableFiles(util::Env& env, const std::string& root) {
  std::vector<std::string> out;
  util::WalkTree(env, root, [&](const std::string& rel, util::FileType type) {
    const std::string name = rel.substr(rel.rfind('/') + 1);
    if (rel == ".git" || name == "__pycache__" || name == ".pytest_cache") return false;
    if (type == util::FileType::kSymlink || PlainFile(env, util::JoinPath(root, rel))) {
      out.push_back(rel);
    }
    return true;
  });
  std::sort(out.begin(), out.end());
  return out;
}

// How many install steps an earlier, failed build of this entry finished (fbkit writes the
// count after each step; the steps could rewrite it, but only to skip their own tree's steps).
size_t StepsDone(util::Env& env, const std::string& dir, size_t steps) {
  auto text = env.ReadUntrusted(dir, "steps-done", 64);
  if (!text.ok()) return 0;
  std::string digits = util::Trim(*text);
  size_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return ec == std::errc() && end == digits.data() + digits.size() && n <= steps ? n : 0;
}

// Git in the copy answers as in ROOT (setuptools-scm, hatch-vcs, versioneer and a build's
// `git rev-parse`): when ROOT/.git is a directory, the copy's .git is a file naming it (the
// steps and the check see ROOT read-only; the history is the user's own checkout's). A
// worktree's .git file (its directory elsewhere) is not followed: git then finds none.
util::Status LinkHistory(util::Env& env, const std::string& root, const std::string& src) {
  auto st = env.Stat(util::JoinPath(root, ".git"), false);
  if (!st.ok() || st->type != util::FileType::kDirectory) return util::Status::Ok();
  return env.WriteFileAtomic(util::JoinPath(src, ".git"), "gitdir: " + util::JoinPath(root, ".git") + "\n");
}

// Runs the install steps in the entry, from the first an earlier failed build of the same key
// did not finish (`rebuild`: from nothing).
util::Status RunSteps(util::Env& env, sandbox::Launcher& launcher, const EnvRequest& r,
                      const std::string& dir, double timeout) {
  const RepoSpec& spec = r.spec;
  std::string src = util::JoinPath(dir, "src");
  std::string venv = util::JoinPath(dir, "env");
  size_t done = r.rebuild ? 0 : StepsDone(env, dir, spec.install.size());
  if (done > 0 && r.say) {
    r.say("install steps 1-" + std::to_string(done) + " reused from an earlier build that failed "
          "after them (" + dir + "; --rebuild starts from nothing)");
  }
  if (done == 0) {
    (void)env.RemoveAll(dir);
    if (auto s = env.MakeDirs(src); !s.ok()) return s;
    if (auto s = CopyRepoFiles(env, r.root, CopyableFiles(env, r.root), src); !s.ok()) {
      return util::Error{"copying the repository: " + s.error()};
    }
    if (auto s = LinkHistory(env, r.root, src); !s.ok()) return s;
  }
  for (size_t i = done; i < spec.install.size(); ++i) {
    std::string n = std::to_string(i + 1);
    if (r.say) r.say("install step " + n + "/" + std::to_string(spec.install.size()) + ": " + spec.install[i]);
    sandbox::ProcessSpec step;
    step.argv = {"/bin/sh", "-c", spec.install[i]};
    step.cwd = src;
    step.vars = spec.vars;
    step.vars.insert(step.vars.end(), {{"FBKIT_ENV", venv}, {"FBKIT_SRC", src}, {"PYTHON", spec.python}});
    step.log_path = util::JoinPath(dir, "install-" + n + ".log");
    step.sandbox = InstallSandbox(spec, r.root, dir);
    util::Status s = RunLogged(env, launcher, step, timeout, "install step " + n + " (" + spec.install[i] + ")");
    if (!s.ok() && !InstallNetwork(spec)) {
      return util::Error{s.error() + "\n(the install steps ran without the network: a spec "
                                     "whose steps download, from PyPI say, sets "
                                     "install_network = true)"};
    }
    if (!s.ok()) return s;
    if (auto w = env.WriteFileAtomic(util::JoinPath(dir, "steps-done"), std::to_string(i + 1) + "\n");
        !w.ok()) {
      return w;
    }
  }
  return util::Status::Ok();
}

// The test files of a collection's short summary ("ERROR tests/test_b.py" or "ERROR
// tests/test_b.py - ImportError: ..."), sorted.
std::vector<std::string> CollectErrors(const std::string& log) {
  std::vector<std::string> out;
  for (const auto& line : util::Split(log, '\n')) {
    if (!line.starts_with("ERROR ")) continue;
    std::string file = line.substr(6, line.find(" - ", 6) - 6);
    if (!file.empty() && file.find(' ') == std::string::npos) out.push_back(file);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Checks that pytest imports and collects with the environment. Files that fail to collect
// are listed (b->collect_errors), not fatal: the rest of the suite goes on; a collection
// that finds no test, or fails otherwise, is.
util::Status Check(util::Env& env, sandbox::Launcher& launcher, const EnvRequest& r, const std::string& dir,
                   double timeout, BuiltEnvironment* b) {
  const RepoSpec& spec = r.spec;
  std::string src = util::JoinPath(dir, "src");
  if (r.say) r.say("checking that pytest imports and collects with " + b->python);
  sandbox::ProcessSpec check;
  check.argv = {b->python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"};
  check.argv.insert(check.argv.end(), spec.pytest_args.begin(), spec.pytest_args.end());
  // Over a configuration's --color=yes: the lines are read; a file that fails to collect is
  // reported, not the end of the check.
  check.argv.insert(check.argv.end(), {"--color=no", "--continue-on-collection-errors"});
  // The paths of the run that asked for the environment may not be in the tree it is built
  // from (a task's F2P file comes with its test patch): only those there are collected.
  for (const auto& t : spec.tests) {
    if (env.Stat(util::JoinPath(src, t), false).ok()) check.argv.push_back(t);
  }
  std::string pythonpath;
  for (const auto& p : spec.pythonpath) {
    pythonpath += (pythonpath.empty() ? "" : ":") + (p.starts_with("/") ? p : util::JoinPath(src, p));
  }
  check.cwd = src;
  check.vars = spec.vars;
  check.vars.insert(check.vars.end(),
                    {{"PYTHONPATH", pythonpath}, {"PYTHONDONTWRITEBYTECODE", "1"}});
  check.log_path = util::JoinPath(dir, "check.log");
  // Collecting runs the repository's conftest files, which are in no key: the entry is
  // read-only to them (a conftest's .pth in the venv reached every repository of that key).
  check.sandbox = InstallSandbox(spec, r.root, dir);
  check.sandbox.writable.clear();
  check.sandbox.whole_system = false;  // what the tests will see of the system
  check.sandbox.network = spec.network;  // and of the network
  // The environment read-only; what a suite writes into its tree while it collects
  // (pytest-cov's .coverage from `addopts = --cov`) goes to a private copy of src/, as in a
  // user's checkout. (A read-only path above a copy's target would not be bound at all.)
  check.sandbox.read_only.push_back(util::JoinPath(dir, "env"));
  check.sandbox.copies.push_back({src, src, "", {}});
  const std::string what = "the pytest check (collect-only)";
  auto exit = sandbox::RunToCompletion(launcher, check, timeout);
  if (!exit.ok()) return util::Error{what + ": " + exit.error()};
  auto log = env.ReadUntrusted(dir, "check.log", kMaxLogBytes);
  std::string text = log.ok() ? *log : "";
  text = text.substr(0, text.find_last_not_of("\n") + 1);
  b->collected = text.substr(text.find_last_of('\n') + 1);
  if (exit->code == 1 && !exit->output_cut && !b->collected.starts_with("no tests")) {
    b->collect_errors = CollectErrors(text);
  }
  if (exit->code == 0 || !b->collect_errors.empty()) return util::Status::Ok();
  return util::Error{what + " " + HowItEnded(*exit, timeout) + " (log: " + check.log_path + "):\n" +
                     util::Tail(text, 2000)};
}

util::Expected<BuiltEnvironment> Build(util::Env& env, sandbox::Launcher& launcher, const EnvRequest& r,
                                       const std::string& key, const std::string& dir) {
  const RepoSpec& spec = r.spec;
  double timeout = spec.total_timeout > 0 ? spec.total_timeout : 3600;
  if (auto s = RunSteps(env, launcher, r, dir, timeout); !s.ok()) return s.failure();
  std::string src = util::JoinPath(dir, "src");
  BuiltEnvironment b;
  b.key = key;
  b.dir = dir;
  b.built_files = BuiltFiles(env, src, r.root);
  std::string own = util::JoinPath(dir, "env/bin/python");
  b.python = env.Stat(own, true).ok() ? own : spec.python;
  if (auto s = Check(env, launcher, r, dir, timeout, &b); !s.ok()) return s.failure();
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("built_files"), w.StringArray(b.built_files);
  w.Key("collect_errors"), w.StringArray(b.collect_errors);
  w.Key("collected"), w.String(b.collected);
  w.Key("install"), w.StringArray(spec.install);
  w.Key("key"), w.String(key);
  w.Key("python"), w.String(b.python);
  w.EndObject();
  if (auto s = env.WriteFileAtomic(util::JoinPath(dir, "env.json"), out + "\n"); !s.ok()) {
    return s.failure();
  }
  return b;
}

}  // namespace

namespace {

constexpr uint64_t kMaxKeyFile = 256u << 20;  // a larger file cannot key an environment

// The spec's fields that shape the environment and the digests of the dependency files.
util::Expected<std::string> DependencyMaterial(util::Env& env, const RepoSpec& spec,
                                               const std::string& root) {
  std::string material;
  util::JsonWriter w(&material);
  w.BeginObject();
  w.Key("env"), w.BeginObject();
  for (const auto& [k, v] : spec.vars) w.Key(k), w.String(v);
  w.EndObject();
  w.Key("install"), w.StringArray(spec.install);
  w.Key("install_inputs"), w.StringArray(spec.install_inputs);
  w.Key("network"), w.Bool(spec.network);
  // Only when set: the keys of environments built before it existed stay the same.
  if (spec.install_network && !spec.network) w.Key("install_network"), w.Bool(true);
  w.Key("python"), w.String(spec.python);
  w.EndObject();
  // Read as the repository's, never through a link (it could name a device or a FIFO that
  // never ends), and bounded; a key file that is not a regular file keys by what it is.
  for (const auto& f : KeyFiles(env, spec, root)) {
    auto st = env.Stat(util::JoinPath(root, f), false);
    if (!st.ok()) continue;  // a missing dependency file is part of the key by absence
    if (st->type != util::FileType::kRegular) {
      material += "\n" + f + "\n(not a regular file)";
      continue;
    }
    auto data = env.ReadUntrusted(root, f, kMaxKeyFile);
    if (!data.ok()) return util::Error{"keying the environment: " + data.error()};
    material += "\n" + f + "\n" + util::Sha256Hex(*data);
  }
  return material;
}

// Every file the install steps see (CopyableFiles): its path and its content's digest, or
// its link's target.
util::Expected<std::string> TreeDigest(util::Env& env, const std::string& root) {
  std::string material;
  util::JsonWriter w(&material);
  w.BeginArray();
  for (const auto& f : CopyableFiles(env, root)) {
    std::string path = util::JoinPath(root, f);
    auto st = env.Stat(path, false);
    if (!st.ok()) return util::Error{"keying the environment: " + st.error()};
    w.String(f);
    if (st->type == util::FileType::kSymlink) {
      auto target = env.ReadLink(path);
      w.String("-> " + (target.ok() ? *target : std::string()));
      continue;
    }
    auto data = env.ReadUntrusted(root, f, kMaxKeyFile);
    if (!data.ok()) return util::Error{"keying the environment: " + data.error()};
    w.String(util::Sha256Hex(*data));
  }
  w.EndArray();
  return util::Sha256Hex(material);
}

}  // namespace

util::Expected<std::string> EnvironmentKey(util::Env& env, const RepoSpec& spec,
                                           const std::string& root) {
  auto material = DependencyMaterial(env, spec, root);
  if (!material.ok()) return material;
  auto tree = TreeDigest(env, root);
  if (!tree.ok()) return tree;
  return util::Sha256Hex(*material + "\ntree " + *tree).substr(0, 16);
}

util::Expected<bool> SameDependencies(util::Env& env, const RepoSpec& spec, const std::string& a,
                                      const std::string& b) {
  auto first = DependencyMaterial(env, spec, a);
  if (!first.ok()) return first.failure();
  auto second = DependencyMaterial(env, spec, b);
  if (!second.ok()) return second.failure();
  return *first == *second;
}

util::Expected<BuiltEnvironment> EnsureEnvironment(util::Env& env, sandbox::Launcher& launcher,
                                                   const EnvRequest& request) {
  if (request.cache_dir.empty()) return util::Error{"no cache directory for the environment"};
  auto key = EnvironmentKey(env, request.spec, request.root);
  if (!key.ok()) return key.failure();
  std::string dir = util::JoinPath(request.cache_dir, *key);
  const std::string& python = request.spec.python;
  if (!request.rebuild) {
    if (auto cached = ReadEntry(env, dir, python); cached.ok()) return cached;
  }
  if (auto s = env.MakeDirs(request.cache_dir); !s.ok()) return s.failure();
  auto lock = env.LockFile(dir + ".lock");
  if (!request.rebuild) {
    if (auto cached = ReadEntry(env, dir, python); cached.ok()) return cached;  // built meanwhile
  }
  auto built = Build(env, launcher, request, *key, dir);
  // A failed build leaves its logs and the steps it finished (the next build of the same key
  // goes on from there), never an entry.
  if (!built.ok()) (void)env.RemoveAll(util::JoinPath(dir, "env.json"));
  return built;
}

}  // namespace fbkit::runner

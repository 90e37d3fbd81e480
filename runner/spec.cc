#include "runner/spec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <toml++/toml.h>

#include "sandbox/sandbox.h"
#include "util/json_read.h"
#include "util/json_writer.h"
#include "util/strings.h"

namespace fbkit::runner {
namespace {

// Reads one spec table into a RepoSpec; the first error wins.
class SpecReader {
 public:
  SpecReader(std::string file, RepoSpec* spec) : file_(std::move(file)), spec_(spec) {}

  util::Status Read(const toml::table& top) {
    for (const auto& [key, node] : top) {
      std::string k(key.str());
      if (!ReadTop(k, node)) break;
    }
    return error_.empty() ? util::Status::Ok() : util::Status(util::Error{error_});
  }

 private:
  bool ReadTop(const std::string& k, const toml::node& n) {
    RepoSpec& s = *spec_;
    if (k == "repo") {
      if (!String(k, n, &s.repo)) return false;
      if (!IsRepoName(s.repo)) {
        return Fail(n, "key 'repo': not owner/repo (letters, digits, '.', '_' and '-', neither "
                       "part starting with '.')");
      }
      return true;
    }
    if (k == "python") return String(k, n, &s.python);
    if (k == "image_name") return String(k, n, &s.image_name);
    if (k == "pythonpath") return Strings(k, n, &s.pythonpath);
    if (k == "pytest_args") return Strings(k, n, &s.pytest_args);
    if (k == "tests") return Strings(k, n, &s.tests);
    if (k == "exclude") return Strings(k, n, &s.exclude);
    if (k == "install") return Strings(k, n, &s.install);
    if (k == "install_inputs") return Strings(k, n, &s.install_inputs);
    if (k == "timeout") return Seconds(k, n, &s.timeout);
    if (k == "total_timeout") return Seconds(k, n, &s.total_timeout);
    if (k == "network") return Bool(k, n, &s.network);
    if (k == "install_network") return Bool(k, n, &s.install_network);
    if (k == "sandbox") return Sandbox(k, n);
    if (k == "exposed_copies") return Choice(k, n, sandbox::ParseCopyPolicy, &spec_->exposed_copies);
    if (k == "env") return Env(k, n);
    if (k == "limits") return LimitsTable(k, n);
    return Fail(n, "unknown key '" + k +
                       "' (known: repo, python, pythonpath, env, pytest_args, tests, exclude, "
                       "timeout, total_timeout, install, install_inputs, network, install_network, "
                       "sandbox, "
                       "exposed_copies, limits, image_name)");
  }

  bool Fail(const toml::node& n, const std::string& message) {
    error_ = file_ + ":" + std::to_string(n.source().begin.line) + ": " + message;
    return false;
  }

  bool String(const std::string& k, const toml::node& n, std::string* out) {
    if (!n.is_string()) return Fail(n, "key '" + k + "' must be a string");
    *out = *n.value<std::string>();
    return true;
  }

  bool Strings(const std::string& k, const toml::node& n, std::vector<std::string>* out) {
    const toml::array* arr = n.as_array();
    if (!arr) return Fail(n, "key '" + k + "' must be an array of strings");
    out->clear();
    for (const auto& item : *arr) {
      if (!item.is_string()) return Fail(item, "key '" + k + "' must be an array of strings");
      out->push_back(*item.value<std::string>());
    }
    return true;
  }

  bool Seconds(const std::string& k, const toml::node& n, double* out) {
    if (!n.is_number()) return Fail(n, "key '" + k + "' must be a number of seconds");
    *out = *n.value<double>();
    if (*out < 0 || !std::isfinite(*out)) return Fail(n, "key '" + k + "' must be >= 0");
    return true;
  }

  bool Count(const std::string& k, const toml::node& n, int64_t* out) {
    if (!n.is_integer()) return Fail(n, "key '" + k + "' must be a whole number");
    *out = *n.value<int64_t>();
    if (*out < 0) return Fail(n, "key '" + k + "' must be >= 0 (0: no limit)");
    return true;
  }

  bool Bool(const std::string& k, const toml::node& n, bool* out) {
    if (!n.is_boolean()) return Fail(n, "key '" + k + "' must be true or false");
    *out = *n.value<bool>();
    return true;
  }

  bool Sandbox(const std::string& k, const toml::node& n) {
    return Choice(k, n, sandbox::ParseSandboxKind, &spec_->sandbox);
  }

  // A string naming one value of an enum, as `parse` reads it.
  template <typename E>
  bool Choice(const std::string& k, const toml::node& n,
              util::Expected<E> (*parse)(const std::string&), E* out) {
    std::string name;
    if (!String(k, n, &name)) return false;
    auto value = parse(name);
    if (!value.ok()) return Fail(n, "key '" + k + "': " + value.error());
    *out = *value;
    return true;
  }

  bool Env(const std::string& k, const toml::node& n) {
    const toml::table* t = n.as_table();
    if (!t) return Fail(n, "key '" + k + "' must be a table of NAME = \"value\"");
    spec_->vars.clear();
    for (const auto& [name, value] : *t) {
      std::string v;
      if (!String(k + "." + std::string(name.str()), value, &v)) return false;
      if (!IsVariableName(name.str())) {
        return Fail(value, "key '" + k + "." + std::string(name.str()) +
                               "': not a variable name (letters, digits and '_', not first a "
                               "digit)");
      }
      if (IsFbkitVariable(std::string(name.str()))) {
        return Fail(value, "key '" + k + "." + std::string(name.str()) +
                               "': FBKIT_TRACE_* and FBKIT_PROBE_* variables are fbkit's own (a spec cannot set them)");
      }
      spec_->vars.emplace_back(std::string(name.str()), v);
    }
    std::sort(spec_->vars.begin(), spec_->vars.end());
    return true;
  }

  bool LimitsTable(const std::string& k, const toml::node& n) {
    const toml::table* t = n.as_table();
    if (!t) return Fail(n, "key '" + k + "' must be a table");
    for (const auto& [key, value] : *t) {
      std::string name(key.str());
      sandbox::Limits& l = spec_->limits;
      if (name == "cpus") {
        auto cpus = value.value<double>();
        if (!cpus) return Fail(value, "key 'limits.cpus' must be a number of CPUs");
        l.cpus = *cpus;
        continue;
      }
      int64_t* field = name == "memory_mb"      ? &l.memory_mb
                       : name == "processes"    ? &l.processes
                       : name == "file_size_mb" ? &l.file_size_mb
                       : name == "disk_mb"      ? &l.disk_mb
                                                : nullptr;
      if (!field) {
        return Fail(value, "unknown key 'limits." + name +
                               "' (known: memory_mb, processes, file_size_mb, disk_mb, cpus)");
      }
      if (!Count("limits." + name, value, field)) return false;
    }
    return true;
  }

  std::string file_;
  RepoSpec* spec_;
  std::string error_;
};


}  // namespace

util::Expected<RepoSpec> ParseRepoSpec(const std::string& text, const std::string& file) {
  RepoSpec spec;
  spec.file = file;
  try {
    toml::table top = toml::parse(text, file);
    util::Status s = SpecReader(file, &spec).Read(top);
    if (!s.ok()) return s.failure();
  } catch (const toml::parse_error& e) {
    return util::Error{file + ":" + std::to_string(e.source().begin.line) + ": " +
                       std::string(e.description())};
  }
  return spec;
}

std::string Widening(const RepoSpec& s, WideningRules rules) {
  const bool task = rules == WideningRules::kTaskSettings;
  const RepoSpec defaults;
  std::vector<std::string> keys;
  auto shown_anyway = [&] {
    // Judged by the path as bubblewrap will resolve it: no '.' or '..' parts (a
    // "/bin/../../home/u/python" is no system path), and what it resolves to as well.
    const std::string& py = s.python;
    if (!py.starts_with("/") || py.find("/./") != std::string::npos ||
        py.find("/../") != std::string::npos || py.find("//") != std::string::npos ||
        py.ends_with("/.") || py.ends_with("/..")) {
      return false;
    }
    auto dirs = sandbox::InterpreterDirs(s.python);
    return !dirs.empty() && std::all_of(dirs.begin(), dirs.end(), [](const std::string& d) {
      return std::any_of(sandbox::SystemPaths().begin(), sandbox::SystemPaths().end(),
                         [&](const std::string& p) { return d == p || d.starts_with(p + "/"); });
    });
  };
  if (s.python != defaults.python && !(task && shown_anyway())) {
    keys.push_back("python");
  }
  if (std::any_of(s.pythonpath.begin(), s.pythonpath.end(),
                  [](const std::string& p) { return p.starts_with("/"); })) {
    keys.push_back("absolute pythonpath entries");
  }
  if (s.network) keys.push_back("network");
  if (s.install_network && !s.network && !task) keys.push_back("install_network");
  if (s.sandbox != defaults.sandbox) keys.push_back("sandbox");
  if (s.exposed_copies == sandbox::CopyPolicy::kAllow) keys.push_back("exposed_copies = \"allow\"");
  const sandbox::Limits& l = s.limits;
  const sandbox::Limits& d = defaults.limits;
  // 0 (or less) means no limit at all.
  auto above = [](int64_t v, int64_t dflt) { return v > dflt || v <= 0; };
  if (above(l.memory_mb, d.memory_mb) || above(l.processes, d.processes) ||
      above(l.file_size_mb, d.file_size_mb) || above(l.disk_mb, d.disk_mb) || l.cpus < 0) {
    keys.push_back("limits above the defaults");
  }
  if (s.timeout <= 0) keys.push_back("no timeout");
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + k;
  return out;
}


util::Expected<RepoSpec> LoadRepoSpec(util::Env& env, const std::string& file,
                                      const std::string& root, bool trusted) {
  std::string path = file;
  if (path.empty()) {
    std::string fallback = util::JoinPath(root, "fbkit.toml");
    if (!env.Stat(fallback, false).ok()) return RepoSpec{};
    path = fallback;
  }
  auto under = [](const std::string& p, const std::string& dir) {
    return !dir.empty() && p.starts_with(dir + "/");
  };
  // The one found in ROOT, or one named inside it: read as any file of the repository's
  // tree (no link followed, no FIFO or device, bounded: a link to /dev/zero would exhaust
  // the host's memory).
  bool named_inside = !root.empty() && (file.empty() || under(path, root));
  auto text = !named_inside ? env.ReadFile(path)
              : file.empty()
                  ? env.ReadUntrusted(root, "fbkit.toml", util::kMaxTreeFileBytes)
                  : env.ReadUntrusted(root, path.substr(root.size() + 1), util::kMaxTreeFileBytes);
  if (!text.ok()) return util::Error{(file.empty() ? "" : "--spec: ") + text.error()};
  auto spec = ParseRepoSpec(*text, path);
  if (!spec.ok()) return spec;
  // A spec inside the repository is the repository's word, no more trusted than its code:
  // the one found in ROOT wherever it links to, one named inside ROOT, one that resolves
  // inside it, and one whose place cannot be told.
  auto real_path = env.RealPath(path);
  auto real_root = env.RealPath(root);
  bool inside = named_inside || (!root.empty() && (!real_path.ok() || !real_root.ok() ||
                                                   under(*real_path, *real_root)));
  if (std::string keys = Widening(*spec); inside && !trusted && !keys.empty()) {
    return util::Error{path + ": a spec inside the repository may not set " + keys +
                       " (they widen what the repository's own code may reach): if you wrote "
                       "it, say so with --trust-spec; else give them in a spec outside it "
                       "(--spec FILE) or on the command line (--python, --network, "
                       "--install-network)"};
  }
  return spec;
}

std::string RepoSpecJson(const RepoSpec& s) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("env"), w.BeginObject();
  for (const auto& [k, v] : s.vars) w.Key(k), w.String(v);
  w.EndObject();
  w.Key("exclude"), w.StringArray(s.exclude);
  // Only when set (task files written before it existed stay byte-identical).
  if (s.exposed_copies != sandbox::CopyPolicy::kRefuse) {
    w.Key("exposed_copies"), w.String(sandbox::CopyPolicyName(s.exposed_copies));
  }
  w.Key("image_name"), w.String(s.image_name);
  w.Key("install"), w.StringArray(s.install);
  w.Key("install_inputs"), w.StringArray(s.install_inputs);
  // Only when set (task files written before it existed stay byte-identical).
  if (s.install_network) w.Key("install_network"), w.Bool(true);
  w.Key("limits"), w.BeginObject();
  // cpus and disk_mb only when set (task files written before they existed stay
  // byte-identical).
  if (s.limits.cpus != sandbox::Limits{}.cpus) {
    char buf[32];
    auto end = std::to_chars(buf, buf + sizeof buf, s.limits.cpus).ptr;
    w.Key("cpus"), w.Raw(std::string_view(buf, static_cast<size_t>(end - buf)));
  }
  if (s.limits.disk_mb != sandbox::Limits{}.disk_mb) w.Key("disk_mb"), w.Int(s.limits.disk_mb);
  w.Key("file_size_mb"), w.Int(s.limits.file_size_mb);
  w.Key("memory_mb"), w.Int(s.limits.memory_mb);
  w.Key("processes"), w.Int(s.limits.processes);
  w.EndObject();
  w.Key("network"), w.Bool(s.network);
  w.Key("pytest_args"), w.StringArray(s.pytest_args);
  w.Key("python"), w.String(s.python);
  w.Key("pythonpath"), w.StringArray(s.pythonpath);
  w.Key("repo"), w.String(s.repo);
  w.Key("tests"), w.StringArray(s.tests);
  w.Key("timeout"), w.Int(static_cast<int64_t>(s.timeout));
  w.Key("total_timeout"), w.Int(static_cast<int64_t>(s.total_timeout));
  w.EndObject();
  return out;
}

util::Expected<RepoSpec> RepoSpecFromJson(const std::string& text) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    RepoSpec s;
    s.repo = j.value("repo", "");
    if (!s.repo.empty() && !IsRepoName(s.repo)) {
      return util::Error{"repo '" + util::Printable(s.repo) + "' is not owner/repo"};
    }
    s.python = j.value("python", "python3");
    s.image_name = j.value("image_name", "");
    s.pythonpath = util::JsonStringList(j, "pythonpath");
    s.pytest_args = util::JsonStringList(j, "pytest_args");
    s.tests = util::JsonStringList(j, "tests");
    s.exclude = util::JsonStringList(j, "exclude");
    s.install = util::JsonStringList(j, "install");
    s.install_inputs = util::JsonStringList(j, "install_inputs");
    s.timeout = j.value("timeout", 600.0);
    s.total_timeout = j.value("total_timeout", 0.0);
    s.network = j.value("network", false);
    s.install_network = j.value("install_network", false);
    if (auto policy = sandbox::ParseCopyPolicy(j.value("exposed_copies", "refuse")); policy.ok()) {
      s.exposed_copies = *policy;
    } else {
      return util::Error{"repo_settings: " + policy.error()};
    }
    if (j.contains("env") && j["env"].is_object()) {
      for (const auto& [k, v] : j["env"].items()) {
        if (v.is_string() && IsVariableName(k) && !IsFbkitVariable(k)) {
          s.vars.emplace_back(k, v.get<std::string>());
        }
      }
    }
    if (j.contains("limits") && j["limits"].is_object()) {
      const auto& l = j["limits"];
      s.limits.memory_mb = l.value("memory_mb", s.limits.memory_mb);
      s.limits.processes = l.value("processes", s.limits.processes);
      s.limits.file_size_mb = l.value("file_size_mb", s.limits.file_size_mb);
      s.limits.disk_mb = l.value("disk_mb", s.limits.disk_mb);
      s.limits.cpus = l.value("cpus", s.limits.cpus);
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    return util::Error{std::string("repo_settings: ") + e.what()};
  }
}

}  // namespace fbkit::runner

#include "extract/eval/instance.h"

#include <algorithm>
#include <iterator>
#include <filesystem>
#include <map>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "extract/eval/apply.h"
#include "extract/eval/checks.h"
#include "extract/taskdir/task_dir.h"
#include "extract/taskdir/verify.h"
#include "parser/python_parser.h"
#include "parser/source_files.h"
#include "runner/confine.h"
#include "runner/git.h"
#include "runner/outcome.h"
#include "util/patch.h"
#include "util/hash.h"
#include "util/json_read.h"
#include "util/strings.h"
#include "util/json_read.h"

namespace fbkit::extract::eval {

namespace {

using nlohmann::json;

// ---------------------------------------------------------------- predictions

void AddPrediction(const json& j, const std::string& where, uint64_t max_patch_bytes,
                   const PredictionFilter& wanted, std::set<std::string>* seen,
                   std::vector<Prediction>* out, std::vector<std::string>* errors) {
  if (!j.is_object()) return errors->push_back(where + ": not a JSON object");
  auto id = j.find("instance_id");
  if (id == j.end() || !id->is_string() || id->get<std::string>().empty()) {
    return errors->push_back(where + ": no instance_id");
  }
  Prediction p;
  p.instance_id = id->get<std::string>();
  p.where = where;
  auto patch = j.find("model_patch");
  if (patch != j.end() && !patch->is_null() && !patch->is_string()) {
    return errors->push_back(where + ": model_patch is not a string");
  }
  // One that will not be evaluated keeps its place (its errors) but not its patch.
  if (patch != j.end() && patch->is_string() && (!wanted || wanted(p.instance_id))) {
    const auto& text = patch->get_ref<const std::string&>();
    if (text.size() > max_patch_bytes) {
      return errors->push_back(where + ": model_patch has " + std::to_string(text.size()) +
                               " bytes, over the " + std::to_string(max_patch_bytes) +
                               " bytes an agent's patch may have");
    }
    p.patch = text;
  }
  auto model = j.find("model_name_or_path");
  p.model = model != j.end() && model->is_string() ? model->get<std::string>() : "unknown";
  if (!seen->insert(p.instance_id).second) {
    return errors->push_back(where + ": a second prediction for " + p.instance_id);
  }
  out->push_back(std::move(p));
}

bool Blank(const std::string& s) {
  return s.find_first_not_of(" \t\r\n") == std::string::npos;
}

// Whether `row` is a value that ends where the row does (a JSONL row, not the first line
// of a document spread over lines), judged by its brackets without parsing it.
bool ClosesOnItsLine(std::string_view row) {
  size_t end = util::ScanJsonBrackets(row).first_end;
  return end != std::string_view::npos &&
         row.find_first_not_of(" \t\r", end) == std::string_view::npos;
}

// ---------------------------------------------------------------- processes

struct Captured {
  int code = -1;
  bool timed_out = false;
  std::string output;
};

// Runs argv to its end or until `timeout` seconds (0 = none) pass; output captured.
util::Expected<Captured> Capture(util::Env& env, sandbox::Launcher& launcher,
                                 const sandbox::ProcessSpec& spec, double timeout) {
  auto exit = sandbox::RunToCompletion(launcher, spec, timeout);
  if (!exit.ok()) return exit.failure();
  if (exit->output_cut) return util::Error{spec.argv.front() + ": its output was cut at the sandbox's limit"};
  auto out = env.ReadFile(spec.log_path);
  return Captured{exit->timed_out ? -1 : exit->code, exit->timed_out, out.ok() ? *out : ""};
}

// ---------------------------------------------------------------- L2 package checks

// Absolute imports of the original library by the modules under `site` (agent_code's),
// statically.
std::vector<std::string> StaticReexports(util::Env& env, const std::string& site,
                                         const std::set<std::string>& originals) {
  std::vector<std::string> out;
  auto parser = parser::PythonParser::Create();
  if (!parser.ok()) return {"cannot parse agent_code: " + parser.error()};
  auto tree = parser::FindPythonFiles(env, site, {});
  if (!tree.ok()) return {"cannot list agent_code: " + tree.error()};
  for (const auto& file : tree->files) {
    // The agent's files: read without following links, regular files only, bounded.
    auto text = env.ReadUntrusted(site, file.path, 16u << 20);
    if (!text.ok()) continue;
    parser::FileTable t = (*parser)->Parse(file.path, file.module, *text);
    for (const auto& imp : t.imports) {
      if (imp.level > 0) continue;
      std::vector<std::string> modules;
      if (imp.is_from) modules.push_back(imp.module);
      else for (const auto& n : imp.names) modules.push_back(n.name);
      for (const auto& m : modules) {
        if (originals.count(m.substr(0, m.find('.')))) {
          out.push_back(file.path + ":" + std::to_string(imp.line) +
                        " imports the original library (" + m + ")");
        }
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------- the instance

struct Context {
  util::Env& env;
  sandbox::Launcher& launcher;
  runner::TestRunner& tests;
  runner::Git& git;
  taskdir::Instance info;
  std::string task;  // absolute
  std::string work;
  std::string repo;
  std::vector<std::string> extra_path;
  std::set<std::string> changed;  // files the agent's patch changed (test files put back)
  std::string l2_site;            // L2: the directory holding the agent's agent_code
  std::string env_root;           // the task's own tree, which the environment comes from
  // What every command over the work copies runs in (git, patch, cp): the work dir writable,
  // the task directories readable; kNone only when the user turned the sandbox off.
  sandbox::Sandbox sandbox;
};

std::set<std::string> Originals(const Context& c) {
  return taskdir::OriginalPackagesIn(c.env, c.info.top_objects, c.repo);
}

void Suspect(EvalReport* r, const std::string& reason) {
  r->suspicious = true;
  r->suspicious_reasons.push_back(reason);
}

sandbox::Sandbox WorkSandbox(const Context& c, const std::string& level1) {
  std::vector<std::string> readable = {c.task};
  if (!level1.empty()) {
    auto real = c.env.RealPath(level1);
    readable.push_back(real.ok() ? *real : level1);
  }
  return runner::ToolSandbox(c.info.spec, {c.work}, readable);
}

util::Status Clone(Context& c, const std::string& task_dir) {
  auto presolved = taskdir::PlainPresolved(c.env, taskdir::TaskDir{task_dir});
  if (!presolved.ok()) return presolved.failure();
  auto cloned = c.git.Run(c.work, {"clone", "-q", "--no-hardlinks", *presolved, c.repo});
  return cloned.ok() ? util::Status::Ok() : util::Status(cloned.failure());
}

// The sections of a git patch (from one "diff --git " line to the next) that send a file as
// binary, joined: what ParsePatch needs to name them. The whole patch is never split into
// lines and copied (red team rounds 11 and 12: 31 million short lines took 1.2 GB).
std::string BinarySections(std::string_view patch) {
  std::string out;
  size_t start = std::string_view::npos;
  bool binary = false;
  auto flush = [&](size_t end) {
    if (start != std::string_view::npos && binary) out.append(patch.substr(start, end - start));
  };
  for (size_t b = 0; b < patch.size();) {
    size_t e = patch.find('\n', b);
    e = e == std::string_view::npos ? patch.size() : e + 1;
    std::string_view line = patch.substr(b, e - b);
    if (line.starts_with("diff --git ")) {
      flush(b);
      start = b;
      binary = false;
    } else if (line.starts_with("Binary files ") || line.starts_with("GIT binary patch")) {
      binary = true;
    }
    b = e;
  }
  flush(patch.size());
  return out;
}

// The agent's patch applied to `tree` as SWE-bench's harness would (inside the sandbox);
// false when it did not apply, else the paths it changed go to `changed`. A patch naming a
// path outside the tree or in a git directory is refused and flagged.
util::Expected<bool> ApplyAgentPatch(Context& c, const std::string& tree, const Prediction& p,
                                     EvalReport* r, std::vector<std::string>* changed) {
  runner::ApplyResult a = c.git.Apply(tree, p.patch, {runner::Leniency::kLenient});
  r->applied = a.applied;
  r->apply_method = a.method;
  r->apply_error = util::Tail(a.error, 2000);
  if (a.unsafe_path) Suspect(r, a.error);
  if (!a.applied) return false;
  auto paths = ChangedPaths(c.git, tree);
  if (!paths.ok()) return paths.failure();
  *changed = std::move(*paths);
  std::set<std::string> binary;
  if (auto sections = util::ParsePatch(runner::NormalizePatch(BinarySections(p.patch)));
      sections.ok()) {
    for (const auto& s : *sections) {
      if (s.binary) binary.insert(s.path());
    }
  }
  for (const auto& f : *changed) {
    if (IsCompiledFile(f)) {
      Suspect(r, "the patch adds compiled code " + f + " (Python may run it instead of the "
                 "source the patch shows)");
    }
    if (!f.ends_with(".py") && !f.ends_with(".pyw") && !f.ends_with(".pyi")) continue;
    auto text = c.env.ReadUntrusted(tree, f, 16u << 20);
    std::string why = HiddenSourceProblem(f, text.ok() ? *text : "", binary.count(f) > 0);
    if (!why.empty()) Suspect(r, "the patch hides code: " + why);
    // A package beside a module of the same name: Python imports the package.
    std::string module = f.ends_with("/__init__.py") ? f.substr(0, f.size() - 12) + ".py" : "";
    if (!module.empty() && c.env.Stat(util::JoinPath(tree, module), false).ok()) {
      Suspect(r, "the patch adds the package " + f + " beside the module " + module +
                 " (Python imports the package, not the module the diff may show)");
    }
  }
  return true;
}

// The test files (and conftests, pytest configuration) a patch may touch: each is put back
// before the tests run.
constexpr size_t kMaxRevertedTestFiles = 1000;

// L1: the agent's patch on presolved/, test files it touched put back, configuration checked.
util::Status PrepareLevel1(Context& c, const Prediction& p, EvalReport* r) {
  if (auto s = Clone(c, c.task); !s.ok()) return s;
  std::vector<std::string> changed;
  auto applied = ApplyAgentPatch(c, c.repo, p, r, &changed);
  if (!applied.ok()) return applied.failure();
  if (!*applied) return util::Status::Ok();
  std::set<std::string> task_tests(c.info.f2p_files.begin(), c.info.f2p_files.end());
  task_tests.insert(c.info.p2p_files.begin(), c.info.p2p_files.end());
  r->test_files_reverted = TestFilesAmong(changed, task_tests);
  if (r->test_files_reverted.size() > kMaxRevertedTestFiles) {
    // Each is put back by its own git runs (red team round 12: 1,500 new files under tests/
    // took 2.5 minutes; the 64 MiB bound admits 750,000): no agent needs to touch so many.
    r->applied = false;
    r->apply_error = "the patch touches " + std::to_string(r->test_files_reverted.size()) +
                     " test files (at most " + std::to_string(kMaxRevertedTestFiles) +
                     " are put back)";
    Suspect(r, r->apply_error);
    r->test_files_reverted.resize(kMaxRevertedTestFiles);
    return util::Status::Ok();
  }
  if (auto s = RestorePaths(c.git, c.repo, r->test_files_reverted); !s.ok()) return s;
  for (const auto& t : r->test_files_reverted) {
    if (t == "conftest.py" || t.ends_with("/conftest.py")) {
      Suspect(r, "the patch edits " + t + " (put back before running)");
    } else if (IsPytestConfigFile(t, task_tests)) {
      Suspect(r, "the patch changes pytest's configuration in " + t + " (put back before running)");
    }
  }
  const std::set<std::string> reverted(r->test_files_reverted.begin(), r->test_files_reverted.end());
  for (const auto& f : changed) {
    if (reverted.count(f)) continue;
    c.changed.insert(f);
    if (IsStartupFile(f)) Suspect(r, "the patch adds " + f + ", which changes how Python or pytest start");
    if (!IsPytestConfigFile(f, task_tests)) continue;
    auto before = c.git.Run(c.repo, {"show", "HEAD:" + f});
    auto after = c.env.ReadUntrusted(c.repo, f, 16u << 20);
    bool changed_config = DecidesAlone(f)
                              ? before.ok() != after.ok() || (before.ok() && *before != *after)
                              : PytestConfig(before.ok() ? *before : "") != PytestConfig(after.ok() ? *after : "");
    if (changed_config) {
      Suspect(r, "the patch changes pytest's configuration in " + f);
    }
  }
  return util::Status::Ok();
}

// L2: the original repository restored beside the agent's agent_code package.
util::Status PrepareLevel2(Context& c, const Prediction& p, const std::string& level1,
                           EvalReport* r) {
  auto l1 = taskdir::Level1Task(c.env, taskdir::TaskDir{c.task}, level1);
  if (!l1.ok()) return l1.failure();
  if (auto s = Clone(c, l1->dir); !s.ok()) return s;
  std::string agent = util::JoinPath(c.work, "agent");
  if (auto s = c.env.MakeDirs(agent); !s.ok()) return s;
  if (auto s = c.git.InitEmpty(agent, "empty"); !s.ok()) return s;
  std::vector<std::string> changed;
  auto applied = ApplyAgentPatch(c, agent, p, r, &changed);
  if (!applied.ok()) return applied.failure();
  if (!*applied) return util::Status::Ok();
  std::string package;
  for (std::string where : {"agent_code", "src/agent_code"}) {
    std::string dir = util::JoinPath(agent, where);
    if (c.env.Stat(util::JoinPath(dir, "__init__.py"), true).ok()) {
      package = dir;
      // What the patch changed, as the tests see it (the package runs from site/agent_code):
      // hooks and inspections the plugin journals there are the patch's.
      for (const auto& f : changed) {
        if (f.starts_with(where + "/")) c.changed.insert("agent_code" + f.substr(where.size()));
      }
      break;
    }
  }
  std::string site = util::JoinPath(c.work, "site");
  if (auto s = c.env.MakeDirs(site); !s.ok()) return s;
  c.extra_path = {site};
  if (package.empty()) return util::Status::Ok();  // the tests will fail to import it
  sandbox::ProcessSpec cp;
  cp.argv = {"cp", "-R", package, util::JoinPath(site, "agent_code")};
  cp.cwd = c.work;
  cp.log_path = util::JoinPath(c.work, "cp.log");
  cp.sandbox = c.sandbox;  // the agent's tree is read by a sandboxed cp, never on the host
  auto copied = Capture(c.env, c.launcher, cp, 0);
  if (!copied.ok() || copied->code != 0) return util::Error{"cannot install agent_code"};
  // The package lies in a repository of one empty commit, as in the agent's workspace: code
  // that asks git about its own directory when imported (a version module) gets an answer.
  if (auto s = c.git.InitEmpty(site, "agent_code"); !s.ok()) return s;
  std::set<std::string> originals = Originals(c);
  for (const auto& why : StaticReexports(c.env, site, originals)) {
    Suspect(r, why);
  }
  // At run time the plugin checks, inside the graded session itself, what of the original
  // repository agent_code imports or re-exports (no separate probe agent_code could detect).
  c.l2_site = site;
  return util::Status::Ok();
}

std::string RunLogs(util::Env& env, const std::string& dir) {
  auto entries = env.ListDir(dir);
  if (!entries.ok()) return "";
  std::vector<std::string> logs;
  for (const auto& e : *entries) {
    if (e.name.starts_with("session-") && e.name.ends_with(".log")) logs.push_back(e.name);
  }
  std::sort(logs.begin(), logs.end());
  // What the tests printed is theirs to make as large as the file size limit: each log is
  // read from its last kLogTail bytes (pytest's summary is its last lines).
  constexpr uint64_t kLogTail = 8u << 20;
  std::string out;
  for (const auto& name : logs) {
    std::string path = util::JoinPath(dir, name);
    auto st = env.Stat(path, false);
    auto text = env.ReadTail(path, kLogTail);
    if (!text.ok()) continue;
    out += "==== " + name + "\n";
    if (st.ok() && st->size > kLogTail) {
      out += "[fbkit: the first " + std::to_string(st->size - kLogTail) + " bytes left out]\n";
    }
    out += *text;
  }
  return out;
}

// The sha256 of each of `files` (the grader's, taskdir::GraderFiles) in the work copy: compared
// before and after the tests run.
std::map<std::string, std::string> Hashes(const Context& c, const std::vector<std::string>& files) {
  std::map<std::string, std::string> out;
  for (const auto& f : files) {
    auto text = c.env.ReadUntrusted(c.repo, f, 256u << 20);
    out[f] = text.ok() ? util::Sha256Hex(*text) : "unreadable: " + text.error();
  }
  return out;
}

void Score(Context& c, const EvalOptions& options, EvalReport* r) {
  runner::RepoSpec spec = c.info.spec;
  if (options.exposed_copies) spec.exposed_copies = *options.exposed_copies;
  if (options.timeout > 0) {
    spec.timeout = spec.timeout > 0 ? std::min(spec.timeout, options.timeout)
                                            : options.timeout;
  }
  std::vector<std::string> files = c.info.f2p_files;
  files.insert(files.end(), c.info.p2p_files.begin(), c.info.p2p_files.end());
  std::string run_dir = util::JoinPath(c.work, "run");
  std::vector<std::string> tests = c.info.f2p_files;
  tests.insert(tests.end(), c.info.p2p_files.begin(), c.info.p2p_files.end());
  std::vector<std::string> grader = taskdir::GraderFiles(c.env, c.repo, tests);
  auto before = Hashes(c, grader);
  runner::TestRunRequest request;
  request.root = c.repo;
  request.env_root = c.env_root;
  request.spec = spec;
  request.files = files;
  request.extra_pythonpath = c.extra_path;
  request.total_timeout = options.timeout;
  request.work_dir = run_dir;
  request.protect = grader;
  request.guard_packages = Originals(c);
  if (!c.l2_site.empty()) {
    request.l2_site = c.l2_site;
    request.l2_originals = {c.repo};
  }
  auto trace = c.tests.Run(request);
  for (const auto& [file, hash] : Hashes(c, grader)) {
    if (before[file] != hash) Suspect(r, "the tests changed " + file + " while they ran");
  }
  r->test_output = RunLogs(c.env, run_dir);
  runner::TestRun empty;
  if (!trace.ok()) r->error = "pytest: " + trace.error();
  const runner::TestRun& t = trace.ok() ? *trace : empty;
  for (const auto& id : c.info.f2p_tests) {
    r->f2p[id] = runner::OutcomeOf(t, id);
    r->f2p_passed += runner::F2PPasses(r->f2p[id]);
  }
  for (const auto& id : c.info.p2p_tests) {
    r->p2p[id] = runner::OutcomeOf(t, id);
    r->p2p_passed += runner::P2PHolds(r->p2p[id]);
  }
  for (const auto& [name, f] : t.files) r->timed_out |= f.status == runner::FileStatus::kTimeout;
  r->exitstatus = t.exitstatus;
  if (!trace.ok()) return;
  // Reads of a test file the gold's own run made (the test hands the library its path) are
  // the task's, not the patch's.
  std::set<std::pair<std::string, std::string>> hooks;
  std::set_difference(t.hooks.begin(), t.hooks.end(), c.info.gold_test_file_reads.begin(),
                      c.info.gold_test_file_reads.end(), std::inserter(hooks, hooks.end()));
  for (const auto& why : HookReasons(hooks, c.changed)) Suspect(r, why);
  for (const auto& what : HookNotes(hooks, c.changed)) r->notes.push_back(what);
  for (const auto& what : t.notes) {
    if (std::find(r->notes.begin(), r->notes.end(), what) == r->notes.end()) r->notes.push_back(what);
  }
  std::vector<std::string> expected = c.info.f2p_tests;
  expected.insert(expected.end(), c.info.p2p_tests.begin(), c.info.p2p_tests.end());
  std::vector<std::string> vanished = VanishedTests(t, expected);
  if (!vanished.empty()) {
    Suspect(r, std::to_string(vanished.size()) + " expected tests vanished from collection (first: " +
                   vanished.front() + ")");
  }
  if (std::string why = ExitContradiction(t); !why.empty()) Suspect(r, why);
  if (std::string why = SummaryContradiction(t, r->test_output); !why.empty()) Suspect(r, why);
  for (const auto& why : t.integrity) Suspect(r, why);
}

void CheckAgentLog(const Context& c, const EvalOptions& options, EvalReport* r) {
  if (options.agent_log.empty()) return;
  std::set<std::string> packages = Originals(c);
  for (const auto& line : LibraryReads(options.agent_log, packages)) {
    Suspect(r, "the agent log reads the installed library's sources: " + line);
  }
}

}  // namespace

std::vector<Prediction> ParsePredictions(const std::string& text, const std::string& path,
                                         std::vector<std::string>* errors,
                                         uint64_t max_patch_bytes, const PredictionFilter& wanted) {
  std::vector<Prediction> out;
  std::set<std::string> seen;
  // A prediction's other fields are small: what passes this is refused before it is parsed
  // (the parser's copies of a string cost several times its size).
  const uint64_t max_row_strings = max_patch_bytes + (1u << 20);
  util::JsonStringSizes sizes = util::MeasureJsonStrings(text);
  size_t first = text.find_first_not_of(" \t\r\n");
  bool document = first != std::string::npos &&
                  (text[first] == '[' ||
                   !ClosesOnItsLine(std::string_view(text).substr(
                       first, text.find('\n', first) - first)));
  if (sizes.longest > max_row_strings && document) {
    errors->push_back(path + ": holds a string of " + std::to_string(sizes.longest) +
                      " bytes, over the " + std::to_string(max_patch_bytes) +
                      " bytes an agent's patch may have; a file of predictions in one JSON "
                      "document is refused whole then (one prediction per line, JSONL, has the "
                      "others evaluated)");
    return out;
  }
  json whole = sizes.longest > max_row_strings ? json(json::value_t::discarded)
                                                : util::ParseUntrustedJson(text);
  if (!whole.is_discarded() && whole.is_array()) {
    for (size_t i = 0; i < whole.size(); ++i) {
      AddPrediction(whole[i], path + "[" + std::to_string(i) + "]", max_patch_bytes, wanted, &seen,
                    &out, errors);
    }
    return out;
  }
  if (!whole.is_discarded() && whole.is_object() && !whole.contains("instance_id")) {
    for (const auto& [key, value] : whole.items()) {
      json v = value;
      if (v.is_object() && !v.contains("instance_id")) v["instance_id"] = key;
      AddPrediction(v, path + "[" + key + "]", max_patch_bytes, wanted, &seen, &out, errors);
    }
    return out;
  }
  size_t start = 0;
  for (int line = 1; start < text.size(); ++line) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view row = std::string_view(text).substr(start, end - start);
    start = end + 1;
    if (row.find_first_not_of(" \t\r\n") == std::string_view::npos) continue;
    std::string where = path + ":" + std::to_string(line);
    if (auto row_sizes = util::MeasureJsonStrings(row); row_sizes.total > max_row_strings) {
      errors->push_back(where + ": " + std::to_string(row_sizes.total) +
                        " bytes of strings (the longest " + std::to_string(row_sizes.longest) +
                        "), over the " + std::to_string(max_patch_bytes) +
                        " bytes an agent's patch may have; not parsed");
      continue;
    }
    json j = util::ParseUntrustedJson(row);
    if (j.is_discarded()) {
      errors->push_back(where + ": not valid JSON");
      continue;
    }
    AddPrediction(j, where, max_patch_bytes, wanted, &seen, &out, errors);
  }
  return out;
}

EvalReport EvaluateInstance(const runner::Services& services,
                            const std::string& task_dir, const Prediction& prediction,
                            const EvalOptions& options) {
  [[maybe_unused]] auto& [env, launcher, tests, git_maker] = services;
  EvalReport r;
  r.instance_id = prediction.instance_id;
  r.model = prediction.model;
  r.patch_sha256 = util::Sha256Hex(prediction.patch);
  r.empty_patch = Blank(prediction.patch);
  r.sandbox = sandbox::SandboxKindName(options.sandbox);  // a task that cannot be read too
  auto info = taskdir::ReadInstance(env, taskdir::TaskDir{task_dir});
  if (!info.ok()) return r.error = info.error(), r;
  r.level = info->level;
  r.repo = info->repo;  // an instance refused below is still counted under its repository
  if (auto s = taskdir::CheckTaskSettings(taskdir::TaskDir{task_dir}, info->spec,
                                          options.trust_settings);
      !s.ok()) {
    return r.error = s.error(), r;
  }
  info->spec.sandbox = options.sandbox;
  info->spec.environment_cache = options.environment_cache;
  if (options.sandbox == sandbox::SandboxKind::kContainer) {
    auto used = runner::UseContainerImage(options.images, options.engine, info->instance_id, "environment",
                                          &info->spec);
    if (!used.ok()) return r.error = used.error(), r;
  }
  for (const auto& id : info->f2p_tests) r.f2p[id] = "not_run";
  for (const auto& id : info->p2p_tests) r.p2p[id] = "not_run";
  if (r.empty_patch) return r;
  auto real = env.RealPath(task_dir);
  std::unique_ptr<runner::Git> git = runner::MakeGit(services, options.work_dir);
  Context c{env, launcher, tests, *git, *info,
            real.ok() ? *real : task_dir, options.work_dir,
            util::JoinPath(options.work_dir, "repo"), {}, {}, {}, {}, {}};
  (void)env.RemoveAll(c.work);
  if (auto s = env.MakeDirs(c.work); !s.ok()) return r.error = s.error(), r;
  std::string level1 = options.level1_dir;
  if (level1.empty() && c.task.ends_with(".lv2")) level1 = c.task.substr(0, c.task.size() - 1) + "1";
  c.sandbox = WorkSandbox(c, level1);
  // Never the repository the task was cut from (taskdir::EnvironmentTree, as verify does):
  // the environment's entry is in the tests' sandbox, and its copy of that tree (or a
  // package installed from it) would hand the agent's code the gold solution.
  c.env_root = taskdir::TaskDir{r.level == 2 ? level1 : c.task}.presolved();
  c.git.Confine(c.sandbox);
  util::Status prepared = r.level == 2 ? PrepareLevel2(c, prediction, level1, &r)
                                       : PrepareLevel1(c, prediction, &r);
  if (!prepared.ok()) r.error = prepared.error();
  if (prepared.ok() && r.applied) {
    auto t = c.git.Run(c.repo, {"apply", taskdir::TaskDir{c.task}.test_patch()});
    if (!t.ok()) r.error = "test_patch.diff does not apply: " + t.error();
    else Score(c, options, &r);
  }
  CheckAgentLog(c, options, &r);
  r.pass_rate = r.f2p.empty() ? 0 : static_cast<double>(r.f2p_passed) / static_cast<double>(r.f2p.size());
  r.resolved = r.applied && r.error.empty() && !r.timed_out && !r.suspicious &&
               r.f2p_passed == r.f2p.size() && r.p2p_passed == r.p2p.size() && !r.f2p.empty();
  (void)env.RemoveAll(c.work);
  return r;
}

}  // namespace fbkit::extract::eval

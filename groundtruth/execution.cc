#include "groundtruth/execution.h"

#include <optional>
#include <set>

#include "util/patch.h"
#include "runner/confine.h"
#include "runner/environment.h"
#include "runner/git.h"
#include "runner/outcome.h"
#include "util/json_writer.h"

namespace fbkit::groundtruth {
namespace {

using runner::Outcome;

// A test's outcome in a run; nullopt when the run did not report it (missing).
using Reported = std::optional<Outcome>;

bool Is(const Reported& o, Outcome x) { return o && *o == x; }
bool IsFailure(const Reported& o) { return o && runner::Fails(*o); }
// Neither passed nor failed: skipped, xfailed, xpassed.
bool IsOther(const Reported& o) {
  return Is(o, Outcome::kSkipped) || Is(o, Outcome::kXfailed) || Is(o, Outcome::kXpassed);
}

void Sort(std::vector<std::string>* v) { std::sort(v->begin(), v->end()); }

std::string Base(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

}  // namespace

util::Expected<Outcomes> TestOutcomes(util::Env& env, runner::TestRunner& tests,
                                      const std::string& root, const std::string& env_root,
                                      const runner::RepoSpec& spec,
                                      const std::vector<std::string>& pythonpath,
                                      const std::vector<std::string>& files,
                                      const std::string& work_dir) {
  runner::TestRunRequest request;
  request.root = root;
  if (!spec.install.empty() && !env_root.empty()) {
    auto same = runner::SameDependencies(env, spec, root, env_root);
    if (!same.ok()) return same.failure();
    if (*same) request.env_root = env_root;
  }
  request.spec = spec;
  request.files = files;
  request.extra_pythonpath = pythonpath;
  request.work_dir = work_dir;
  auto run = tests.Run(request);
  (void)env.RemoveAll(work_dir);
  if (!run.ok()) return run.failure();
  return runner::OutcomesOf(*run);
}

void Classify(const Outcomes& before, const std::vector<Outcomes>& after, Validation* v) {
  std::set<std::string> ids;
  for (const auto& [id, o] : before) ids.insert(id);
  for (const auto& run : after) {
    for (const auto& [id, o] : run) ids.insert(id);
  }
  for (const auto& id : ids) {
    Reported b = runner::ReportedOutcome(before, id);
    Reported a = after.empty() ? Reported() : runner::ReportedOutcome(after[0], id);
    bool stable = true;
    for (const auto& run : after) stable = stable && runner::ReportedOutcome(run, id) == a;
    if (!stable) {
      v->flaky.push_back(id);
    } else if (Is(a, Outcome::kPassed)) {
      (Is(b, Outcome::kPassed) ? v->pass_to_pass : IsOther(b) ? v->ignored : v->fail_to_pass)
          .push_back(id);
    } else if (IsFailure(a)) {
      (Is(b, Outcome::kPassed) ? v->broken : v->still_failing).push_back(id);
    } else if (!a) {
      v->removed.push_back(id);
    } else {
      v->ignored.push_back(id);
    }
  }
  for (auto* l : {&v->fail_to_pass, &v->pass_to_pass, &v->flaky, &v->broken, &v->still_failing,
                  &v->removed, &v->ignored}) {
    Sort(l);
  }
}

std::vector<std::string> RunnableTests(const std::string& test_patch) {
  std::vector<std::string> out;
  auto files = util::ParsePatch(test_patch);
  if (!files.ok()) return out;
  for (const auto& f : *files) {
    std::string name = Base(f.path());
    bool runnable =
        name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"));
    if (runnable && !f.is_deleted()) out.push_back(f.path());
  }
  Sort(&out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<CheckoutError> PrepareCheckout(util::Env& env, sandbox::Launcher& launcher,
                                             const Instance& instance, const std::string& dir,
                                             bool gold) {
  runner::GitProgram git(env, launcher, util::JoinPath(util::DirName(dir), "logs"));
  if (auto s = git.Checkout(instance.repo, instance.base_commit, dir); !s.ok()) {
    return CheckoutError{false, "cannot check out " + instance.base_commit + ": " + s.error()};
  }
  if (auto s = git.Apply(dir, instance.test_patch); !s.ok()) {
    return CheckoutError{true, "the test patch does not apply: " + s.error()};
  }
  if (gold) {
    if (auto s = git.Apply(dir, instance.patch); !s.ok()) {
      return CheckoutError{true, "the gold patch does not apply: " + s.error()};
    }
  }
  return std::nullopt;
}

std::string EnvironmentSource(util::Env& env, sandbox::Launcher& launcher,
                              const Instance& instance, const runner::RepoSpec& spec,
                              const std::string& dir) {
  if (spec.install.empty()) return "";
  if (PrepareCheckout(env, launcher, instance, dir, true)) return "";
  return dir;
}

Validation Validate(const runner::Services& services,
                    const Instance& instance,
                    const runner::RepoSpec& spec, int repeat, const std::string& work_dir) {
  [[maybe_unused]] auto& [env, launcher, tests, git_maker] = services;
  Validation v;
  v.instance_id = instance.instance_id;
  auto done = [&](ValidationStatus status, const std::string& reason) {
    v.status = status;
    v.reason = reason;
    (void)env.RemoveAll(work_dir);
    return v;
  };
  if (auto p = util::ParsePatch(instance.patch); !p.ok() || p->empty()) {
    return done(ValidationStatus::kDiscarded,
                p.ok() ? "the gold patch is empty" : "gold patch: " + p.error());
  }
  v.test_files = RunnableTests(instance.test_patch);
  if (v.test_files.empty()) {
    return done(ValidationStatus::kDiscarded, "the test patch touches no runnable test file");
  }
  std::string repo = util::JoinPath(work_dir, "repo");
  if (auto e = PrepareCheckout(env, launcher, instance, repo, false)) {
    return done(e->patch ? ValidationStatus::kDiscarded : ValidationStatus::kError, e->message);
  }
  std::string runs = util::JoinPath(work_dir, "run");
  std::string env_root =
      EnvironmentSource(env, launcher, instance, spec, util::JoinPath(work_dir, "env-source"));
  auto before =
      TestOutcomes(env, tests, repo, env_root, spec, instance.pythonpath, v.test_files, runs);
  if (!before.ok()) {
    return done(ValidationStatus::kError, "pytest before the gold patch: " + before.error());
  }
  auto git_ptr = runner::MakeGit(services, util::JoinPath(work_dir, "logs"));
  runner::Git& git = *git_ptr;
  // The tests have written the checkout: git over it runs sandboxed.
  git.Confine(runner::ToolSandbox(spec, {work_dir}, {instance.repo}));
  if (auto s = git.Apply(repo, instance.patch); !s.ok()) {
    return done(ValidationStatus::kDiscarded, "the gold patch does not apply: " + s.error());
  }
  std::vector<Outcomes> after;
  for (int k = 0; k < std::max(1, repeat); ++k) {
    auto o =
        TestOutcomes(env, tests, repo, env_root, spec, instance.pythonpath, v.test_files, runs);
    if (!o.ok()) {
      return done(ValidationStatus::kError, "pytest with the gold patch: " + o.error());
    }
    after.push_back(std::move(*o));
  }
  Classify(*before, after, &v);
  if (v.fail_to_pass.empty()) {
    return done(ValidationStatus::kDiscarded, "no test goes from failing to passing");
  }
  return done(ValidationStatus::kOk, "");
}

const char* ValidationStatusName(ValidationStatus status) {
  switch (status) {
    case ValidationStatus::kOk: return "ok";
    case ValidationStatus::kDiscarded: return "discarded";
    case ValidationStatus::kError: return "error";
  }
  return "error";
}

std::string ValidationJson(const Validation& v) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("FAIL_TO_PASS"), w.StringArray(v.fail_to_pass);
  w.Key("PASS_TO_PASS"), w.StringArray(v.pass_to_pass);
  w.Key("broken"), w.StringArray(v.broken);
  w.Key("flaky"), w.StringArray(v.flaky);
  w.Key("ignored"), w.StringArray(v.ignored);
  w.Key("instance_id"), w.String(v.instance_id);
  w.Key("reason"), w.String(v.reason);
  w.Key("removed"), w.StringArray(v.removed);
  w.Key("schema"), w.String("fbkit.race-validation/1");
  w.Key("status"), w.String(ValidationStatusName(v.status));
  w.Key("still_failing"), w.StringArray(v.still_failing);
  w.Key("test_files"), w.StringArray(v.test_files);
  w.EndObject();
  return out + "\n";
}

}  // namespace fbkit::groundtruth

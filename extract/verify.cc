#include "extract/verify.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "runner/confine.h"
#include "runner/outcome.h"
#include "util/json_read.h"

namespace fbkit::extract {

namespace {

// A test that does not fail its session: a non-strict xfail may pass or fail from run to run
// (pytest's own suite has such races), both count.
bool Passed(const std::string& outcome) { return runner::PassesSession(outcome); }

// The line of a pytest failure text that says what went wrong: the first "E   " line (the
// failed assertion or the exception), else the last non-empty line.
std::string ErrorLine(const std::string& message) {
  std::string last, last_e;
  size_t b = 0;
  while (b < message.size()) {
    size_t e = std::min(message.find('\n', b), message.size());
    std::string line = message.substr(b, e - b);
    b = e + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    last = line;
    if (line.starts_with("E ") && last_e.empty()) last_e = line;
  }
  std::string out = last_e.empty() ? last : last_e;
  return out.size() > 300 ? out.substr(0, 300) + "..." : out;
}

}  // namespace

util::Expected<std::map<std::string, std::string>> RunTests(
    runner::TestRunner& tests, const std::string& root, const runner::RepoSpec& settings,
    const std::vector<std::string>& files, const std::string& work_dir, double* seconds,
    std::map<std::string, std::string>* errors, std::map<std::string, std::string>* messages) {
  auto start = std::chrono::steady_clock::now();
  runner::TestRunRequest request;
  request.root = root;
  request.spec = settings;
  request.files = files;
  request.work_dir = work_dir;
  auto trace = tests.Run(request);
  if (seconds) {
    *seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  if (!trace.ok()) return util::Error{trace.error()};
  for (const auto& [path, f] : trace->files) {
    if (messages && f.error) (*messages)[path] = *f.error;
    for (const auto& [id, t] : f.tests) {
      if (t.message && errors) (*errors)[id] = ErrorLine(*t.message);
      if (t.message && messages) (*messages)[id] = *t.message;
    }
  }
  return runner::OutcomesOf(*trace);
}

VerifyReport VerifyTask(util::Env& env, runner::Launcher& launcher, runner::TestRunner& tests,
                        const std::string& task_dir, const VerifyOptions& options) {
  VerifyReport r;
  auto fail = [&](const std::string& why, VerifyFailure failure = VerifyFailure::kSetup) {
    r.ok = false;
    r.failure = failure;
    r.reason = why;
    (void)env.RemoveAll(options.work_dir);
    return r;
  };
  auto info = ReadInstance(env, TaskDir{task_dir});
  if (!info.ok()) return fail(info.error());
  info->settings.sandbox = options.sandbox;
  info->settings.env_cache = options.env_cache;
  (void)env.RemoveAll(options.work_dir);
  if (auto s = env.MakeDirs(options.work_dir); !s.ok()) return fail(s.error());
  runner::Git git(env, launcher, options.work_dir);
  std::string work = util::JoinPath(options.work_dir, "repo");
  auto real_task = env.RealPath(task_dir);
  std::string abs_task = real_task.ok() ? *real_task : task_dir;
  // L1 starts from presolved/; L2 from the original repository, rebuilt from the sibling
  // L1 task (its presolved/ with its patch.diff applied).
  TaskDir task{abs_task}, base{abs_task};
  if (info->level == 2) {
    auto l1 = Level1Task(env, task, options.level1_dir);
    if (!l1.ok()) return fail(l1.error());
    base = *l1;
  }
  // The repository's tests write the work copy: git over it runs sandboxed from the start.
  git.Confine(runner::ToolSandbox(info->settings, {options.work_dir}, {task.dir, base.dir}));
  auto cloned = git.Run(options.work_dir, {"clone", "-q", "--no-hardlinks", base.presolved(), work});
  if (!cloned.ok()) return fail(cloned.error());
  if (info->level == 2) {
    auto restored = git.Run(work, {"apply", base.patch()});
    if (!restored.ok()) return fail("the L1 patch.diff does not apply: " + restored.error());
  }
  auto applied = git.Run(work, {"apply", task.test_patch()});
  if (!applied.ok()) return fail("test_patch.diff does not apply: " + applied.error());
  std::vector<std::string> files = info->f2p_files;
  files.insert(files.end(), info->p2p_files.begin(), info->p2p_files.end());
  r.f2p_points = info->f2p_tests.size();
  r.p2p_points = info->p2p_tests.size();
  // One run of the round's tests (0: the pre-solved code, 1: with the gold patch).
  struct Run {
    std::map<std::string, std::string> outcomes, errors, messages;
  };
  auto run_tests = [&](int round, const std::string& name) -> util::Expected<Run> {
    Run out;
    auto outcomes = RunTests(tests, work, info->settings, files, util::JoinPath(options.work_dir, name),
                             &r.pytest_seconds, &out.errors, &out.messages);
    ++r.pytest_runs;
    if (!outcomes.ok() && info->level == 2 && round == 0) {
      // Without agent_code a redirected conftest cannot even be loaded: nothing passes.
      outcomes = std::map<std::string, std::string>{};
    }
    if (!outcomes.ok()) return util::Error{outcomes.error()};
    out.outcomes = std::move(*outcomes);
    return out;
  };
  auto outcome_in = [](const Run& run, const std::string& id) {
    auto it = run.outcomes.find(id);
    return it == run.outcomes.end() ? std::string("missing") : it->second;
  };
  // The round's verdict on `run`, flaky tests aside: "" when it holds, else why (`failure`
  // says which check; r.failures and r.messages the evidence).
  auto judge = [&](int round, const Run& run, VerifyFailure* failure) -> std::string {
    r.failures.clear();
    r.messages.clear();
    auto outcome = [&](const std::string& id) { return outcome_in(run, id); };
    size_t f2p_passed = 0, f2p_counted = 0;
    for (const auto& id : info->f2p_tests) {
      if (r.flaky.count(id)) continue;
      ++f2p_counted;
      f2p_passed += Passed(outcome(id));
    }
    for (const auto& id : info->p2p_tests) {
      if (!r.flaky.count(id) && !Passed(outcome(id))) r.failures.push_back("P2P " + id + " " + outcome(id));
    }
    if (round == 0) {
      r.f2p_pass_before = f2p_counted == 0 ? 0
                                           : static_cast<double>(f2p_passed) / static_cast<double>(f2p_counted);
      if (!r.failures.empty()) {
        for (const auto& p2p : info->p2p_files) {
          if (run.messages.count(p2p)) r.messages.push_back(run.messages.at(p2p));
        }
        for (const auto& id : info->p2p_tests) {
          if (!r.flaky.count(id) && !Passed(outcome(id)) && run.messages.count(id)) {
            r.messages.push_back(run.messages.at(id));
          }
        }
        *failure = VerifyFailure::kP2P;
        return "P2P tests fail on the pre-solved codebase (" + std::to_string(r.failures.size()) +
               ", first: " + r.failures.front() + ")";
      }
      if (r.f2p_pass_before > options.f2p_max_pass) {
        *failure = VerifyFailure::kF2PPasses;
        return "the F2P file still passes " + std::to_string(f2p_passed) + " of " +
               std::to_string(f2p_counted) + " tests on the pre-solved codebase (--f2p-max-pass " +
               std::to_string(options.f2p_max_pass) + ")";
      }
      return "";
    }
    std::string first_error;
    for (const auto& id : info->f2p_tests) {
      if (r.flaky.count(id) || Passed(outcome(id))) continue;
      r.failures.push_back("F2P " + id + " " + outcome(id));
      if (first_error.empty() && run.errors.count(id)) first_error = run.errors.at(id);
    }
    if (r.failures.empty()) return "";
    *failure = VerifyFailure::kGold;
    return "with patch.diff applied " + std::to_string(r.failures.size()) + " tests still fail (first: " +
           r.failures.front() + (first_error.empty() ? "" : ": " + first_error) + ")";
  };
  for (int round = 0; round < 2; ++round) {
    std::string name = "run" + std::to_string(round);
    auto first = run_tests(round, name);
    if (!first.ok() && round == 0) {
      // The pre-solved code breaks pytest itself (it imports what was removed before any
      // test runs, or is pytest): a P2P failure whose output names what is missing.
      r.messages.push_back(first.error());
      return fail("pytest: " + first.error(), VerifyFailure::kP2P);
    }
    if (!first.ok()) return fail("pytest: " + first.error());
    VerifyFailure failure = VerifyFailure::kNone;
    std::string why = judge(round, *first, &failure);
    if (!why.empty()) {
      // Once more before it decides: a test whose outcome differs between two runs of the
      // same code is flaky, left out of the task instead of deciding it.
      auto again = run_tests(round, name + "-again");
      if (!again.ok()) return fail(why, failure);
      for (const auto* ids : {&info->f2p_tests, &info->p2p_tests}) {
        for (const auto& id : *ids) {
          if (outcome_in(*first, id) != outcome_in(*again, id)) r.flaky.insert(id);
        }
      }
      why = judge(round, *again, &failure);
      if (!why.empty()) return fail(why, failure);
    }
    if (round == 0) {
      auto gold = git.Run(work, {"apply", task.patch()});
      if (!gold.ok()) return fail("patch.diff does not apply: " + gold.error());
    }
  }
  size_t f2p_left = 0;
  for (const auto& id : info->f2p_tests) f2p_left += !r.flaky.count(id);
  if (f2p_left == 0 && !info->f2p_tests.empty()) return fail("every F2P test is flaky", VerifyFailure::kGold);
  r.ok = true;
  (void)env.RemoveAll(options.work_dir);
  return r;
}

}  // namespace fbkit::extract

#include "extract/taskdir/verify.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <nlohmann/json.hpp>

#include "runner/confine.h"
#include "runner/outcome.h"
#include "util/json_read.h"

namespace fbkit::extract::taskdir {

namespace {

// A test that does not fail its session: a non-strict xfail may pass or fail from run to run
// (pytest's own suite has such races), both count.
// A missing test (nullopt) never passes.
bool Passed(const std::optional<runner::Outcome>& outcome) {
  return outcome && runner::PassesSession(*outcome);
}

// The outcome's name in a failure line; "missing" for a test the run did not report.
std::string NameOf(const std::optional<runner::Outcome>& outcome) {
  return outcome ? runner::OutcomeName(*outcome) : "missing";
}

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

std::string EnvironmentTree(runner::Git& git, const TaskDir& level1, const std::string& dest) {
  // The environment's key hashes the whole tree it is built from: from the task's own
  // presolved/ every task would build one of its own.
  if (git.Run(util::DirName(dest), {"clone", "-q", "--no-hardlinks", level1.presolved(), dest})
          .ok() &&
      git.Run(dest, {"apply", level1.patch()}).ok() &&
      git.Run(dest, {"apply", level1.test_patch()}).ok()) {
    return dest;
  }
  return level1.presolved();
}

util::Expected<std::map<std::string, runner::Outcome>> RunTests(
    runner::TestRunner& tests, const std::string& root, const std::string& env_root,
    const runner::RepoSpec& spec,
    const std::vector<std::string>& files, const std::string& work_dir, double* seconds,
    std::map<std::string, std::string>* errors, std::map<std::string, std::string>* messages,
    std::set<std::pair<std::string, std::string>>* hooks, const std::vector<std::string>& protect,
    const std::set<std::string>& packages) {
  auto start = std::chrono::steady_clock::now();
  runner::TestRunRequest request;
  request.guard_packages = packages;
  request.root = root;
  request.env_root = env_root;
  request.spec = spec;
  request.files = files;
  request.work_dir = work_dir;
  request.protect = protect;
  auto trace = tests.Run(request);
  if (seconds) {
    *seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  if (!trace.ok()) return trace.failure();
  if (hooks) hooks->insert(trace->hooks.begin(), trace->hooks.end());
  for (const auto& [path, f] : trace->files) {
    if (messages && f.error) (*messages)[path] = *f.error;
    for (const auto& [id, t] : f.tests) {
      if (t.message && errors) (*errors)[id] = ErrorLine(*t.message);
      if (t.message && messages) (*messages)[id] = *t.message;
    }
  }
  return runner::OutcomesOf(*trace);
}

namespace {

// One verification: the work copy (L1: presolved/; L2: the original rebuilt from the L1
// task) with the test patch applied, round 0 on it, the gold patch, round 1; a failing round
// runs once more and tests whose outcome changed are flaky (left out), as are tests whose ids
// neither gold run reproduces while their file ran.
class Verification {
 public:
  Verification(const runner::Services& services, const std::string& task_dir,
               const VerifyOptions& options)
      : env_(services.env), tests_(services.tests), task_dir_(task_dir), options_(options),
        git_ptr_(runner::MakeGit(services, options.work_dir)), git_(*git_ptr_),
        work_(util::JoinPath(options.work_dir, "repo")) {}

  VerifyReport Run() {
    auto info = ReadInstance(env_, TaskDir{task_dir_});
    if (!info.ok()) return Fail(info.error());
    info_ = std::move(*info);
    if (auto s = CheckTaskSettings(TaskDir{task_dir_}, info_.spec, options_.trust_settings); !s.ok()) {
      return Fail(s.error());
    }
    info_.spec.sandbox = options_.sandbox;
    info_.spec.environment_cache = options_.environment_cache;
    if (std::string why = Prepare(); !why.empty()) return Fail(why);
    files_ = info_.f2p_files;
    files_.insert(files_.end(), info_.p2p_files.begin(), info_.p2p_files.end());
    r_.f2p_points = info_.f2p_tests.size();
    r_.p2p_points = info_.p2p_tests.size();
    for (int round = 0; round < 2; ++round) {
      if (auto failed = Round(round); failed) return *failed;
      if (round == 0) {
        auto gold = git_.Run(work_, {"apply", task_.patch()});
        if (!gold.ok()) return Fail("patch.diff does not apply: " + gold.error());
      }
    }
    size_t f2p_left = 0;
    for (const auto& id : info_.f2p_tests) f2p_left += !r_.flaky.count(id);
    if (f2p_left == 0 && !info_.f2p_tests.empty()) {
      return Fail("every F2P test is flaky", VerifyFailure::kGold);
    }
    r_.ok = true;
    (void)env_.RemoveAll(options_.work_dir);
    return r_;
  }

 private:
  // One run of a round's tests (0: the pre-solved code, 1: with the gold patch).
  struct TestsRun {
    std::map<std::string, runner::Outcome> outcomes;
    std::map<std::string, std::string> errors, messages;
  };

  VerifyReport Fail(const std::string& why, VerifyFailure failure = VerifyFailure::kSetup) {
    r_.ok = false;
    r_.failure = failure;
    r_.reason = why;
    (void)env_.RemoveAll(options_.work_dir);
    return r_;
  }

  // The work copy with the test patch applied; "" when it is made, else why not.
  std::string Prepare() {
    (void)env_.RemoveAll(options_.work_dir);
    if (auto s = env_.MakeDirs(options_.work_dir); !s.ok()) return s.error();
    auto real_task = env_.RealPath(task_dir_);
    task_ = TaskDir{real_task.ok() ? *real_task : task_dir_};
    // Both start from an L1 presolved/ (L2: the sibling L1 task's, without its patch.diff:
    // the feature's own code is no part of the tree agent_code is graded in).
    TaskDir base = task_;
    if (info_.level == 2) {
      auto l1 = Level1Task(env_, task_, options_.level1_dir);
      if (!l1.ok()) return l1.error();
      base = *l1;
    }
    if (auto plain = PlainPresolved(env_, base); !plain.ok()) return plain.error();
    // The repository's tests write the work copy: git over it runs sandboxed from the start.
    git_.Confine(runner::ToolSandbox(info_.spec, {options_.work_dir}, {task_.dir, base.dir}));
    env_root_ = !options_.env_root.empty() ? options_.env_root
                : info_.spec.install.empty()
                    ? base.presolved()  // no environment to build
                    : EnvironmentTree(git_, base, util::JoinPath(options_.work_dir, "original"));
    auto cloned =
        git_.Run(options_.work_dir, {"clone", "-q", "--no-hardlinks", base.presolved(), work_});
    if (!cloned.ok()) return cloned.error();
    auto applied = git_.Run(work_, {"apply", task_.test_patch()});
    if (!applied.ok()) return "test_patch.diff does not apply: " + applied.error();
    return "";
  }

  util::Expected<TestsRun> RunOnce(int round, const std::string& name) {
    TestsRun out;
    std::set<std::pair<std::string, std::string>> hooks;
    auto outcomes = RunTests(tests_, work_, env_root_, info_.spec, files_,
                             util::JoinPath(options_.work_dir, name), &r_.pytest_seconds,
                             &out.errors, &out.messages, &hooks,
                             round == 1 ? GraderFiles(env_, work_, files_) : std::vector<std::string>{},
                             // What eval would refuse (a copy of the task's packages in view)
                             // is refused here first, naming the copy.
                             OriginalPackagesIn(env_, info_.top_objects, work_));
    for (const auto& hook : hooks) {
      if (round == 1 && runner::IsTaskHook(hook.second)) {
        r_.gold_test_file_reads.insert(hook);
      }
    }
    ++r_.pytest_runs;
    if (!outcomes.ok() && info_.level == 2 && round == 0) {
      // Without agent_code a redirected conftest cannot even be loaded: nothing passes.
      outcomes = std::map<std::string, runner::Outcome>{};
    }
    if (!outcomes.ok()) return outcomes.failure();
    out.outcomes = std::move(*outcomes);
    return out;
  }

  // A round: its tests run and judged, once more when they fail; the report when it fails.
  std::optional<VerifyReport> Round(int round) {
    std::string name = "run" + std::to_string(round);
    auto first = RunOnce(round, name);
    if (!first.ok() && round == 0) {
      // The pre-solved code breaks pytest itself (it imports what was removed before any
      // test runs, or is pytest): a P2P failure whose output names what is missing.
      r_.messages.push_back(first.error());
      return Fail("pytest: " + first.error(), VerifyFailure::kP2P);
    }
    if (!first.ok()) return Fail("pytest: " + first.error());
    VerifyFailure failure = VerifyFailure::kNone;
    std::string why = Judge(round, *first, &failure);
    if (why.empty()) return std::nullopt;
    // Once more before it decides: a test whose outcome differs between two runs of the
    // same code is flaky, left out of the task instead of deciding it.
    auto again = RunOnce(round, name + "-again");
    if (!again.ok()) return Fail(why, failure);
    for (const auto* ids : {&info_.f2p_tests, &info_.p2p_tests}) {
      for (const auto& id : *ids) {
        if (Outcome(*first, id) != Outcome(*again, id)) r_.flaky.insert(id);
        // With the gold patch the code is the traced one: an id that neither run reports
        // while its file ran names a test no run reproduces (parametrised by the clock or a
        // random value): left out as a flaky one is.
        if (round == 1 && !Outcome(*first, id) && !Outcome(*again, id) && FileRan(*first, id) &&
            FileRan(*again, id)) {
          r_.flaky.insert(id);
        }
      }
    }
    why = Judge(round, *again, &failure);
    if (!why.empty()) return Fail(why, failure);
    return std::nullopt;
  }

  static std::optional<runner::Outcome> Outcome(const TestsRun& run, const std::string& id) {
    return runner::ReportedOutcome(run.outcomes, id);
  }

  // Whether `run` reported any test of the file test `id` belongs to.
  static bool FileRan(const TestsRun& run, const std::string& id) {
    std::string prefix = id.substr(0, id.find("::")) + "::";
    auto it = run.outcomes.lower_bound(prefix);
    return it != run.outcomes.end() && it->first.starts_with(prefix);
  }

  // The round's verdict on `run`, flaky tests aside: "" when it holds, else why (`failure`
  // says which check; r.failures and r.messages the evidence).
  std::string Judge(int round, const TestsRun& run, VerifyFailure* failure) {
    r_.failures.clear();
    r_.messages.clear();
    for (const auto& id : info_.p2p_tests) {  // every P2P test passes in both rounds
      if (!r_.flaky.count(id) && !Passed(Outcome(run, id))) {
        r_.failures.push_back("P2P " + id + " " + NameOf(Outcome(run, id)));
      }
    }
    return round == 0 ? JudgePresolved(run, failure) : JudgeGold(run, failure);
  }

  // Round 0: the P2P tests pass, the F2P file passes at most --f2p-max-pass.
  std::string JudgePresolved(const TestsRun& run, VerifyFailure* failure) {
    size_t f2p_passed = 0, f2p_counted = 0;
    for (const auto& id : info_.f2p_tests) {
      if (r_.flaky.count(id)) continue;
      ++f2p_counted;
      f2p_passed += Passed(Outcome(run, id));
    }
    r_.f2p_pass_before = f2p_counted == 0 ? 0
                                          : static_cast<double>(f2p_passed) / static_cast<double>(f2p_counted);
    if (!r_.failures.empty()) {
      for (const auto& p2p : info_.p2p_files) {
        if (run.messages.count(p2p)) r_.messages.push_back(run.messages.at(p2p));
      }
      for (const auto& id : info_.p2p_tests) {
        if (!r_.flaky.count(id) && !Passed(Outcome(run, id)) && run.messages.count(id)) {
          r_.messages.push_back(run.messages.at(id));
        }
      }
      *failure = VerifyFailure::kP2P;
      return "P2P tests fail on the pre-solved codebase (" + std::to_string(r_.failures.size()) +
             ", first: " + r_.failures.front() + ")";
    }
    if (r_.f2p_pass_before > options_.f2p_max_pass) {
      *failure = VerifyFailure::kF2PPasses;
      return "the F2P file still passes " + std::to_string(f2p_passed) + " of " +
             std::to_string(f2p_counted) + " tests on the pre-solved codebase (--f2p-max-pass " +
             std::to_string(options_.f2p_max_pass) + ")";
    }
    return "";
  }

  // Round 1: with the gold patch every F2P test passes too, as the harness scores it (an
  // xpassed F2P test fails there, so it fails here).
  std::string JudgeGold(const TestsRun& run, VerifyFailure* failure) {
    std::string first_error;
    for (const auto& id : info_.f2p_tests) {
      auto outcome = Outcome(run, id);
      if (r_.flaky.count(id) || (outcome && runner::F2PPasses(*outcome))) continue;
      r_.failures.push_back("F2P " + id + " " + NameOf(Outcome(run, id)));
      if (first_error.empty() && run.errors.count(id)) first_error = run.errors.at(id);
    }
    if (r_.failures.empty()) return "";
    *failure = VerifyFailure::kGold;
    return "with patch.diff applied " + std::to_string(r_.failures.size()) +
           " tests still fail (first: " + r_.failures.front() +
           (first_error.empty() ? "" : ": " + first_error) + ")";
  }

  util::Env& env_;
  runner::TestRunner& tests_;
  const std::string task_dir_;
  const VerifyOptions& options_;
  std::string env_root_;  // the tree the spec's environment is built from
  std::unique_ptr<runner::Git> git_ptr_;
  runner::Git& git_;
  const std::string work_;
  Instance info_;
  TaskDir task_;
  std::vector<std::string> files_;
  VerifyReport r_;
};

}  // namespace

VerifyReport VerifyTask(const runner::Services& services,
                        const std::string& task_dir, const VerifyOptions& options) {
  return Verification(services, task_dir, options).Run();
}

}  // namespace fbkit::extract::taskdir

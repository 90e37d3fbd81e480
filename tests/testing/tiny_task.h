// A one-function task directory for unit tests of verification and evaluation, made with
// git (real, or FakeGit in a FakeEnv): TASK/presolved (a repository whose pkg/core.py has f but not g), patch.diff
// (adds g), test_patch.diff (adds tests/test_feature.py) and instance.json (F2P
// kTinyF2p, P2P kTinyP2p, run by /usr/bin/python3).
#pragma once

#include <string>

#include "runner/git.h"
#include "sandbox/process.h"
#include "runner/spec.h"
#include "tests/testing/run.h"
#include "util/env.h"

namespace fbkit::testing {

inline constexpr char kTinyF2p[] = "tests/test_feature.py::test_g";
inline constexpr char kTinyP2p[] = "tests/test_core.py::test_f";

inline std::string JsonQuoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Writes the task into `task` through `env` and `git` (a FakeEnv and FakeGit for a task in
// memory); false when git failed.
inline bool WriteTinyTask(util::Env& env, runner::Git& git, const std::string& task) {
  std::string pre = task + "/presolved";
  auto write = [&](const std::string& path, const std::string& text) {
    return env.MakeDirs(util::DirName(path)).ok() && env.WriteFileAtomic(path, text).ok();
  };
  if (!write(pre + "/pkg/core.py", "def f():\n    return 1\n") ||
      !write(pre + "/tests/test_core.py", "def test_f():\n    pass\n")) {
    return false;
  }
  if (!git.Run(pre, {"init", "-q"}).ok() || !git.Run(pre, {"add", "-A"}).ok() ||
      !git.Run(pre, {"commit", "-q", "-m", "presolved"}).ok()) {
    return false;
  }
  if (!write(pre + "/pkg/core.py", "def f():\n    return 1\n\n\ndef g():\n    return 2\n")) return false;
  auto gold = git.Run(pre, {"diff"});
  if (!gold.ok() || !git.Run(pre, {"checkout", "-q", "--", "."}).ok()) return false;
  runner::RepoSpec spec;
  spec.python = "/usr/bin/python3";
  return write(task + "/patch.diff", *gold) &&
         write(task + "/test_patch.diff",
               "diff --git a/tests/test_feature.py b/tests/test_feature.py\nnew file mode "
               "100644\n--- /dev/null\n+++ b/tests/test_feature.py\n@@ -0,0 +1,2 @@\n+def "
               "test_g():\n+    pass\n") &&
         write(task + "/instance.json",
               std::string("{\"instance_id\": \"x.lv1\", \"level\": 1, \"FAIL_TO_PASS\": "
                           "[\"tests/test_feature.py\"], \"PASS_TO_PASS\": "
                           "[\"tests/test_core.py\"], \"f2p_tests\": [\"") +
                   kTinyF2p + "\"], \"p2p_tests\": [\"" + kTinyP2p + "\"], \"repo_settings\": " +
                   JsonQuoted(runner::RepoSpecJson(spec)) + "}");
}

// The same task on disk, made with real git (its logs under `scratch`).
inline bool WriteTinyTask(const std::string& task, const std::string& scratch) {
  runner::GitProgram git(util::RealEnv(), sandbox::RealLauncher(), scratch);
  return WriteTinyTask(util::RealEnv(), git, task);
}

}  // namespace fbkit::testing

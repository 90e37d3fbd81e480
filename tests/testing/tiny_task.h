// A one-function task directory for unit tests of verification and evaluation, made with
// real git: TASK/presolved (a repository whose pkg/core.py has f but not g), patch.diff
// (adds g), test_patch.diff (adds tests/test_feature.py) and instance.json (F2P
// kTinyF2p, P2P kTinyP2p, run by /usr/bin/python3).
#pragma once

#include <filesystem>
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

// Writes the task into `task` (git's logs under `scratch`); false when git failed.
inline bool WriteTinyTask(const std::string& task, const std::string& scratch) {
  std::string pre = task + "/presolved";
  std::filesystem::create_directories(pre + "/pkg");
  std::filesystem::create_directories(pre + "/tests");
  WriteFileOrDie(pre + "/pkg/core.py", "def f():\n    return 1\n");
  WriteFileOrDie(pre + "/tests/test_core.py", "def test_f():\n    pass\n");
  runner::Git git(util::RealEnv(), sandbox::RealLauncher(), scratch);
  if (!git.Run(pre, {"init", "-q"}).ok() || !git.Run(pre, {"add", "-A"}).ok() ||
      !git.Run(pre, {"commit", "-q", "-m", "presolved"}).ok()) {
    return false;
  }
  WriteFileOrDie(pre + "/pkg/core.py", "def f():\n    return 1\n\n\ndef g():\n    return 2\n");
  auto gold = git.Run(pre, {"diff"});
  if (!gold.ok() || !git.Run(pre, {"checkout", "-q", "--", "."}).ok()) return false;
  WriteFileOrDie(task + "/patch.diff", *gold);
  WriteFileOrDie(task + "/test_patch.diff",
                 "diff --git a/tests/test_feature.py b/tests/test_feature.py\nnew file mode "
                 "100644\n--- /dev/null\n+++ b/tests/test_feature.py\n@@ -0,0 +1,2 @@\n+def "
                 "test_g():\n+    pass\n");
  runner::RepoSpec spec;
  spec.python = "/usr/bin/python3";
  WriteFileOrDie(task + "/instance.json",
                 std::string("{\"instance_id\": \"x.lv1\", \"level\": 1, \"FAIL_TO_PASS\": "
                             "[\"tests/test_feature.py\"], \"PASS_TO_PASS\": "
                             "[\"tests/test_core.py\"], \"f2p_tests\": [\"") +
                     kTinyF2p + "\"], \"p2p_tests\": [\"" + kTinyP2p + "\"], \"repo_settings\": " +
                     JsonQuoted(runner::RepoSpecJson(spec)) + "}");
  return true;
}

}  // namespace fbkit::testing

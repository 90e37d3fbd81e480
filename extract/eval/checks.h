// The grader's checks that an instance's run was clean, each a pure function over what
// the evaluation saw: test files and pytest configuration the agent touched, hooks its
// code implements, tests that vanished, an exit status that contradicts the outcomes, an
// L2 package that imports the original library, and an agent log that reads its sources.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/test_run.h"

namespace fbkit::extract::eval {

// Files the grader puts back before running: test files (the task's F2P/P2P files, any
// conftest.py, every file under tests/ or test/ directories, whatever its kind).
std::vector<std::string> TestFilesAmong(const std::vector<std::string>& changed,
                                        const std::set<std::string>& task_test_files);

// The [pytest]-related sections of a configuration file (pytest.ini, tox.ini, setup.cfg,
// pyproject.toml), concatenated: a change in them changes how pytest collects.
std::string PytestConfig(std::string_view text);
// Whether `path` is a file pytest may take its configuration from when it runs
// `test_files`: pytest.ini, .pytest.ini, tox.ini, setup.cfg or pyproject.toml in the root or
// in a directory above one of them.
bool IsPytestConfigFile(const std::string& path, const std::set<std::string>& test_files);
// pytest.ini and .pytest.ini are pytest's configuration by their mere presence (even empty).
bool DecidesAlone(const std::string& path);

// Compiled code (a .pyc, .pyo, .so, .pyd, .dylib, .dll, or anything under __pycache__):
// Python may run it instead of the source a patch shows (an unchecked-hash .pyc is loaded
// without looking at its .py; a sourceless .pyc is imported as the module).
bool IsCompiledFile(const std::string& path);

// Why Python would run other code than a patch shows for the Python source file `path` with
// `text` (as patched), "" when it would not: a source encoding other than UTF-8 or ASCII
// (UTF-7 hides code in a comment), or the file sent as a binary hunk (`binary`).
std::string HiddenSourceProblem(const std::string& path, std::string_view text, bool binary);

// Files whose mere presence changes the interpreter or pytest (site hooks, .pth files,
// distribution metadata that can declare pytest11 entry points), or stands in for fbkit's own
// modules by name (fbkit_agent, fbkit_core, fbkit_boot, fbkit_probe, _fbkit_accel).
bool IsStartupFile(const std::string& path);

// Reasons from the hooks pytest found in files the patch changed: hook implementations,
// pytest's machinery replaced, test files read, test functions wrapped or called by them.
// Inspections of the running frames or of the garbage collector's objects are not among
// them (honest code does it: a logger's call site, `sys._getframe(1)` for the caller's
// module): those are HookNotes.
std::vector<std::string> HookReasons(const std::set<std::pair<std::string, std::string>>& hooks,
                                     const std::set<std::string>& changed);
// The journaled inspections (runner::kInspects) by files the patch changed: notes for review.
std::vector<std::string> HookNotes(const std::set<std::pair<std::string, std::string>>& hooks,
                                   const std::set<std::string>& changed);

// Expected test ids of files that collected fine but are no longer collected.
std::vector<std::string> VanishedTests(const runner::TestRun& trace,
                                       const std::vector<std::string>& expected);

// A reason when pytest's exit status (as its hooks saw it, and the process's) contradicts
// the per-test outcomes; empty when consistent or when the run did not finish.
std::string ExitContradiction(const runner::TestRun& trace);

// pytest's own terminal summary ("15 failed, 78 passed in 0.12s") of each session in `logs`
// (RunLogs: blocks headed "==== session-N.log") against the journal: more tests passed by
// the journal than pytest's summaries count means the journal was rewritten behind
// pytest's back (red team round 5). "" when they agree, or when a session printed no
// summary or the run did not finish normally (nothing to compare).
std::string SummaryContradiction(const runner::TestRun& trace, std::string_view logs);

// Lines of an agent's log that read the installed original library's sources (cat, head,
// sed, grep, open(...) ... of site-packages/PKG or dist-packages/PKG), at most `limit`.
std::vector<std::string> LibraryReads(std::string_view log, const std::set<std::string>& packages,
                                      size_t limit = 3);

}  // namespace fbkit::extract::eval

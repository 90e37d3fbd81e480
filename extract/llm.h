// The --llm-cmd protocol of fb-extract: fbkit writes one JSON request on the command's stdin
// and reads one JSON answer on its stdout. The request's "task" says what is asked:
//   choosing top-level objects:
//   request: {"schema": "fbkit.llm-top/1", "task": "classify_top_objects", "test_file": PATH,
//             "test_source": TEXT, "candidates": [{"id", "source", "calls", "spread"}]}
//   answer:  {"top_objects": [ID, ...]}  (or a bare array of ids); unknown ids are an error.
//   a docstring for an interface whose original has none:
//   request: {"schema": "fbkit.llm-docstring/1", "task": "docstring", "repo", "id", "kind",
//             "name", "signature", "source", "callers": [{"id", "signature"}],
//             "callees": [{"id", "signature"}]}
//   answer:  {"docstring": TEXT}  (no quotes; describes behaviour, not the code)
//   the Task section of the problem statement (no test code is sent):
//   request: {"schema": "fbkit.llm-statement/1", "task": "task_statement", "repo", "level",
//             "interfaces": PYTHON (the top objects' signatures and docstrings)}
//   answer:  {"task_statement": MARKDOWN}  (title, core functionalities, main features,
//             key challenges; it becomes the body of "## Task")
#pragma once

#include <string>

#include "extract/repo.h"
#include "extract/select.h"
#include "extract/statement.h"
#include "runner/process.h"
#include "util/env.h"

namespace fbkit::extract {

TopChooser LlmTopChooser(util::Env& env, runner::Launcher& launcher, std::string cmd,
                         const Repo& repo, std::string work_dir);

// Docstrings and task statements from the command; `repo_name` is sent along.
StatementModel LlmStatementModel(util::Env& env, runner::Launcher& launcher, std::string cmd,
                                 const Repo& repo, std::string repo_name, std::string work_dir);

}  // namespace fbkit::extract

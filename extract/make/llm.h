// The model steps of fb-extract (model/model.h: the --llm-cmd command or a built-in
// provider): one JSON request, one JSON answer. The request's "task" says what is asked:
//   choosing top-level objects:
//   request: {"schema": "fbkit.llm-top/1", "task": "classify_top_objects", "test_file": PATH,
//             "test_source": TEXT, "candidates": [{"id", "source", "calls", "spread",
//             "depth", "facts" (what the learned chooser weighs, by name: TopFactNames),
//             "members" (a class's: the ids of its methods the file's run reaches),
//             "member_facts" (a class's: each member's facts by its id)}]}
//   answer:  {"top_objects": [ID, ...]}  (or a bare array of ids): candidates, or members
//             (a method instead of its class whole); unknown ids are an error.
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

#include "extract/make/repo.h"
#include "extract/make/select.h"
#include "extract/make/statement.h"
#include "model/model.h"
#include "util/json_writer.h"

namespace fbkit::extract::make {

// An item's facts as a JSON object by fact name, in name order: the `facts` of the request
// above and of `fb-extract tops --facts`.
void WriteTopFacts(const TopItem& item, util::JsonWriter& w);

// The model's choice of top-level objects; an empty choice when its answers stayed invalid
// and it falls back (PlanTask then uses the default rule).
TopChooser LlmTopChooser(model::Model& model, const Repo& repo);

// Docstrings and task statements from the model; `repo_name` is sent along. A blank text
// when its answers stayed invalid and it falls back (fbkit's own text is used).
StatementModel LlmStatementModel(model::Model& model, const Repo& repo, std::string repo_name);

}  // namespace fbkit::extract::make

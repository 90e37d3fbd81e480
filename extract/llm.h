// The --llm-cmd protocol for choosing top-level objects: fbkit writes one JSON request on
// the command's stdin and reads one JSON answer on its stdout.
//   request: {"schema": "fbkit.llm-top/1", "task": "classify_top_objects", "test_file": PATH,
//             "test_source": TEXT, "candidates": [{"id", "source", "calls", "spread"}]}
//   answer:  {"top_objects": [ID, ...]}  (or a bare array of ids); unknown ids are an error.
#pragma once

#include <string>

#include "extract/repo.h"
#include "extract/select.h"
#include "tracer/process.h"
#include "util/env.h"

namespace fbkit::extract {

TopChooser LlmTopChooser(util::Env& env, tracer::Launcher& launcher, std::string cmd,
                         const Repo& repo, std::string work_dir);

}  // namespace fbkit::extract

// The grading an exported task runs inside its container, one for every format that grades
// there (Harbor's tests/test.sh, SWE-bench's eval_script): the files it needs under /tests
// (grade.py, the pytest plugin fbkit_outcomes.py, task.json, the test patch; at L2 also the
// pre-solved tree, the original's patch and the environment's files), the shell that makes
// the tree to test (L1: test code the agent touched put back and the F2P file added, in
// /testbed; L2: the environment built and the original restored at /fbkit/grade, the agent's
// agent_code importable from /testbed) and the pytest command that records every outcome.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "extract/image/recipe.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::dataset {

struct Verifier {
  std::map<std::string, std::string> files;  // path under /tests -> bytes
  // Shell lines run from anywhere; on a failure they call `fbkit_fail MESSAGE`, which the
  // format defines. They end in the tree to test with PYTHONPATH exported.
  std::string prepare;
  // The test command (outcomes to $FBKIT_OUTCOMES, printed last as "STATUS ID" lines).
  std::string pytest;
};

// The verifier of the task in `task_dir`; `context` is its agent image's one build context
// (image::WriteOneContext: an L2 task's environment files and script come from it).
util::Expected<Verifier> MakeVerifier(util::Env& env, const std::string& task_dir,
                                      const image::OneContext& context);

// Shell that writes `files` under `dir` exactly (text in quoted here-documents, anything else
// in base64), for formats that carry their verifier inside one script.
std::string WriteFilesScript(const std::map<std::string, std::string>& files, const std::string& dir);

}  // namespace fbkit::extract::dataset

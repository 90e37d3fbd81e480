// File and entity localisation by ablation (RACE's "necessary" files and tasks): in a
// checkout with the test and gold patches applied, revert one changed source file (or one
// entity's change) at a time, rerun the FAIL_TO_PASS tests, and call it necessary when any
// of them no longer passes.
//
// Files: test files (by path, from either patch) -> test; documentation (by path) -> other
// without a run; every other file of the gold patch is ablated: necessary, other (not
// necessary), or unknown when the ablation cannot be run (a Python file that no longer
// parses after the revert, a revert that does not apply) -- never guessed. The F2P tests
// must pass on the untouched gold checkout first; after that, a run that pytest cannot
// even start (e.g. the revert breaks an import in conftest.py) counts as failing F2P. When
// no file is necessary alone (redundant changes: each would do), every file that makes the
// F2P tests pass with all other not-necessary files reverted is necessary ("sufficient
// alone").
// Entities: every non-cosmetic entity change of a non-test Python file: new ones are removed
// (a block left empty gets `pass`), modified and renamed ones get their old text back,
// deleted ones are re-inserted after their previous sibling; "true", "false" or "unknown".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "groundtruth/entity_changes.h"
#include "groundtruth/execution.h"
#include "groundtruth/records.h"
#include "parser/python_parser.h"
#include "runner/services.h"
#include "sandbox/process.h"
#include "runner/test_run.h"

namespace fbkit::groundtruth {

// What reverting a target did to the F2P tests; VerdictName is what the gt document says.
enum class Verdict {
  kNecessary,     // "necessary": an F2P test fails without it
  kNotNecessary,  // "not_necessary": they all still pass
  kUnknown,       // "unknown": it could not be reverted (or the tests could not run)
  kOther,         // "other": set aside (documentation)
};

std::string_view VerdictName(Verdict v);

struct Ablation {
  std::string target;  // a file path or an entity id
  Verdict verdict = Verdict::kUnknown;
  std::string reason;  // unknown: why; necessary: the first F2P test that failed
};

struct Localization {
  std::string instance_id;
  std::string error;  // the checkout or the patches failed (nothing else is set)
  std::vector<std::string> necessary, other, test, unknown;
  std::vector<Ablation> files;
  std::vector<Ablation> entities;
  std::vector<GtTask> tasks;  // entity changes (cosmetic left out) with their necessity
};

// The file with one entity's change undone, or an error when it cannot be built.
util::Expected<std::string> RevertEntity(parser::PythonParser& parser, const FileVersions& file,
                                         const EntityChange& change);

// Runs the ablations of one instance in `work_dir` (removed afterwards); `entities` false
// skips the entity level (tasks then carry "unknown"). Each run reruns only the F2P tests
// when they pass alone on the gold checkout (`whole_files` false), else their whole files.
Localization Localize(const runner::Services& services,
                      parser::PythonParser& parser,
                      const Instance& instance, const runner::RepoSpec& spec,
                      const std::vector<std::string>& fail_to_pass, bool entities,
                      const std::string& work_dir, bool whole_files = false);

// One JSON line (keys sorted) for a localisation.
std::string LocalizationJson(const Localization& l);

}  // namespace fbkit::groundtruth

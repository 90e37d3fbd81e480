// One FeatureBench task from one F2P test file, end to end: plan (top objects, P2P files,
// BFS under a line cap), cut (re-planned until no code that runs names what goes), write the
// task directory (pre-solved git repository, gold patch, test patch, problem statement,
// instance.json) into a staging directory, post-verify it (repairing the plan from what
// failed, a few rounds), and publish it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "extract/make/cut.h"
#include "extract/make/repo.h"
#include "extract/make/select.h"
#include "extract/make/statement.h"
#include "extract/taskdir/verify.h"
#include "graph/dep_graph.h"
#include "runner/services.h"
#include "model/model.h"
#include "sandbox/process.h"
#include "runner/test_run.h"
#include "util/env.h"

namespace fbkit::extract::make {

// How instance ids are made. FeatureBench's: "{owner}__{repo}.{commit[:8]}.{stem}.{md5 of the
// test file's root-relative path, 8 hex}.lv{level}" (its case_converter); fbkit's (before
// FeatureBench's became the default): the same with a hash of the task's content (line
// cap, P2P files, extracted entities), so differently cut tasks of one file differ.
enum class IdScheme { kFeatureBench, kFbkit };

struct ExtractOptions {
  std::string out_dir;             // absolute
  std::string repo_name;           // "owner/repo"
  std::string base_commit;         // of the repository, "" when it is no git checkout
  // The nearest tag of base_commit (`git describe --tags --abbrev=0`), "" for none: presolved/'s
  // one commit carries it, so a version from git (setuptools-scm, hatch-vcs, versioneer) is
  // the original's release, never more of its history.
  std::string version_tag;
  std::vector<std::string> files;  // every file of the repository to copy (root-relative)
  // Files of a checkout git does not track (untracked, not ignored): traced and parsed, never
  // copied into a task (a build/lib copy or a .orig of the original code is the answer).
  std::vector<std::string> untracked;
  runner::RepoSpec spec;
  SelectOptions select;
  int min_lines = 100;
  bool verify = true;
  double f2p_max_pass = 0.3;
  bool level2 = true;
  // fbkit's rule before: no code that stays may name what is removed (CutRules::strict).
  // Default: FeatureBench's, code no P2P test executes may keep a dangling reference.
  bool strict_references = false;
  // The model of the model steps (--llm-cmd or --llm), or null for the deterministic
  // defaults; `chooser` and `statement_model` ask it (extract/make/llm.h).
  std::shared_ptr<model::Model> model;
  TopChooser chooser;
  StatementModel statement_model;
  IdScheme id_scheme = IdScheme::kFeatureBench;
};

// The repository-wide inputs every task shares.
struct ExtractContext {
  const Repo& repo;
  const CutIndex& index;
  const graph::DepGraph& graph;
  const std::vector<PassingFile>& passing;
  // The trace (its observed types go into statements); nullptr: none.
  const tracer::TraceSet* trace = nullptr;
};

// Why a candidate made no task; RejectionName is what summaries, state files and progress
// lines say.
enum class Rejection {
  kNone,                // emitted
  kNoPlan,              // "no plan": no top objects, no P2P files (select.h)
  kStillUsed,           // "still used": code that stays needs all that would go
  kTooFewLines,         // "too few lines": fewer than --min-lines to implement
  kUnparsableCut,       // "unparsable cut": a file the cut rewrote no longer parses
  kVerificationFailed,  // "verification failed" (after the repair rounds)
  kStatement,           // "statement": the problem statement could not be written
  kLevel2,              // "L2": the L2 variant could not be written (the L1 task stands)
  kIo,                  // "io": the task directory could not be written
  kModelUnavailable,    // "model unavailable": undecided, the model could not answer
  kInternalError,       // "internal error": undecided, fbkit failed on it (an exception: a bug)
  kEarlierRun,          // "(earlier run) rejected": a state file that cannot be read
};

std::string_view RejectionName(Rejection r);
// kEarlierRun for a name no Rejection has.
Rejection RejectionFromName(std::string_view name);

struct TaskOutcome {
  std::string f2p;
  bool emitted = false;
  Rejection rejection = Rejection::kNone;
  std::string detail;  // the rejection's details
  std::vector<std::string> instance_ids;
  int lines = 0;
  std::vector<std::string> repairs;  // one line per repair round (why and what changed)
  std::vector<std::string> flaky;    // tests left out: their outcome changed between two runs
  int pytest_runs = 0;
  double pytest_seconds = 0;
  double fbkit_seconds = 0;
};

// `parser` must belong to the calling thread. Never touches the repository itself.
TaskOutcome BuildTask(const runner::Services& services,
                      parser::PythonParser& parser,
                      const ExtractContext& ctx, const PassingFile& f2p,
                      const ExtractOptions& options);

// "owner__repo.<commit8>.<test_stem>.<hash8>.lv1" (see IdScheme; `content_digest` is used by
// the fbkit scheme only). Without a commit the commit part is "unknown" (FeatureBench's).
std::string InstanceId(IdScheme scheme, const std::string& repo_name, const std::string& commit,
                       const std::string& f2p, const std::string& content_digest, int level);

}  // namespace fbkit::extract::make

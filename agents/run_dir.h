// The run directories of agents' runs, named in this one place for those who write them
// (extract/infer, extract/eval) and those who read them (eval reads infer's results and logs;
// fb-race summarize reads both): `fb-extract infer`'s RUN_DIR and its instance directories,
// and `fb-extract eval`'s reports and summary (docs/extract.md).
#pragma once

#include <string>

#include "util/shard.h"

namespace fbkit::agents {

// Names inside an infer instance directory RUN_DIR/<id>, for reads relative to it.
inline constexpr char kResultFile[] = "result.json";
inline constexpr char kPatchFile[] = "patch.diff";  // also in an eval instance directory
inline constexpr char kStatementFile[] = "input/problem_statement.md";
inline constexpr char kOutputDir[] = "output";
inline constexpr char kModelFile[] = "model";

// Whether `dir` is named as an infer instance's output directory (".../output" or "output").
bool IsInferOutputDir(const std::string& dir);

// RUN_DIR/<id>: one agent's run; `workspace/` and `output/` are the agent's, the rest fbkit's.
struct InferInstanceDir {
  std::string dir;
  std::string workspace() const;  // the agent's project
  std::string statement() const;  // kStatementFile
  std::string output() const;     // $FBKIT_OUTPUT_DIR
  std::string agent_log() const;  // the agent's output, written by fbkit
  std::string patch() const;      // fbkit's diff of the workspace
  std::string result() const;     // fbkit.infer-result/1
  std::string model() const;      // kModelFile: the run's model name
};

// An infer RUN_DIR: instance directories, the predictions of all of them, a summary per
// shard, and `.fbkit/` (hidden from agents: each workspace's base and fbkit's scratch).
struct InferRunDir {
  std::string dir;
  InferInstanceDir instance(const std::string& id) const;
  std::string predictions() const;                   // predictions.jsonl
  std::string summary(const util::Shard& shard) const;  // infer_summary[-K-of-N].json
  std::string private_dir() const;                   // .fbkit
  std::string base(const std::string& id) const;     // .fbkit/base/<id>.git: the start
  std::string scratch(const std::string& id) const;  // .fbkit/work/<id>: git's logs
  std::string trash() const;                         // .fbkit/trash: what could not be removed
  std::string lock() const;                          // .fbkit/lock: shards writing together
};

// An eval run directory: per instance the patch graded, the tests' output and report.json;
// summary.json for the run; `.work/` while it runs.
struct EvalRunDir {
  std::string dir;
  std::string instance(const std::string& id) const;  // RUN/<id>
  std::string report(const std::string& id) const;    // RUN/<id>/report.json
  std::string summary() const;                         // RUN/summary.json
  std::string work() const;                            // RUN/.work
  std::string work(const std::string& id) const;       // RUN/.work/<id>
  std::string lock() const;                            // RUN/.fbkit-lock: shards merging
};
inline constexpr char kReportFile[] = "report.json";
inline constexpr char kTestOutputFile[] = "test_output.txt";

}  // namespace fbkit::agents

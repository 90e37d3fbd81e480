// The inputs every task of one repository shares, loaded once for `fb-extract task` and
// `all`: the dependency graph, the trace, the entity table with the sources, the cut index,
// the test files that pass (and why the others do not), and the repository's identity
// (name, commit, files to copy) in the tasks' options.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "extract/make/cut.h"
#include "extract/make/repo.h"
#include "extract/make/select.h"
#include "extract/make/task.h"
#include "graph/dep_graph.h"
#include "sandbox/process.h"
#include "runner/spec.h"
#include "tracer/trace.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::make {

struct WorkspaceRequest {
  std::string root;        // absolute
  std::string graph_path;  // fbkit.graph JSON (fb-graph build)
  std::string trace_path;  // fbkit.trace/1 (fb-graph trace)
  std::string out_dir;     // where tasks go; made when missing
  runner::RepoSpec spec;   // resolved: the spec file with the command line's overrides
  std::vector<std::string> excludes;     // globs of directories left out of the entity table
  std::optional<std::string> cache_dir;  // the entity table's content-hash cache
  std::string repo_name;   // "owner/repo"; "" for the spec's, else the origin's
};

struct Workspace {
  graph::DepGraph graph;
  tracer::TraceSet trace;
  std::unique_ptr<Repo> repo;
  std::unique_ptr<CutIndex> index;
  std::vector<PassingFile> passing;
  std::map<std::string, std::string> not_passing;  // test file -> why not
  // out_dir (absolute), repo_name, base_commit, files and spec filled in; the rest is
  // the caller's to set.
  ExtractOptions options;

  ExtractContext Context() const { return {*repo, *index, graph, passing, &trace}; }
};

// Errors name the file that could not be read or parsed.
util::Expected<Workspace> LoadWorkspace(util::Env& env, sandbox::Launcher& launcher,
                                        const WorkspaceRequest& request);

}  // namespace fbkit::extract::make

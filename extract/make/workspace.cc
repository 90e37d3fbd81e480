#include "extract/make/workspace.h"

#include <algorithm>
#include <iterator>

#include "graph/graph_io.h"
#include "parser/entity_table.h"
#include "runner/git.h"
#include "runner/repo_files.h"
#include "runner/spec.h"
#include "tracer/trace_json.h"
#include "util/parallel.h"
#include "util/strings.h"
#include "util/strings.h"

namespace fbkit::extract::make {
namespace {

// The graph and the trace, from their files.
util::Status ReadInputs(util::Env& env, const WorkspaceRequest& r, Workspace* w) {
  auto gtext = env.ReadFile(r.graph_path);
  if (!gtext.ok()) return util::Error{"--graph: " + gtext.error()};
  auto g = graph::ReadGraph(*gtext);
  if (!g.ok()) return util::Error{r.graph_path + ": " + g.error()};
  w->graph = std::move(*g);
  auto ttext = env.ReadFile(r.trace_path);
  if (!ttext.ok()) return util::Error{"--trace: " + ttext.error()};
  auto t = tracer::ParseTraceDocument(*ttext);
  if (!t.ok()) return util::Error{r.trace_path + ": " + t.error()};
  w->trace = std::move(*t);
  return util::Status::Ok();
}

// The entity table (with references) and the sources it covers.
util::Status LoadSources(util::Env& env, const WorkspaceRequest& r, Workspace* w) {
  parser::EntitiesOptions eo;
  eo.root = r.root;
  eo.excludes = r.excludes;
  eo.excludes.insert(eo.excludes.end(), r.spec.exclude.begin(), r.spec.exclude.end());
  eo.jobs = util::DefaultJobs();
  eo.references = true;
  eo.cache_dir = r.cache_dir;
  auto entities = parser::BuildEntities(env, eo, nullptr);
  if (!entities.ok()) return entities.failure();
  auto tables = parser::FileTables(*entities);
  if (!tables.ok()) return tables.failure();
  auto repo = Repo::Load(env, r.root, std::move(*tables));
  if (!repo.ok()) return repo.failure();
  if (auto s = repo->CheckGraph(w->graph); !s.ok()) {
    return util::Error{r.graph_path + ": " + s.error()};
  }
  w->repo = std::make_unique<Repo>(std::move(*repo));
  w->index = std::make_unique<CutIndex>(*w->repo);
  return util::Status::Ok();
}

}  // namespace

util::Expected<Workspace> LoadWorkspace(util::Env& env, sandbox::Launcher& launcher,
                                        const WorkspaceRequest& request) {
  if (!request.repo_name.empty() && !runner::IsRepoName(request.repo_name)) {
    return util::Error{"--repo-name " + util::Printable(request.repo_name) +
                       ": not owner/repo (letters, digits, '.', '_' and '-', neither part "
                       "starting with '.')"};
  }
  Workspace w;
  if (auto s = ReadInputs(env, request, &w); !s.ok()) return s.failure();
  if (auto s = LoadSources(env, request, &w); !s.ok()) return s.failure();
  w.passing = PassingFiles(w.trace, &w.not_passing);
  auto out = env.RealPath(request.out_dir);
  if (!out.ok()) {
    if (auto s = env.MakeDirs(request.out_dir); !s.ok()) return util::Error{"-o: " + s.error()};
    out = env.RealPath(request.out_dir);
    if (!out.ok()) return util::Error{"-o: " + out.error()};
  }
  ExtractOptions& o = w.options;
  o.out_dir = *out;
  runner::GitProgram git(env, launcher, o.out_dir);
  o.repo_name = !request.repo_name.empty() ? request.repo_name
                : !request.spec.repo.empty() ? request.spec.repo
                                             : runner::RepoName(git, request.root);
  auto head = git.Run(request.root, {"rev-parse", "HEAD"});
  o.base_commit = head.ok() ? head->substr(0, 40) : "";
  if (auto tag = git.Run(request.root, {"describe", "--tags", "--abbrev=0"}); tag.ok()) {
    o.version_tag = util::Trim(*tag);
  }
  auto files = runner::ListRepoFiles(env, git, request.root, o.out_dir);
  if (!files.ok()) return files.failure();
  auto tracked = runner::ListRepoFiles(env, git, request.root, o.out_dir, true);
  if (!tracked.ok()) return tracked.failure();
  o.files = std::move(*files);
  if (!tracked->empty()) {
    std::set_difference(o.files.begin(), o.files.end(), tracked->begin(), tracked->end(),
                        std::back_inserter(o.untracked));
    o.files = std::move(*tracked);
  }
  o.spec = request.spec;
  return w;
}

}  // namespace fbkit::extract::make

#include "runner/confine.h"

#include "runner/environment.h"
#include "util/strings.h"

namespace fbkit::runner {

util::Expected<Confinement> Confine(util::Env& env, sandbox::Launcher& launcher, const RepoSpec& spec,
                                    const ConfineRequest& request) {
  Confinement c;
  c.python = spec.python;
  sandbox::PrivateCopy copy{request.copy_of, request.root, "", {}};  // what the environment built, laid over
  c.sandbox.kind = spec.sandbox;
  c.sandbox.network = spec.network;
  c.sandbox.limits = spec.limits;
  if (c.sandbox.kind == sandbox::SandboxKind::kBwrap) {
    if (util::Status s = sandbox::CheckBwrap(); !s.ok()) return s.failure();
  }
  bool in_image = c.sandbox.kind == sandbox::SandboxKind::kContainer;
  if (in_image) {
    // The image's system, interpreter and environment in place of the host's: what its
    // install steps built is laid over the copy from the image's own tree.
    if (spec.image_name.empty()) {
      return util::Error{"the container sandbox needs the task's environment image: build it with "
                         "`fb-extract images TASKS --engine podman` and pass its images.json "
                         "(--images)"};
    }
    if (util::Status s = sandbox::CheckContainerEngine(spec.container_engine); !s.ok()) return s.failure();
    c.sandbox.container = {spec.container_engine, spec.image_name};
    c.python = sandbox::kImagePython;
    copy.built_dir = sandbox::kImageSource;
    copy.built_list = sandbox::kImageBuiltList;
  } else if (!spec.install.empty()) {
    std::string cache = spec.environment_cache.empty() ? util::JoinPath(request.work_dir, "env")
                                               : spec.environment_cache;
    const std::string& from = request.env_root.empty() ? request.root : request.env_root;
    auto built = EnsureEnvironment(env, launcher, EnvRequest{spec, from, cache, nullptr});
    if (!built.ok()) return built.failure();
    c.python = built->python;
    c.sandbox.read_only.push_back(built->dir);
    copy.built_dir = util::JoinPath(built->dir, "src");
    copy.built_files = built->built_files;
  }
  c.sandbox.read_only.push_back(request.root);
  // The spec's interpreter, never the built one: a built environment's bin/python is a link
  // its install steps wrote, and what it resolves to on the host (through /proc/self/cwd, say)
  // is no place to bind. The entry is bound; a venv's link points at the spec's interpreter.
  if (!in_image) {
    for (const auto& dir : sandbox::InterpreterDirs(spec.python)) c.sandbox.read_only.push_back(dir);
  }
  for (const auto& p : spec.pythonpath) {
    if (p.starts_with("/")) c.sandbox.read_only.push_back(p);
  }
  if (!request.copy_of.empty()) {
    c.sandbox.copies.push_back(std::move(copy));
    // Git's own files stay as fbkit made them, not copied: bound read-only.
    std::string dot_git = util::JoinPath(request.root, ".git");
    if (env.Stat(dot_git, false).ok()) c.sandbox.protect.push_back(dot_git);
  }
  if (!request.scratch.empty()) c.sandbox.writable.push_back(request.scratch);
  return c;
}

util::Status UseContainerImage(const std::map<std::string, std::string>& images, const std::string& engine,
                               const std::string& instance_id, const std::string& what, RepoSpec* spec) {
  auto image = images.find(instance_id);
  if (image == images.end() || image->second.empty()) {
    return util::Error{"no " + what + " image for " + instance_id + " in the images manifest "
                       "(fb-extract images TASKS --engine podman; --images OUT/images.json)"};
  }
  spec->image_name = image->second;
  spec->container_engine = engine;
  return util::Status::Ok();
}

sandbox::Sandbox ToolSandbox(const RepoSpec& spec, std::vector<std::string> writable,
                    std::vector<std::string> readable) {
  sandbox::Sandbox s;
  s.kind = spec.sandbox;
  if (s.kind == sandbox::SandboxKind::kContainer) s.container = {spec.container_engine, spec.image_name};
  s.limits = spec.limits;
  s.writable = std::move(writable);
  s.read_only = std::move(readable);
  return s;
}

}  // namespace fbkit::runner

// Where a process running repository or agent code starts, the one place every caller gets
// its interpreter and sandbox from.
#pragma once

#include <map>
#include <string>

#include "sandbox/process.h"
#include "sandbox/sandbox.h"
#include "runner/spec.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::runner {

// Where a process running repository or agent code starts: the interpreter (the spec's, or
// the one its install steps built, built on first use under the work dir unless the spec
// names a cache) and the sandbox (the spec's kind, network and limits; ROOT and the
// interpreter readable; with `copy_of`, ROOT is a private copy of that tree, ROOT/.git
// bound read-only; the scratch dir writable). A container sandbox (kContainer) runs in the
// spec's image_name instead: its /fbkit/python, and what its install steps built in its
// /fbkit/src laid over the copy; no environment is built on the host. Every such process fbkit starts gets its
// ProcessSpec::sandbox from here; what fbkit reads back from a writable tree it reads with
// Env::ReadUntrusted.
struct ConfineRequest {
  std::string root;
  // The tree the process sees at ROOT as its own copy (Sandbox::copies: what it writes is
  // bounded by the kernel and never reaches the host); "" for ROOT read-only.
  std::string copy_of;
  std::string work_dir;  // fbkit's own (never writable inside)
  std::string scratch;   // writable inside ("" for none)
  // The tree the spec's environment is keyed on and built from ("": root). An evaluation
  // names the task's own: an agent's patch to setup.py or a requirements file must not
  // choose what the grader's environment installs.
  std::string env_root;
};
struct Confinement {
  std::string python;
  sandbox::Sandbox sandbox;
};
util::Expected<Confinement> Confine(util::Env& env, sandbox::Launcher& launcher, const RepoSpec& spec,
                                    const ConfineRequest& request);

// Runs of instance `instance_id` in a container: `spec` takes its image from `images`
// (instance id -> image, fb-extract images' manifest) and `engine`; an error naming the
// instance and `what` image was wanted when the manifest has none.
util::Status UseContainerImage(const std::map<std::string, std::string>& images, const std::string& engine,
                               const std::string& instance_id, const std::string& what, RepoSpec* spec);

// The sandbox fbkit's own tools (git, GNU patch, cp) run in over work copies that repository
// or agent code has written or will: `writable` (the work dir holding the copies) and
// `readable` (task directories, say), the spec's kind and limits, no network. No host-side
// tool interprets such a tree (runner::Git::Confine).
sandbox::Sandbox ToolSandbox(const RepoSpec& spec, std::vector<std::string> writable,
                    std::vector<std::string> readable);

}  // namespace fbkit::runner

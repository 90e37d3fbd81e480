// Git as the extractor uses it: a deterministic identity and clock for commits, no user
// hooks or signing, output captured. Processes go through tracer::Launcher (fakeable).
#pragma once

#include <string>
#include <vector>

#include "tracer/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract {

class Git {
 public:
  // `scratch` is a directory for the commands' output logs.
  Git(util::Env& env, tracer::Launcher& launcher, std::string scratch)
      : env_(env), launcher_(launcher), scratch_(std::move(scratch)) {}

  // Runs `git ARGS` in `cwd`; its output (stdout and stderr) on success, else an error
  // naming the command and the output's end.
  util::Expected<std::string> Run(const std::string& cwd, const std::vector<std::string>& args);

 private:
  util::Env& env_;
  tracer::Launcher& launcher_;
  std::string scratch_;
  int counter_ = 0;
};

}  // namespace fbkit::extract

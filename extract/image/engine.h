// The container engine that builds recipes (recipe.h), behind a small interface (a fake in
// tests): the docker or podman command line. A build runs the recipe's RUN steps (a
// repository's install steps) inside the engine's containers, without the network unless the
// recipe asks for it; an image already present under its tag is never built again.
#pragma once

#include <string>

#include "extract/image/recipe.h"
#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::image {

class Engine {
 public:
  virtual ~Engine() = default;
  // Whether an image is present under `tag`.
  virtual util::Expected<bool> Has(const std::string& tag) = 0;
  // Builds `recipe` under its tag; the engine's output goes to `log_path`. The error names
  // the failing step (the engine's "STEP n/m" or "Step n/m" line) and ends with the log's tail.
  virtual util::Status Build(const Recipe& recipe, const std::string& log_path) = 0;
};

// Checks that `program` ("docker" or "podman") runs containers here: an error saying what
// the engine answered (a missing command, no daemon, no permission) otherwise.
util::Status CheckEngine(util::Env& env, sandbox::Launcher& launcher, const std::string& program,
                         const std::string& log_path);

// The docker or podman command line (`program`), through `launcher`, unsandboxed: the
// engine's containers are the isolation. `timeout` bounds each build (seconds); `log_dir`
// takes the logs of its queries.
class CliEngine : public Engine {
 public:
  CliEngine(util::Env& env, sandbox::Launcher& launcher, std::string program, double timeout,
            std::string log_dir)
      : env_(env), launcher_(launcher), program_(std::move(program)), timeout_(timeout),
        log_dir_(std::move(log_dir)) {}
  util::Expected<bool> Has(const std::string& tag) override;
  util::Status Build(const Recipe& recipe, const std::string& log_path) override;

 private:
  util::Env& env_;
  sandbox::Launcher& launcher_;
  std::string program_;
  double timeout_;
  std::string log_dir_;
};

// The line of a build log that names the step the build stopped at ("" when none does).
std::string FailedStep(const std::string& log);

}  // namespace fbkit::extract::image

// A Launcher whose processes are answered by a function instead of run (ninja's
// FakeCommandRunner): every spec is recorded, `answer` says how each exits and what it
// prints (written to the spec's log_path), and specs it declines (nullopt) go to `fallback`
// when there is one (the real launcher for git, say, while the agent is faked).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/process.h"

namespace fbkit::testing {

class FakeLauncher : public sandbox::Launcher {
 public:
  struct Outcome {
    sandbox::ExitInfo exit;
    std::string output;  // stdout and stderr, as the process would have logged them
  };
  using Answer = std::function<std::optional<Outcome>(const sandbox::ProcessSpec&)>;

  explicit FakeLauncher(Answer answer, sandbox::Launcher* fallback = nullptr)
      : answer_(std::move(answer)), fallback_(fallback) {}

  util::Expected<std::unique_ptr<sandbox::Process>> Start(const sandbox::ProcessSpec& spec) override;

  // The specs answered by `answer` (not those passed to the fallback), in order.
  std::vector<sandbox::ProcessSpec> answered() const;

  // An exit with `code` and `output`.
  static Outcome Exit(int code, std::string output = "");

 private:
  Answer answer_;
  sandbox::Launcher* fallback_;
  mutable std::mutex mu_;
  std::vector<sandbox::ProcessSpec> answered_;
};

}  // namespace fbkit::testing

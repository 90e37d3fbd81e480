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

#include "runner/process.h"

namespace fbkit::testing {

class FakeLauncher : public runner::Launcher {
 public:
  struct Outcome {
    runner::ExitInfo exit;
    std::string output;  // stdout and stderr, as the process would have logged them
  };
  using Answer = std::function<std::optional<Outcome>(const runner::ProcessSpec&)>;

  explicit FakeLauncher(Answer answer, runner::Launcher* fallback = nullptr)
      : answer_(std::move(answer)), fallback_(fallback) {}

  util::Expected<std::unique_ptr<runner::Process>> Start(const runner::ProcessSpec& spec) override;

  // The specs answered by `answer` (not those passed to the fallback), in order.
  std::vector<runner::ProcessSpec> answered() const;

  // An exit with `code` and `output`.
  static Outcome Exit(int code, std::string output = "");

 private:
  Answer answer_;
  runner::Launcher* fallback_;
  mutable std::mutex mu_;
  std::vector<runner::ProcessSpec> answered_;
};

}  // namespace fbkit::testing

#include "tests/testing/fake_launcher.h"

#include <fstream>

namespace fbkit::testing {
namespace {

// A process that has already ended.
class DoneProcess : public sandbox::Process {
 public:
  explicit DoneProcess(sandbox::ExitInfo exit) : exit_(exit) {}
  std::optional<sandbox::ExitInfo> Poll() override { return exit_; }
  sandbox::ExitInfo Kill() override { return exit_; }

 private:
  sandbox::ExitInfo exit_;
};

}  // namespace

util::Expected<std::unique_ptr<sandbox::Process>> FakeLauncher::Start(
    const sandbox::ProcessSpec& spec) {
  std::optional<Outcome> outcome = answer_(spec);
  if (!outcome) {
    if (fallback_) return fallback_->Start(spec);
    return util::Error{"FakeLauncher: no answer for " + (spec.argv.empty() ? "" : spec.argv[0])};
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    answered_.push_back(spec);
  }
  if (!spec.log_path.empty()) {
    std::ofstream log(spec.log_path, std::ios::binary | std::ios::trunc);
    log << outcome->output;
    if (!log) return util::Error{"FakeLauncher: cannot write " + spec.log_path};
  }
  return std::unique_ptr<sandbox::Process>(new DoneProcess(outcome->exit));
}

std::vector<sandbox::ProcessSpec> FakeLauncher::answered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return answered_;
}

FakeLauncher::Outcome FakeLauncher::Exit(int code, std::string output) {
  Outcome o;
  o.exit.code = code;
  o.output = std::move(output);
  return o;
}

}  // namespace fbkit::testing

// A Launcher that starts nothing: each start is an error, counted (orchestrators' tests over
// fakes check that their run started no process and touched no disk).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "sandbox/process.h"

namespace fbkit::testing {

class NoLauncher : public sandbox::Launcher {
 public:
  util::Expected<std::unique_ptr<sandbox::Process>> Start(const sandbox::ProcessSpec& spec) override {
    ++starts;
    return util::Error{"NoLauncher: " + (spec.argv.empty() ? std::string() : spec.argv[0]) +
                       " was started"};
  }
  std::atomic<int> starts{0};
};

}  // namespace fbkit::testing

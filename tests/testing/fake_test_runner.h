// A runner::TestRunner for unit tests: records each request and answers with `respond`
// (which may look at the request's work copy), so verification, evaluation and RACE logic
// are tested without pytest.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runner/test_run.h"

namespace fbkit::testing {

class FakeTestRunner : public runner::TestRunner {
 public:
  std::function<util::Expected<runner::TestRun>(const runner::TestRunRequest&)> respond;
  std::vector<runner::TestRunRequest> requests;

  util::Expected<runner::TestRun> Run(const runner::TestRunRequest& request) override {
    {
      std::lock_guard<std::mutex> lock(mu_);  // Run may be called from several threads
      requests.push_back(request);
    }
    if (!respond) return util::Error{"FakeTestRunner: no response set"};
    return respond(request);
  }

 private:
  std::mutex mu_;
};

// A run whose tests (ids "FILE::NAME") have the given outcome names; each file collected
// its tests, status ok.
inline runner::TestRun RunWith(const std::map<std::string, std::string>& outcomes) {
  runner::TestRun run;
  for (const auto& [id, outcome] : outcomes) {
    runner::FileRun& f = run.files[id.substr(0, id.find("::"))];
    f.nodeids.push_back(id);
    f.tests[id].nodeid = id;
    f.tests[id].outcome = runner::ParseOutcome(outcome);
  }
  return run;
}

}  // namespace fbkit::testing

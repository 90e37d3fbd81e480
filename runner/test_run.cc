#include "runner/test_run.h"

namespace fbkit::runner {

const char* FileStatusName(FileStatus status) {
  switch (status) {
    case FileStatus::kOk: return "ok";
    case FileStatus::kCollectError: return "collect_error";
    case FileStatus::kCrashed: return "crashed";
    case FileStatus::kTimeout: return "timeout";
    case FileStatus::kNotRun: return "not_run";
  }
  return "ok";
}

Outcome CombineOutcome(const std::map<std::string, std::string>& phases) {
  static const Outcome kPriority[] = {Outcome::kError,   Outcome::kFailed,  Outcome::kXpassed,
                                      Outcome::kXfailed, Outcome::kSkipped, Outcome::kPassed};
  for (Outcome outcome : kPriority) {
    for (const auto& [when, category] : phases) {
      if (category == OutcomeName(outcome)) return outcome;
    }
  }
  return phases.count("call") ? Outcome::kPassed : Outcome::kError;
}

std::map<std::string, Outcome> OutcomesOf(const TestRun& run) {
  std::map<std::string, Outcome> out;
  for (const auto& [path, f] : run.files) {
    for (const auto& [id, t] : f.tests) out[id] = t.outcome;
  }
  return out;
}

std::optional<Outcome> ReportedOutcome(const std::map<std::string, Outcome>& outcomes,
                                       const std::string& id) {
  auto it = outcomes.find(id);
  if (it == outcomes.end()) return std::nullopt;
  return it->second;
}

std::string OutcomeOf(const TestRun& run, const std::string& id) {
  auto f = run.files.find(id.substr(0, id.find("::")));
  if (f == run.files.end()) return "missing";
  if (auto t = f->second.tests.find(id); t != f->second.tests.end()) {
    return OutcomeName(t->second.outcome);
  }
  if (f->second.status != FileStatus::kOk) return FileStatusName(f->second.status);
  return "missing";
}

}  // namespace fbkit::runner

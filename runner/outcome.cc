#include "runner/outcome.h"

namespace fbkit::runner {
namespace {

struct Named {
  Outcome outcome;
  const char* name;
};

constexpr Named kNames[] = {{Outcome::kPassed, "passed"},   {Outcome::kFailed, "failed"},
                            {Outcome::kError, "error"},     {Outcome::kSkipped, "skipped"},
                            {Outcome::kXfailed, "xfailed"}, {Outcome::kXpassed, "xpassed"}};

}  // namespace

Outcome ParseOutcome(std::string_view name) {
  for (const auto& n : kNames) {
    if (name == n.name) return n.outcome;
  }
  return Outcome::kNotRun;
}

const char* OutcomeName(Outcome outcome) {
  for (const auto& n : kNames) {
    if (n.outcome == outcome) return n.name;
  }
  return "not run";
}

bool PassesSession(Outcome o) {
  return o == Outcome::kPassed || o == Outcome::kXfailed || o == Outcome::kXpassed;
}

bool F2PPasses(Outcome o) { return o == Outcome::kPassed; }

bool P2PHolds(Outcome o) { return PassesSession(o) || o == Outcome::kSkipped; }

bool Fails(Outcome o) { return o == Outcome::kFailed || o == Outcome::kError; }

}  // namespace fbkit::runner

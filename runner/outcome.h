// A test's outcome as pytest reports it, and fbkit's rules, in one place, for what counts as
// passing where: every module decides through these, never by comparing strings itself.
#pragma once

#include <string_view>

namespace fbkit::runner {

enum class Outcome { kPassed, kFailed, kError, kSkipped, kXfailed, kXpassed, kNotRun };

// "passed", "failed", "error", "skipped", "xfailed", "xpassed"; anything else is kNotRun
// (a test that never reported, "not run", "").
Outcome ParseOutcome(std::string_view name);
const char* OutcomeName(Outcome outcome);

// Does not fail its session: passed, xfailed or xpassed (a non-strict xfail may pass or fail
// from run to run). What selection asks of a passing test file and verification of the
// pre-solved code's P2P tests; skipped tests are counted apart.
bool PassesSession(Outcome outcome);
// An F2P test that counts as passing when scoring a patch: passed, nothing else. FeatureBench's
// harness also takes xfailed; fbkit does not (red team round 3: code under test marked the
// test module xfail, or raised pytest.xfail() from code compiled under no file's name, and
// failing stubs scored as resolved). F2P sets hold no test marked xfail (PassingFile).
bool F2PPasses(Outcome outcome);
// A P2P test that still holds after a patch: it does not fail its session, or it was skipped.
bool P2PHolds(Outcome outcome);
// failed or error.
bool Fails(Outcome outcome);

// The same on pytest's names.
inline bool PassesSession(std::string_view name) { return PassesSession(ParseOutcome(name)); }
inline bool F2PPasses(std::string_view name) { return F2PPasses(ParseOutcome(name)); }
inline bool P2PHolds(std::string_view name) { return P2PHolds(ParseOutcome(name)); }
inline bool Fails(std::string_view name) { return Fails(ParseOutcome(name)); }

}  // namespace fbkit::runner

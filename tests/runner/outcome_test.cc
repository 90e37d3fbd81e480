// fbkit's one table of what counts as passing where (runner/outcome.h).
#include "runner/outcome.h"

#include <gtest/gtest.h>

namespace fbkit::runner {
namespace {

TEST(OutcomeTest, NamesRoundTripAndAnythingElseDidNotRun) {
  for (const char* name : {"passed", "failed", "error", "skipped", "xfailed", "xpassed"}) {
    EXPECT_STREQ(OutcomeName(ParseOutcome(name)), name);
  }
  EXPECT_EQ(ParseOutcome("not run"), Outcome::kNotRun);
  EXPECT_EQ(ParseOutcome(""), Outcome::kNotRun);
  EXPECT_EQ(ParseOutcome("PASSED"), Outcome::kNotRun);
}

TEST(OutcomeTest, TheRulesForEachUse) {
  struct Row {
    const char* name;
    bool session, f2p, p2p, fails;
  };
  for (const Row& r : {Row{"passed", true, true, true, false}, Row{"xfailed", true, false, true, false},
                       Row{"xpassed", true, false, true, false}, Row{"skipped", false, false, true, false},
                       Row{"failed", false, false, false, true}, Row{"error", false, false, false, true},
                       Row{"not run", false, false, false, false}}) {
    EXPECT_EQ(PassesSession(r.name), r.session) << r.name;
    EXPECT_EQ(F2PPasses(r.name), r.f2p) << r.name;
    EXPECT_EQ(P2PHolds(r.name), r.p2p) << r.name;
    EXPECT_EQ(Fails(r.name), r.fails) << r.name;
  }
}

}  // namespace
}  // namespace fbkit::runner

// result.json and usage.json (agents/infer_result.h): written and read back by their one owner.
#include "agents/infer_result.h"

#include <gtest/gtest.h>

namespace fbkit::agents {
namespace {

TEST(InferResultTest, RoundTripsAndRefusesOtherDocuments) {
  InferResult r;
  r.instance_id = "x.lv2";
  r.level = 2;
  r.status = InferStatus::kTimedOut;
  r.exit_code = -1;
  r.signal = 9;
  r.patch_sha256 = "abc";
  r.excluded = {"a.bin: binary"};
  r.usage = Usage{5, 6, 0.5, 3, "usage.json"};
  r.error = "the workspace could not be made";
  r.agent_seconds = 12.25;
  r.fbkit_seconds = 0.5;
  r.network = "model";
  r.network_refused = {"GET https://example.org/"};
  r.exposed_copies = {"/usr/lib/python3/dist-packages/pkg"};
  auto back = ParseInferResult(InferResultJson(r));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(InferResultJson(*back), InferResultJson(r));
  EXPECT_EQ(back->error, r.error);
  EXPECT_EQ(back->agent_seconds, 12.25);
  EXPECT_EQ(back->network, "model");
  EXPECT_EQ(back->network_refused, r.network_refused);
  EXPECT_EQ(back->exposed_copies, r.exposed_copies);
  EXPECT_EQ(back->status, InferStatus::kTimedOut);
  EXPECT_EQ(back->usage->api_calls, 3);
  EXPECT_FALSE(ParseInferResult("{}").ok());
}

// An agent's usage.json: both counts as whole numbers, or nothing; the rest optional.
TEST(InferResultTest, UsageNeedsBothCountsAsWholeNumbers) {
  auto u = ParseUsage(R"({"input_tokens": 10, "output_tokens": 2, "cost": 0.25, "api_calls": 3})",
                      "usage.json");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 10);
  EXPECT_EQ(u->output_tokens, 2);
  EXPECT_EQ(u->cost, 0.25);
  EXPECT_EQ(u->api_calls, 3);
  EXPECT_EQ(u->source, "usage.json");
  EXPECT_FALSE(ParseUsage(R"({"input_tokens": 10})", "usage.json"));
  EXPECT_FALSE(ParseUsage(R"({"input_tokens": "many", "output_tokens": 2})", "usage.json"));
  EXPECT_FALSE(ParseUsage("not json", "usage.json"));
  EXPECT_EQ(ParseUsage(R"({"input_tokens": 1, "output_tokens": 1})", "u")->api_calls, -1);
}

}  // namespace
}  // namespace fbkit::agents

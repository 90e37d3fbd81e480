// The built-in providers over a fake HTTP client: what each API is sent, how answers, refusals
// and retries read, the cache, and AskFor's second chance and fallback.
#include "model/llm_provider.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <nlohmann/json.hpp>

#include "extract/make/prompts.h"
#include "groundtruth/prompts.h"
#include "tests/testing/fake_env.h"

namespace fbkit::model {
namespace {

using nlohmann::json;

class FakeHttp : public HttpClient {
 public:
  util::Expected<HttpResponse> Post(const HttpRequest& r) override {
    sent.push_back(r);
    if (replies.empty()) return util::Error{"HTTP: " + r.url + ": no reply scripted"};
    HttpResponse out = replies.front();
    replies.pop_front();
    return out;
  }
  std::deque<HttpResponse> replies;
  std::vector<HttpRequest> sent;
};

HttpResponse Chat(const std::string& content, int in = 10, int out = 2) {
  json body = {{"choices", {{{"message", {{"role", "assistant"}, {"content", content}}}}}},
               {"usage", {{"prompt_tokens", in}, {"completion_tokens", out}}}};
  return {200, body.dump(), ""};
}

const std::string kRequest =
    R"({"schema": "fbkit.llm-gt/1", "task": "purpose", "entity": "a.py::f"})";

std::function<const char*(const char*)> Vars(std::map<std::string, std::string> vars) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [held](const char* name) -> const char* {
    auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}

ProviderOptions Options(Provider p = Provider::kOpenAi) {
  ProviderOptions o;
  o.provider = p;
  o.model = "m";
  o.url = "http://local";
  o.api_key = "KEY";
  o.backoff_ms = 0;
  o.prompts = groundtruth::StepPrompts();
  return o;
}

TEST(ProviderTest, ResolvesTheProvidersVariablesAndSaysWhatIsMissing) {
  auto o = ResolveProvider("openai:gpt-x", "", false, Vars({{"OPENAI_API_KEY", "k"}}));
  ASSERT_TRUE(o.ok()) << o.error();
  EXPECT_EQ(o->url, "https://api.openai.com/v1");
  EXPECT_EQ(o->model, "gpt-x");
  auto g = ResolveProvider("gemini:g", "", false,
                           Vars({{"GOOGLE_API_KEY", "k2"}, {"GOOGLE_GEMINI_BASE_URL", "https://g/"}}));
  ASSERT_TRUE(g.ok()) << g.error();
  EXPECT_EQ(g->api_key, "k2");
  EXPECT_EQ(g->url, "https://g");
  auto over = ResolveProvider("anthropic:c", "http://mine", false,
                              Vars({{"ANTHROPIC_BASE_URL", "http://theirs"}}));
  ASSERT_TRUE(over.ok()) << over.error();
  EXPECT_EQ(over->url, "http://mine") << "--llm-url wins; a local server needs no key";
  auto no_key = ResolveProvider("anthropic:c", "", false, Vars({}));
  ASSERT_FALSE(no_key.ok());
  EXPECT_NE(no_key.error().find("set ANTHROPIC_API_KEY"), std::string::npos) << no_key.error();
  EXPECT_TRUE(ResolveProvider("anthropic:c", "", true, Vars({})).ok()) << "offline needs no key";
  for (const char* bad : {"openai", "openai:", ":m", "mistral:m"}) {
    auto r = ResolveProvider(bad, "", false, Vars({{"OPENAI_API_KEY", "k"}}));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().find(bad), std::string::npos) << r.error();
  }
}

TEST(ProviderTest, EachApiGetsItsOwnRequestAndAnswerShape) {
  testing::FakeEnv env;
  struct Case {
    Provider p;
    HttpResponse reply;
    std::string url, key_header;
  };
  json anthropic = {{"content", {{{"type", "text"}, {"text", R"({"purpose": "B"})"}}}},
                    {"usage", {{"input_tokens", 7}, {"output_tokens", 3}}}};
  json gemini = {{"candidates", {{{"content", {{"parts", {{{"text", R"({"purpose": "C"})"}}}}}}}}},
                 {"usageMetadata", {{"promptTokenCount", 5}, {"candidatesTokenCount", 1}}}};
  std::vector<Case> cases = {
      {Provider::kOpenAi, Chat(R"({"purpose": "A"})"), "http://local/chat/completions",
       "Authorization: Bearer KEY"},
      {Provider::kAnthropic, {200, anthropic.dump(), ""}, "http://local/v1/messages",
       "x-api-key: KEY"},
      {Provider::kGemini, {200, gemini.dump(), ""},
       "http://local/v1beta/models/m:generateContent", "x-goog-api-key: KEY"}};
  for (const auto& c : cases) {
    FakeHttp http;
    http.replies = {c.reply};
    auto model = ProviderModel(env, http, Options(c.p));
    auto answer = model->Ask(kRequest, 0);
    ASSERT_TRUE(answer.ok()) << answer.error();
    EXPECT_TRUE(answer->starts_with("{\"purpose\":")) << *answer;
    ASSERT_EQ(http.sent.size(), 1u);
    EXPECT_EQ(http.sent[0].url, c.url);
    const auto& h = http.sent[0].headers;
    EXPECT_NE(std::find(h.begin(), h.end(), c.key_header), h.end()) << c.url;
    std::string body = http.sent[0].body;
    EXPECT_NE(body.find("Step: the purpose of one entity change"), std::string::npos) << c.url;
    EXPECT_NE(body.find("a.py::f"), std::string::npos) << "the request is in the prompt";
    auto usage = model->usage()["fbkit.llm-gt/1 purpose"];
    EXPECT_GT(usage.input_tokens, 0) << c.url;
  }
}

TEST(ProviderTest, RefusalsAreRetriedWithinBoundsAndErrorsNameProviderAndStatus) {
  testing::FakeEnv env;
  FakeHttp http;
  http.replies = {{429, "slow down", "0"}, {503, "busy", ""}, Chat(R"({"purpose": "ok"})")};
  auto model = ProviderModel(env, http, Options());
  auto ok = model->Ask(kRequest, 0);
  ASSERT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(http.sent.size(), 3u);
  EXPECT_EQ(model->traffic().requests, 3);

  http.replies = {{401, "{\"error\": \"bad key\"}", ""}};
  auto denied = model->Ask(kRequest, 1);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error(),
            "openai:m: HTTP 401 from http://local/chat/completions: {\"error\": \"bad key\"}");
  EXPECT_EQ(http.sent.size(), 4u) << "a 401 is not retried";

  ProviderOptions two = Options();
  two.attempts = 2;
  auto limited = ProviderModel(env, http, two);
  http.replies = {{500, "e1", ""}, {500, "e2", ""}, Chat("{}")};
  auto gave_up = limited->Ask(kRequest, 0);
  ASSERT_FALSE(gave_up.ok());
  EXPECT_NE(gave_up.error().find("HTTP 500"), std::string::npos);
  EXPECT_NE(gave_up.error().find("after 2 attempts"), std::string::npos) << gave_up.error();
}

TEST(ProviderTest, TheCacheAnswersAgainWithTheSameUsageAndOfflineNeedsIt) {
  testing::FakeEnv env;
  FakeHttp http;
  ProviderOptions o = Options();
  o.cache_dir = "/cache";
  http.replies = {Chat(R"({"purpose": "P"})", 40, 4)};
  auto first = ProviderModel(env, http, o);
  ASSERT_TRUE(first->Ask(kRequest, 0).ok());
  auto second = ProviderModel(env, http, o);
  auto cached = second->Ask(kRequest, 0);
  ASSERT_TRUE(cached.ok()) << cached.error();
  EXPECT_EQ(*cached, R"({"purpose": "P"})");
  EXPECT_EQ(http.sent.size(), 1u);
  EXPECT_EQ(second->traffic().cache_hits, 1);
  EXPECT_EQ(second->usage()["fbkit.llm-gt/1 purpose"].input_tokens, 40);
  o.offline = true;
  auto offline = ProviderModel(env, http, o);
  EXPECT_TRUE(offline->Ask(kRequest, 0).ok());
  auto miss = offline->Ask(kRequest, 1);  // another attempt is another answer
  ASSERT_FALSE(miss.ok());
  EXPECT_NE(miss.error().find("no cached answer"), std::string::npos) << miss.error();
  o.model = "other";
  auto other = ProviderModel(env, http, o);
  EXPECT_FALSE(other->Ask(kRequest, 0).ok()) << "another model's answers are not reused";
}

TEST(ProviderTest, AnInvalidAnswerIsAskedAgainOnceThenTheStepFallsBack) {
  testing::FakeEnv env;
  FakeHttp http;
  http.replies = {Chat("I think the purpose is clear."), Chat(R"({"purpose": "P"})")};
  auto model = ProviderModel(env, http, Options());
  std::function<util::Expected<std::string>(const std::string&)> read =
      [](const std::string& a) -> util::Expected<std::string> {
    auto j = json::parse(a, nullptr, false);
    if (!j.is_object() || !j.contains("purpose")) return util::Error{"no purpose"};
    return j["purpose"].get<std::string>();
  };
  auto got = AskFor(*model, kRequest, read);
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(got->value_or(""), "P");
  EXPECT_NE(http.sent[1].body.find("could not be read"), std::string::npos);
  http.replies = {Chat("no"), Chat("still no")};
  auto fell = AskFor(*model, kRequest, read);
  ASSERT_TRUE(fell.ok()) << fell.error();
  EXPECT_FALSE(fell->has_value());
  StepUsage u = model->usage()["fbkit.llm-gt/1 purpose"];
  EXPECT_EQ(u.answers, 4);
  EXPECT_EQ(u.invalid, 3);
  EXPECT_EQ(u.fallbacks, 1);
  http.replies = {{400, "bad request", ""}};
  EXPECT_FALSE(AskFor(*model, kRequest, read).ok()) << "a model that cannot answer is an error";
}

TEST(ProviderTest, KeysTravelOnlyOverHttpsOrToThisMachineAndUrlsLoseTheirPasswords) {
  auto remote = ResolveProvider("openai:m", "http://proxy.example:8080/v1", false,
                                Vars({{"OPENAI_API_KEY", "sk-secret"}}));
  ASSERT_FALSE(remote.ok());
  EXPECT_NE(remote.error().find("refusing to send the API key over plain http"), std::string::npos);
  EXPECT_TRUE(ResolveProvider("openai:m", "http://127.0.0.1:9/v1", false,
                              Vars({{"OPENAI_API_KEY", "k"}})).ok());
  EXPECT_TRUE(ResolveProvider("openai:m", "http://proxy.example/v1", false, Vars({})).ok())
      << "no key, nothing to leak";
  testing::FakeEnv env;
  FakeHttp http;
  ProviderOptions o = Options();
  o.url = "http://admin:hunter2@local";
  http.replies = {{401, "no\x1b[31m", ""}};
  auto model = ProviderModel(env, http, o);
  auto denied = model->Ask(kRequest, 0);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().find("hunter2"), std::string::npos) << denied.error();
  EXPECT_EQ(denied.error().find('\x1b'), std::string::npos) << "no escapes for the terminal";
}

TEST(ProviderTest, ADeadEndpointIsNotAskedAgainAndHugeAnswersAreNotRetried) {
  testing::FakeEnv env;
  FakeHttp http;
  ProviderOptions o = Options();
  o.attempts = 2;
  http.replies = {{503, "down", ""}, {503, "down", ""}};
  auto model = ProviderModel(env, http, o);
  EXPECT_FALSE(model->Ask(kRequest, 0).ok());
  EXPECT_EQ(http.sent.size(), 2u);
  auto again = model->Ask(R"({"schema": "fbkit.llm-gt/1", "task": "issue"})", 0);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().find("not asked again"), std::string::npos) << again.error();
  EXPECT_EQ(http.sent.size(), 2u);
  FakeHttp big_http;
  HttpResponse big;
  big.too_big = true;
  big_http.replies = {big, Chat("{}")};
  auto big_model = ProviderModel(env, big_http, Options());
  auto too_big = big_model->Ask(kRequest, 0);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.error().find("over 32 MiB"), std::string::npos);
  EXPECT_EQ(big_http.sent.size(), 1u);
}

TEST(ProviderTest, TheCacheIsPerEndpointAndAnswersAndCountsAreBounded) {
  testing::FakeEnv env;
  FakeHttp http;
  ProviderOptions o = Options();
  o.cache_dir = "/cache";
  json huge = {{"choices", {{{"message", {{"content", R"({"purpose": "P"})"}}}}}},
               {"usage", {{"prompt_tokens", 18446744073709551615ULL}, {"completion_tokens", -5}}}};
  http.replies = {{200, huge.dump(), ""}};
  ASSERT_TRUE(ProviderModel(env, http, o)->Ask(kRequest, 0).ok());
  auto reread = ProviderModel(env, http, o);
  ASSERT_TRUE(reread->Ask(kRequest, 0).ok());
  auto u = reread->usage()["fbkit.llm-gt/1 purpose"];
  EXPECT_EQ(u.input_tokens, 1000000000000LL);
  EXPECT_EQ(u.output_tokens, 0);
  o.url = "http://elsewhere";
  EXPECT_FALSE(ProviderModel(env, http, o)->Ask(kRequest, 0).ok())
      << "another endpoint's answers are not this one's";
  // An answer nested past any reader's depth, or over 1 MiB, is invalid, not a crash.
  std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_FALSE(BoundedAnswer("{\"top_objects\": " + deep + "}").ok() &&
               BoundedAnswer("{\"top_objects\": " + deep + "}")->size() > 10000);
  EXPECT_FALSE(BoundedAnswer(std::string(2u << 20, ' ')).ok());
  EXPECT_FALSE(BoundedAnswer("not json").ok());
}

TEST(ProviderTest, EveryRequestTaskHasAPromptAndAnswersLoseTheirFence) {
  // Each pipeline hands its own steps' prompts over; neither answers the other's tasks.
  const StepPrompts& make = extract::make::StepPrompts();
  const StepPrompts& race = groundtruth::StepPrompts();
  for (const char* task : {"classify_top_objects", "docstring", "task_statement"}) {
    auto p = SystemPrompt(make, task);
    ASSERT_TRUE(p.ok()) << task;
    EXPECT_NE(p->find("Answer: {"), std::string::npos) << task;
    EXPECT_TRUE(p->starts_with("You are one step of fbkit")) << task;
    EXPECT_FALSE(SystemPrompt(race, task).ok()) << task;
  }
  for (const char* task : {"steps", "issue", "purpose", "classify_intent", "summarize_trajectory",
                           "match_tasks", "match_steps", "judge_understanding"}) {
    auto p = SystemPrompt(race, task);
    ASSERT_TRUE(p.ok()) << task;
    EXPECT_NE(p->find("Answer: {"), std::string::npos) << task;
    EXPECT_FALSE(SystemPrompt(make, task).ok()) << task;
  }
  EXPECT_FALSE(SystemPrompt(race, "common").ok());
  EXPECT_FALSE(SystemPrompt(race, "match").ok());
  EXPECT_FALSE(SystemPrompt(make, "dance").ok());
  EXPECT_EQ(AnswerJson("```json\n{\"a\": {\"b\": 1}}\n```\n"), "{\"a\": {\"b\": 1}}");
  EXPECT_EQ(AnswerJson("no json"), "no json");
  EXPECT_TRUE(PromptsVersion(make).starts_with("fbkit-prompts/1-"));
  EXPECT_NE(PromptsVersion(make), PromptsVersion(race));
  // The version follows the texts, not where they are held: a copy gives the same one, and
  // a word changed in one prompt another.
  StepPrompts copy(race.begin(), race.end());
  std::vector<std::string> texts;
  for (const auto& f : race) texts.emplace_back(f.content);
  for (size_t i = 0; i < copy.size(); ++i) copy[i].content = texts[i];
  EXPECT_EQ(PromptsVersion(copy), PromptsVersion(race));
  std::string changed = texts.back() + " ";
  copy.back().content = changed;
  EXPECT_NE(PromptsVersion(copy), PromptsVersion(race));
  copy.back().content = texts.back();
  std::swap(copy.front(), copy.back());  // the order they are handed over in does not count
  EXPECT_EQ(PromptsVersion(copy), PromptsVersion(race));
}

}  // namespace
}  // namespace fbkit::model

// The built-in model providers (`--llm PROVIDER:MODEL`) for every model step: our prompts
// (model/prompts/common.md, then the step's own, which the pipeline hands over: StepPrompts),
// the provider's HTTP API (OpenAI chat
// completions, Anthropic Messages, Gemini generateContent), answers cached on disk by the
// hash of (provider, model, prompts' version, request, attempt), retries with backoff on 429,
// 5xx and lost connections, and a bound on concurrent requests. Answers that stay invalid
// fall back to the step's deterministic default (model.h's AskFor).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/http.h"
#include "model/model.h"
#include "util/embedded.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::model {

enum class Provider { kOpenAi, kAnthropic, kGemini };

// The prompts of the model steps a pipeline asks, one per request task, named "TASK.md"
// (extract::make::StepPrompts, groundtruth::StepPrompts).
using StepPrompts = std::vector<util::EmbeddedFile>;

struct ProviderOptions {
  Provider provider = Provider::kOpenAi;
  std::string model;
  std::string url;        // the API's base URL
  std::string api_key;    // empty: none sent (a local server)
  std::string cache_dir;  // empty: no cache
  bool offline = false;   // answers only from the cache
  int timeout_s = 120;    // per request
  int attempts = 5;       // per request, counting retries after 429, 5xx, no response
  int backoff_ms = 1000;  // the first retry's wait without Retry-After; doubles each time
  int concurrency = 4;    // requests in flight at once
  double price_in = -1;   // USD per million input tokens (--llm-price); < 0: unknown
  double price_out = -1;
  StepPrompts prompts;    // the steps this model answers
};

// Options for "PROVIDER:MODEL" (openai, anthropic, gemini), with the key and base URL from
// the providers' usual variables read through `getenv` (OPENAI_API_KEY, OPENAI_BASE_URL;
// ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL; GEMINI_API_KEY or GOOGLE_API_KEY,
// GOOGLE_GEMINI_BASE_URL); a non-empty `url` (--llm-url) wins over the variable. An error
// names what is wrong: the form, the provider, a missing key for the provider's own endpoint
// (unless `offline`).
util::Expected<ProviderOptions> ResolveProvider(
    const std::string& spec, const std::string& url, bool offline,
    const std::function<const char*(const char*)>& getenv);

// "fbkit-prompts/1-<12 hex>" of common.md and `steps`: changes whenever a prompt's text does,
// so cached answers of other prompts are never reused.
std::string PromptsVersion(const StepPrompts& steps);

// The system prompt for a request's task ("classify_top_objects", ...): common.md, then the
// task's own; an error for a task `steps` has no prompt for.
util::Expected<std::string> SystemPrompt(const StepPrompts& steps, const std::string& task);

// The JSON inside a model's text: the text without a Markdown fence, from its first '{' to
// its last '}' (unchanged when it has none; the step's reader refuses it).
std::string AnswerJson(const std::string& text);

// A provider's model. After a request fails for good (its retries spent), later requests
// fail at once with that error: a dead endpoint is not asked again for every task.
std::unique_ptr<Model> ProviderModel(util::Env& env, HttpClient& http, ProviderOptions options);

}  // namespace fbkit::model

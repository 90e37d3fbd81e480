// A model step's transport: one JSON request of docs/models.md in, one JSON answer out,
// from the --llm-cmd command (CommandModel) or a built-in provider (llm_provider.h). Every
// model step of fb-extract and fb-race asks through a Model with AskFor, which parses the
// answer with the step's own reader and counts what each step used.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::model {

// What one step ("fbkit.llm-top/1 classify_top_objects", ...) used. The counts depend only on
// the answers, never on whether they came from the cache, so documents that carry them stay
// byte-identical on a cached rerun.
struct StepUsage {
  int64_t answers = 0;        // answers read (valid or not)
  int64_t input_tokens = 0;   // as the provider counted them when it answered
  int64_t output_tokens = 0;
  int64_t invalid = 0;        // answers the step's reader refused
  int64_t fallbacks = 0;      // steps left to the deterministic default after two invalid answers
};

// What a run asked of the network: for progress lines and stderr, never for documents.
struct Traffic {
  int64_t requests = 0;    // HTTP requests made (retries included)
  int64_t cache_hits = 0;  // answers served from the cache
};

// Who answers, recorded in every document a model touched. Empty for --llm-cmd.
struct ModelInfo {
  std::string name;     // "openai:gpt-4o-mini"
  std::string prompts;  // the prompts' version, "fbkit-prompts/1-<hash>"
  double price_in = -1;  // USD per million tokens (--llm-price); < 0: unknown
  double price_out = -1;
  bool empty() const { return name.empty(); }
};

class Model {
 public:
  virtual ~Model() = default;
  // The raw answer to `request`; `attempt` 1 asks again because answer 0 was invalid (a
  // provider's cache keeps both, so a rerun reads the same pair).
  virtual util::Expected<std::string> Ask(const std::string& request, int attempt) = 0;
  virtual ModelInfo info() const { return {}; }
  // Where answers come from, to begin error messages: "--llm-cmd", "openai:gpt-4o-mini".
  virtual std::string source() const = 0;
  // Whether an answer that stays invalid leaves the step to its deterministic default (our
  // prompts) instead of failing it (--llm-cmd: the user's command answers as it was told).
  virtual bool falls_back() const { return false; }
  virtual Traffic traffic() const { return {}; }
  // How many requests failed for want of an answer (a failing command, a provider's error
  // after its retries): work a failure decided must not be kept as final.
  int64_t unavailable() const { return unavailable_.load(); }
  void CountUnavailable() { ++unavailable_; }

  // Usage per step, for the answers given so far.
  std::map<std::string, StepUsage> usage() const;
  // Adds `delta` to the step's usage (thread-safe).
  void Count(const std::string& step, const StepUsage& delta);

 private:
  mutable std::mutex mu_;
  std::map<std::string, StepUsage> usage_;
  std::atomic<int64_t> unavailable_{0};
};

// A model's answer made safe for the steps' readers: at most 1 MiB, JSON (a Markdown fence
// or prose around one object is dropped by the provider first), nesting and value counts
// bounded (util::ParseUntrustedJson), written out again; an error says why it is not.
util::Expected<std::string> BoundedAnswer(const std::string& text);

// "SCHEMA TASK" of a request ("fbkit.llm-gt/1 purpose"); "?" parts when it has none.
std::string StepOf(const std::string& request);

// The step's answer read by `read`, or nullopt when it stays invalid and the model falls
// back (the caller uses its deterministic default; the usage counts a fallback). An invalid
// answer is asked again once when the model falls back; otherwise it is the error, prefixed
// with the model's source. A model that cannot answer (a failing command, a provider error
// after its retries) is always an error.
template <typename T>
util::Expected<std::optional<T>> AskFor(
    Model& model, const std::string& request,
    const std::function<util::Expected<T>(const std::string&)>& read) {
  std::string step = StepOf(request);
  std::string last_error;
  for (int attempt = 0; attempt < (model.falls_back() ? 2 : 1); ++attempt) {
    auto answer = model.Ask(request, attempt);
    if (!answer.ok()) {
      model.CountUnavailable();
      return answer.failure();
    }
    auto bounded = BoundedAnswer(*answer);
    auto value = bounded.ok() ? read(*bounded) : util::Expected<T>(bounded.failure());
    model.Count(step, {.answers = 1, .invalid = value.ok() ? 0 : 1});
    if (value.ok()) return std::optional<T>(std::move(*value));
    last_error = model.source() + ": " + value.error();
  }
  if (!model.falls_back()) return util::Error{last_error};
  model.Count(step, {.fallbacks = 1});
  return std::optional<T>();
}

// The model's usage as a JSON object for documents: {"name", "prompts", "steps": {STEP:
// {answers, input_tokens, output_tokens, invalid, fallbacks, cost_usd?}}, "input_tokens",
// "output_tokens", "cost_usd"?}; cost only when the prices are known. Deterministic: counts of
// answers, not of requests. "" for a model without a name (--llm-cmd).
std::string UsageJson(const Model& model);

// {"name", "prompts"} of a model with a name, for documents a model touched; "" otherwise.
std::string ModelJson(const Model& model);

// The --llm-cmd model: each request runs the command (llm_cmd.h); `work_dir` holds the
// exchanged files.
std::unique_ptr<Model> CommandModel(util::Env& env, sandbox::Launcher& launcher, std::string cmd,
                                    std::string work_dir);

}  // namespace fbkit::model

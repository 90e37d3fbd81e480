#include "cli/model_options.h"

#include <cstdio>
#include <cstdlib>

#include "cli/cli_common.h"
#include "model/llm_provider.h"
#include "util/env.h"

namespace fbkit::cli {

void AddModelOptions(CLI::App* cmd, ModelArgs* a, const std::string& steps,
                     const model::StepPrompts& prompts) {
  a->prompts = prompts;
  cmd->add_option("--llm-cmd", a->cmd,
                  "Model command for " + steps +
                      ": one JSON request on stdin, one JSON answer on stdout "
                      "(docs/models.md)");
  cmd->add_option("--llm", a->llm,
                  "Built-in model for " + steps +
                      ": openai:MODEL, anthropic:MODEL or gemini:MODEL, with fbkit's prompts; "
                      "keys and endpoints from OPENAI_API_KEY/OPENAI_BASE_URL, "
                      "ANTHROPIC_API_KEY/ANTHROPIC_BASE_URL, GEMINI_API_KEY (or "
                      "GOOGLE_API_KEY)/GOOGLE_GEMINI_BASE_URL")
      ->excludes("--llm-cmd");
  cmd->add_option("--llm-url", a->url, "The --llm provider's base URL (over its variable)");
  cmd->add_option("--llm-cache", a->cache,
                  "Directory of cached --llm answers (default ~/.cache/fbkit/llm): a rerun "
                  "asks nothing twice");
  cmd->add_flag("--llm-offline", a->offline,
                "Answer --llm steps from the cache only (a missing answer is an error)");
  cmd->add_option("--llm-price", a->price,
                  "USD per million input and output tokens, IN,OUT (e.g. 0.15,0.60): "
                  "costs in the outputs");
  cmd->add_option("--llm-timeout", a->timeout, "Seconds per --llm request (default 120)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--llm-jobs", a->jobs, "--llm requests in flight at once (default 4)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--llm-retries", a->retries,
                  "Retries of an --llm request refused with 408, 409, 429 or 5xx or left "
                  "unanswered, waiting as Retry-After says or 1, 2, 4... s (default 4)")
      ->check(CLI::Range(0, 20));
}

namespace {

util::Status ParsePrice(const std::string& text, model::ProviderOptions* o) {
  if (text.empty()) return util::Status::Ok();
  size_t comma = text.find(',');
  try {
    if (comma == std::string::npos) throw std::invalid_argument("no comma");
    size_t used = 0;
    o->price_in = std::stod(text.substr(0, comma), &used);
    if (used != comma) throw std::invalid_argument("in");
    std::string out = text.substr(comma + 1);
    o->price_out = std::stod(out, &used);
    if (used != out.size() || o->price_in < 0 || o->price_out < 0) {
      throw std::invalid_argument("out");
    }
  } catch (const std::exception&) {
    return util::Error{"--llm-price " + text +
                       ": expected IN,OUT in USD per million tokens, e.g. 0.15,0.60"};
  }
  return util::Status::Ok();
}

}  // namespace

util::Expected<std::shared_ptr<model::Model>> MakeModel(const ModelArgs& a,
                                                         const std::string& work_dir) {
  if (!a.cmd.empty()) {
    return std::shared_ptr<model::Model>(
        model::CommandModel(util::RealEnv(), sandbox::RealLauncher(), a.cmd, work_dir));
  }
  if (a.llm.empty()) {
    for (const auto& [set, name] : {std::pair{!a.url.empty(), "--llm-url"},
                                    std::pair{!a.cache.empty(), "--llm-cache"},
                                    std::pair{a.offline, "--llm-offline"},
                                    std::pair{!a.price.empty(), "--llm-price"}}) {
      if (set) return util::Error{std::string(name) + " needs --llm PROVIDER:MODEL"};
    }
    return std::shared_ptr<model::Model>();
  }
  auto o = model::ResolveProvider(a.llm, a.url, a.offline,
                                   [](const char* name) { return std::getenv(name); });
  if (!o.ok()) return o.failure();
  if (auto s = ParsePrice(a.price, &*o); !s.ok()) return s.failure();
  if (!a.cache.empty()) {
    o->cache_dir = a.cache;
  } else if (auto dir = UserCacheDir("llm")) {
    o->cache_dir = *dir;
  }
  if (o->offline && o->cache_dir.empty()) {
    return util::Error{"--llm-offline: no cache directory (--llm-cache DIR, or HOME)"};
  }
  o->timeout_s = a.timeout;
  o->concurrency = a.jobs;
  o->attempts = a.retries + 1;
  o->prompts = a.prompts;
  return std::shared_ptr<model::Model>(
      model::ProviderModel(util::RealEnv(), model::CurlHttp(), std::move(*o)));
}

void ReportModel(const std::string& who, const model::Model* model) {
  if (!model || model->info().empty()) return;
  int64_t answers = 0, tokens = 0, fallbacks = 0;
  for (const auto& [step, u] : model->usage()) {
    answers += u.answers;
    tokens += u.input_tokens + u.output_tokens;
    fallbacks += u.fallbacks;
  }
  model::Traffic t = model->traffic();
  std::fprintf(stderr,
               "%s: model %s: %lld answers (%lld requests, %lld from the cache), %lld tokens, "
               "%lld steps left to the default\n",
               who.c_str(), model->info().name.c_str(), static_cast<long long>(answers),
               static_cast<long long>(t.requests), static_cast<long long>(t.cache_hits),
               static_cast<long long>(tokens), static_cast<long long>(fallbacks));
}

}  // namespace fbkit::cli

#include "model/llm_provider.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "model/prompt_files.h"
#include "util/hash.h"
#include "util/strings.h"
#include "util/json_read.h"

namespace fbkit::model {

using nlohmann::json;

namespace {

struct Wire {
  const char* name;
  const char* key_vars[2];
  const char* url_var;
  const char* default_url;
};

const Wire& WireOf(Provider p) {
  static const Wire wires[] = {
      {"openai", {"OPENAI_API_KEY", nullptr}, "OPENAI_BASE_URL", "https://api.openai.com/v1"},
      {"anthropic", {"ANTHROPIC_API_KEY", nullptr}, "ANTHROPIC_BASE_URL",
       "https://api.anthropic.com"},
      {"gemini", {"GEMINI_API_KEY", "GOOGLE_API_KEY"}, "GOOGLE_GEMINI_BASE_URL",
       "https://generativelanguage.googleapis.com"},
  };
  return wires[static_cast<int>(p)];
}

std::string FileText(const std::string& name) {
  return std::string(util::FindEmbedded(PromptFiles(), name));
}

// `url` without user:password@ (for messages and documents).
std::string Redacted(const std::string& url) {
  size_t scheme = url.find("://");
  size_t host = scheme == std::string::npos ? 0 : scheme + 3;
  size_t at = url.find('@', host), slash = url.find('/', host);
  if (at == std::string::npos || (slash != std::string::npos && at > slash)) return url;
  return url.substr(0, host) + url.substr(at + 1);
}

// Whether plain-http `url` reaches this machine only (localhost, 127.x, [::1]).
bool Loopback(const std::string& url) {
  std::string rest = Redacted(url).substr(std::string("http://").size());
  std::string host = rest.substr(0, rest.find_first_of("/?#"));
  if (host.starts_with("[")) return host.starts_with("[::1]");
  host = host.substr(0, host.find(':'));
  return host == "localhost" || host.starts_with("127.");
}

}  // namespace

util::Expected<ProviderOptions> ResolveProvider(
    const std::string& spec, const std::string& url, bool offline,
    const std::function<const char*(const char*)>& getenv) {
  size_t colon = spec.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size()) {
    return util::Error{"--llm " + spec + ": expected PROVIDER:MODEL, e.g. openai:gpt-4o-mini"};
  }
  ProviderOptions o;
  std::string name = spec.substr(0, colon);
  bool known = false;
  for (Provider p : {Provider::kOpenAi, Provider::kAnthropic, Provider::kGemini}) {
    if (name == WireOf(p).name) o.provider = p, known = true;
  }
  if (!known) {
    return util::Error{"--llm " + spec + ": unknown provider '" + name +
                       "' (openai, anthropic or gemini; --llm-cmd for anything else)"};
  }
  o.model = spec.substr(colon + 1);
  o.offline = offline;
  const Wire& w = WireOf(o.provider);
  const char* var_url = getenv(w.url_var);
  o.url = !url.empty() ? url : (var_url && *var_url ? var_url : w.default_url);
  while (o.url.size() > 1 && o.url.back() == '/') o.url.pop_back();
  for (const char* var : w.key_vars) {
    const char* key = var ? getenv(var) : nullptr;
    if (key && *key && o.api_key.empty()) o.api_key = key;
  }
  if (!o.api_key.empty() && o.url.starts_with("http://") && !Loopback(o.url)) {
    return util::Error{"--llm " + spec + ": refusing to send the API key over plain http to " +
                       Redacted(o.url) + " (use https, or unset the key for a server that needs none)"};
  }
  if (o.api_key.empty() && !offline && o.url == w.default_url) {
    return util::Error{"--llm " + spec + ": no API key: set " + std::string(w.key_vars[0]) +
                       (w.key_vars[1] ? std::string(" or ") + w.key_vars[1] : "") +
                       " (or --llm-url for a server that needs none)"};
  }
  return o;
}

std::string PromptsVersion(const StepPrompts& steps) {
  std::vector<util::EmbeddedFile> all = PromptFiles();
  all.insert(all.end(), steps.begin(), steps.end());
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::string text;
  for (const auto& f : all) text += std::string(f.name) + "\n" + std::string(f.content);
  return "fbkit-prompts/1-" + util::Sha256Hex(text).substr(0, 12);
}

util::Expected<std::string> SystemPrompt(const StepPrompts& steps, const std::string& task) {
  std::string body(util::FindEmbedded(steps, task + ".md"));
  if (body.empty()) return util::Error{"no prompt for the model step '" + task + "'"};
  return FileText("common.md") + "\n" + body;
}

std::string AnswerJson(const std::string& text) {
  size_t b = text.find('{'), e = text.rfind('}');
  if (b == std::string::npos || e == std::string::npos || e < b) return text;
  return text.substr(b, e - b + 1);
}

namespace {

struct Reply {
  std::string text;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
};

// JSON text that never throws: bytes that are not UTF-8 become U+FFFD.
std::string Dump(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

int64_t IntAt(const json& j, const char* a, const char* b) {
  if (!j.is_object() || !j.contains(a) || !j[a].is_object()) return 0;
  const json& u = j[a];
  if (!u.contains(b) || !u[b].is_number_integer()) return 0;
  // A count as an endpoint reports it, within what a model call can use.
  if (u[b].is_number_unsigned()) return static_cast<int64_t>(std::min<uint64_t>(u[b].get<uint64_t>(), 1000000000000ULL));
  return std::clamp<int64_t>(u[b].get<int64_t>(), 0, 1000000000000LL);
}

class Semaphore {
 public:
  explicit Semaphore(int n) : free_(n < 1 ? 1 : n) {}
  void Acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return free_ > 0; });
    --free_;
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++free_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
};

class Api : public Model {
 public:
  Api(util::Env& env, HttpClient& http, ProviderOptions o)
      : env_(env), http_(http), o_(std::move(o)), version_(PromptsVersion(o_.prompts)),
        slots_(o_.concurrency) {}

  util::Expected<std::string> Ask(const std::string& request, int attempt) override {
    json req = json::parse(request, nullptr, false);
    if (!req.is_object() || !req.contains("task") || !req["task"].is_string()) {
      return util::Error{Name() + ": the request names no task"};
    }
    auto system = SystemPrompt(o_.prompts, req["task"].get<std::string>());
    if (!system.ok()) return util::Error{Name() + ": " + system.error()};
    std::string key = util::Sha256Hex(Name() + "\n" + o_.url + "\n" + version_ + "\n" +
                                       std::to_string(attempt) + "\n" + Dump(req, -1));
    std::string step = StepOf(request);
    if (auto hit = FromCache(key)) {
      ++traffic_hits_;
      Count(step, {.input_tokens = hit->input_tokens, .output_tokens = hit->output_tokens});
      return AnswerJson(hit->text);
    }
    if (o_.offline) {
      return util::Error{Name() + ": no cached answer for a " + step +
                         " request (--llm-offline)"};
    }
    {
      std::lock_guard<std::mutex> lock(down_mu_);
      if (!down_.empty()) return util::Error{down_ + " (an earlier request; not asked again)"};
    }
    std::string user = "The request:\n" + Dump(req, 2) + "\n";
    if (attempt > 0) {
      user += "\nYour previous answer to this request could not be read. Answer again with "
              "exactly one JSON object of the shape asked.\n";
    }
    auto reply = Exchange(*system, user);
    if (!reply.ok()) {
      std::lock_guard<std::mutex> lock(down_mu_);
      if (down_.empty()) down_ = reply.error();  // a dead endpoint is not asked a thousand times
      return reply.failure();
    }
    if (auto s = ToCache(key, *reply); !s.ok()) return s.failure();
    Count(step, {.input_tokens = reply->input_tokens, .output_tokens = reply->output_tokens});
    return AnswerJson(reply->text);
  }

  ModelInfo info() const override {
    return {Name(), version_, o_.price_in, o_.price_out};
  }
  bool falls_back() const override { return true; }
  std::string source() const override { return Name(); }
  Traffic traffic() const override { return {traffic_requests_.load(), traffic_hits_.load()}; }

 private:
  std::string Name() const { return std::string(WireOf(o_.provider).name) + ":" + o_.model; }

  std::string CachePath(const std::string& key) const {
    return util::JoinPath(util::JoinPath(o_.cache_dir, key.substr(0, 2)), key + ".json");
  }

  std::optional<Reply> FromCache(const std::string& key) {
    if (o_.cache_dir.empty()) return std::nullopt;
    // No links, no FIFOs, bounded: whatever else is in the directory is no answer.
    auto text = env_.ReadUntrusted(o_.cache_dir, key.substr(0, 2) + "/" + key + ".json", 4u << 20);
    if (!text.ok()) return std::nullopt;
    json j = util::ParseUntrustedJson(*text);
    if (!j.is_object() || !j.contains("answer") || !j["answer"].is_string()) return std::nullopt;
    Reply r;
    r.text = j["answer"].get<std::string>();
    if (j.contains("input_tokens") && j["input_tokens"].is_number_integer())
      r.input_tokens = j["input_tokens"].get<int64_t>();
    if (j.contains("output_tokens") && j["output_tokens"].is_number_integer())
      r.output_tokens = j["output_tokens"].get<int64_t>();
    return r;
  }

  util::Status ToCache(const std::string& key, const Reply& r) {
    if (o_.cache_dir.empty()) return util::Status::Ok();
    std::string path = CachePath(key);
    if (auto s = env_.MakeDirs(util::DirName(path)); !s.ok()) return s;
    auto dir = env_.Stat(util::DirName(path), false);
    if (!dir.ok() || dir->type != util::FileType::kDirectory) {
      return util::Error{Name() + ": " + util::DirName(path) + " in the cache is no directory"};
    }
    json j = {{"answer", r.text},
              {"input_tokens", r.input_tokens},
              {"output_tokens", r.output_tokens},
              {"model", Name()},
              {"prompts", version_}};
    return env_.WriteFileAtomic(path, Dump(j, 1) + "\n");
  }

  HttpRequest Render(const std::string& system, const std::string& user) const {
    HttpRequest h;
    h.timeout_s = o_.timeout_s;
    h.headers = {"Content-Type: application/json"};
    json body;
    switch (o_.provider) {
      case Provider::kOpenAi:
        h.url = o_.url + "/chat/completions";
        if (!o_.api_key.empty()) h.headers.push_back("Authorization: Bearer " + o_.api_key);
        body = {{"model", o_.model},
                {"messages", {{{"role", "system"}, {"content", system}},
                              {{"role", "user"}, {"content", user}}}},
                {"response_format", {{"type", "json_object"}}}};
        break;
      case Provider::kAnthropic:
        h.url = o_.url + "/v1/messages";
        if (!o_.api_key.empty()) h.headers.push_back("x-api-key: " + o_.api_key);
        h.headers.push_back("anthropic-version: 2023-06-01");
        body = {{"model", o_.model},
                {"max_tokens", 8192},
                {"temperature", 0},
                {"system", system},
                {"messages", {{{"role", "user"}, {"content", user}}}}};
        break;
      case Provider::kGemini:
        h.url = o_.url + "/v1beta/models/" + o_.model + ":generateContent";
        if (!o_.api_key.empty()) h.headers.push_back("x-goog-api-key: " + o_.api_key);
        body = {{"systemInstruction", {{"parts", {{{"text", system}}}}}},
                {"contents", {{{"role", "user"}, {"parts", {{{"text", user}}}}}}},
                {"generationConfig",
                 {{"temperature", 0}, {"responseMimeType", "application/json"}}}};
        break;
    }
    h.body = Dump(body, -1);
    return h;
  }

  // The model's text and token counts from a 200 answer.
  util::Expected<Reply> Parse(const std::string& body) const {
    json j = util::ParseUntrustedJson(body);  // an endpoint's answer, bounded
    Reply r;
    try {
      switch (o_.provider) {
        case Provider::kOpenAi: {
          const json& content = j.at("choices").at(0).at("message").at("content");
          r.text = content.is_string() ? content.get<std::string>() : "";
          r.input_tokens = IntAt(j, "usage", "prompt_tokens");
          r.output_tokens = IntAt(j, "usage", "completion_tokens");
          break;
        }
        case Provider::kAnthropic:
          for (const auto& block : j.at("content")) {
            if (block.value("type", "") == "text") r.text += block.value("text", "");
          }
          r.input_tokens = IntAt(j, "usage", "input_tokens");
          r.output_tokens = IntAt(j, "usage", "output_tokens");
          break;
        case Provider::kGemini:
          for (const auto& part : j.at("candidates").at(0).at("content").at("parts")) {
            r.text += part.value("text", "");
          }
          r.input_tokens = IntAt(j, "usageMetadata", "promptTokenCount");
          r.output_tokens = IntAt(j, "usageMetadata", "candidatesTokenCount");
          break;
      }
    } catch (const json::exception&) {
      return util::Error{Name() + ": the answer has no text where the API puts it: " +
                         util::Printable(body.substr(0, 300))};
    }
    return r;
  }

  static bool Retryable(long status) {
    return status == 408 || status == 409 || status == 429 || status >= 500;
  }

  int WaitMs(const HttpResponse* got, int retry) const {
    if (got && !got->retry_after.empty() &&
        got->retry_after.find_first_not_of("0123456789") == std::string::npos &&
        got->retry_after.size() < 6) {
      return std::min(60, std::stoi(got->retry_after)) * 1000;
    }
    return std::min(60000, o_.backoff_ms << std::min(retry, 16));
  }

  util::Expected<Reply> Exchange(const std::string& system, const std::string& user) {
    HttpRequest h = Render(system, user);
    std::string last;
    for (int attempt = 0; attempt < std::max(1, o_.attempts); ++attempt) {
      slots_.Acquire();
      ++traffic_requests_;
      auto got = http_.Post(h);
      slots_.Release();
      if (got.ok() && got->too_big) {
        return util::Error{Name() + ": the answer of " + Redacted(h.url) + " is over 32 MiB"};
      }
      if (got.ok() && got->status >= 200 && got->status < 300) return Parse(got->body);
      if (got.ok()) {
        last = Name() + ": HTTP " + std::to_string(got->status) + " from " + Redacted(h.url) +
               ": " + util::Printable(got->body.substr(0, 300));
        if (!Retryable(got->status)) return util::Error{last};
      } else {
        std::string e = got.error(), shown = Redacted(h.url);
        for (size_t at = e.find(h.url); at != std::string::npos && shown != h.url;
             at = e.find(h.url, at + shown.size())) {
          e.replace(at, h.url.size(), shown);
        }
        last = Name() + ": " + util::Printable(e);
      }
      if (attempt + 1 < o_.attempts) {
        std::this_thread::sleep_for(
            std::chrono::milliseconds(WaitMs(got.ok() ? &*got : nullptr, attempt)));
      }
    }
    return util::Error{last + " (after " + std::to_string(o_.attempts) + " attempts)"};
  }

  util::Env& env_;
  HttpClient& http_;
  ProviderOptions o_;
  std::string version_;  // PromptsVersion(o_.prompts)
  Semaphore slots_;
  std::mutex down_mu_;
  std::string down_;  // the error that took the endpoint down, "" while it answers
  std::atomic<int64_t> traffic_requests_{0};
  std::atomic<int64_t> traffic_hits_{0};
};

}  // namespace

std::unique_ptr<Model> ProviderModel(util::Env& env, HttpClient& http, ProviderOptions options) {
  return std::make_unique<Api>(env, http, std::move(options));
}

}  // namespace fbkit::model

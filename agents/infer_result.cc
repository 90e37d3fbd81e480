#include "agents/infer_result.h"

#include <nlohmann/json.hpp>

#include "util/json_read.h"

namespace fbkit::agents {
namespace {

using json = nlohmann::json;

std::optional<Usage> UsageFromJson(const json& j, const std::string& source) {
  if (!j.is_object() || !j.contains("input_tokens") || !j.contains("output_tokens")) {
    return std::nullopt;
  }
  if (!j["input_tokens"].is_number_integer() || !j["output_tokens"].is_number_integer()) {
    return std::nullopt;
  }
  Usage u;
  u.input_tokens = j["input_tokens"].get<int64_t>();
  u.output_tokens = j["output_tokens"].get<int64_t>();
  if (j.contains("cost") && j["cost"].is_number()) u.cost = j["cost"].get<double>();
  if (j.contains("api_calls") && j["api_calls"].is_number_integer()) {
    u.api_calls = j["api_calls"].get<int64_t>();
  }
  u.source = source;
  return u;
}

json UsageJson(const Usage& u) {
  json j = {{"input_tokens", u.input_tokens}, {"output_tokens", u.output_tokens},
            {"source", u.source}};
  j["cost"] = u.cost ? json(*u.cost) : json(nullptr);
  j["api_calls"] = u.api_calls >= 0 ? json(u.api_calls) : json(nullptr);
  return j;
}

}  // namespace

std::string_view InferStatusName(InferStatus s) {
  switch (s) {
    case InferStatus::kFinished: return "finished";
    case InferStatus::kTimedOut: return "timed_out";
    case InferStatus::kError: return "error";
  }
  return "error";
}

std::optional<InferStatus> InferStatusFromName(std::string_view name) {
  for (InferStatus s : {InferStatus::kFinished, InferStatus::kTimedOut, InferStatus::kError}) {
    if (InferStatusName(s) == name) return s;
  }
  return std::nullopt;
}

std::string InferResultJson(const InferResult& r) {
  json j = {{"schema", "fbkit.infer-result/1"},
            {"instance_id", r.instance_id},
            {"level", r.level},
            {"status", InferStatusName(r.status)},
            {"error", r.error},
            {"exit_code", r.exit_code},
            {"signal", r.signal},
            {"agent_seconds", static_cast<int64_t>(r.agent_seconds * 1000) / 1000.0},
            {"fbkit_seconds", static_cast<int64_t>(r.fbkit_seconds * 1000) / 1000.0},
            {"patch_sha256", r.patch_sha256},
            {"excluded", r.excluded}};
  if (!r.exposed_copies.empty()) j["exposed_copies"] = r.exposed_copies;
  if (!r.network.empty()) j["network"] = r.network;
  if (!r.network_refused.empty()) j["network_refused"] = r.network_refused;
  j["usage"] = r.usage ? UsageJson(*r.usage) : json(nullptr);
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

util::Expected<InferResult> ParseInferResult(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != "fbkit.infer-result/1") {
    return util::Error{"not an fbkit infer result"};
  }
  try {
    InferResult r;
    r.instance_id = j.at("instance_id").get<std::string>();
    r.level = j.at("level").get<int>();
    auto status = InferStatusFromName(j.at("status").get<std::string>());
    if (!status) return util::Error{"status: not finished, timed_out or error"};
    r.status = *status;
    r.error = j.at("error").get<std::string>();
    r.exit_code = j.at("exit_code").get<int>();
    r.signal = j.at("signal").get<int>();
    r.agent_seconds = j.at("agent_seconds").get<double>();
    r.fbkit_seconds = j.at("fbkit_seconds").get<double>();
    r.patch_sha256 = j.at("patch_sha256").get<std::string>();
    r.excluded = util::JsonStringList(j, "excluded");
    r.exposed_copies = util::JsonStringList(j, "exposed_copies");
    r.network = j.value("network", "");
    r.network_refused = util::JsonStringList(j, "network_refused");
    if (j.contains("usage") && j["usage"].is_object()) {
      r.usage = UsageFromJson(j["usage"], j["usage"].value("source", ""));
    }
    return r;
  } catch (const json::exception& e) {
    return util::Error{e.what()};
  }
}

std::optional<Usage> ParseUsage(const std::string& text, const std::string& source) {
  return UsageFromJson(util::ParseUntrustedJson(text), source);
}

}  // namespace fbkit::agents

#include "model/model.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "model/llm_cmd.h"
#include "util/json_read.h"
#include "util/strings.h"
#include "util/json_writer.h"

namespace fbkit::model {

std::map<std::string, StepUsage> Model::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}

void Model::Count(const std::string& step, const StepUsage& delta) {
  std::lock_guard<std::mutex> lock(mu_);
  StepUsage& u = usage_[step];
  u.answers += delta.answers;
  u.input_tokens += delta.input_tokens;
  u.output_tokens += delta.output_tokens;
  u.invalid += delta.invalid;
  u.fallbacks += delta.fallbacks;
}

util::Expected<std::string> BoundedAnswer(const std::string& text) {
  if (text.size() > (1u << 20)) {
    return util::Error{"the answer is over 1 MiB (" + std::to_string(text.size()) + " bytes)"};
  }
  nlohmann::json j = util::ParseUntrustedJson(text);
  if (j.is_discarded()) return util::Error{"the answer is not JSON: " + util::Printable(text.substr(0, 200))};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string StepOf(const std::string& request) {
  auto j = nlohmann::json::parse(request, nullptr, false);
  auto field = [&](const char* key) -> std::string {
    if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "?";
    return j[key].get<std::string>();
  };
  return field("schema") + " " + field("task");
}

namespace {

std::string Dollars(double usd) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", usd);
  return buf;
}

void WriteCounts(util::JsonWriter& w, const ModelInfo& info, const StepUsage& u, bool all) {
  if (info.price_in >= 0 && info.price_out >= 0) {
    w.Key("cost_usd"), w.Raw(Dollars((static_cast<double>(u.input_tokens) * info.price_in +
                                      static_cast<double>(u.output_tokens) * info.price_out) /
                                     1e6));
  }
  if (!all) w.Key("answers"), w.Int(u.answers);
  if (!all) w.Key("fallbacks"), w.Int(u.fallbacks);
  w.Key("input_tokens"), w.Int(u.input_tokens);
  if (!all) w.Key("invalid"), w.Int(u.invalid);
  w.Key("output_tokens"), w.Int(u.output_tokens);
}

}  // namespace

std::string UsageJson(const Model& model) {
  ModelInfo info = model.info();
  if (info.empty()) return "";
  auto steps = model.usage();
  StepUsage total;
  for (const auto& [step, u] : steps) {
    total.input_tokens += u.input_tokens;
    total.output_tokens += u.output_tokens;
  }
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  WriteCounts(w, info, total, true);
  w.Key("name"), w.String(info.name);
  w.Key("prompts"), w.String(info.prompts);
  w.Key("steps"), w.BeginObject();
  for (const auto& [step, u] : steps) {
    w.Key(step), w.BeginObject();
    WriteCounts(w, info, u, false);
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return out;
}

std::string ModelJson(const Model& model) {
  ModelInfo info = model.info();
  if (info.empty()) return "";
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("name"), w.String(info.name);
  w.Key("prompts"), w.String(info.prompts);
  w.EndObject();
  return out;
}

namespace {

class Command : public Model {
 public:
  Command(util::Env& env, sandbox::Launcher& launcher, std::string cmd, std::string work_dir)
      : env_(env), launcher_(launcher), cmd_(std::move(cmd)), work_dir_(std::move(work_dir)) {}

  util::Expected<std::string> Ask(const std::string& request, int /*attempt*/) override {
    return RunLlmCommand(env_, launcher_, cmd_, request, work_dir_);
  }
  std::string source() const override { return "--llm-cmd"; }

 private:
  util::Env& env_;
  sandbox::Launcher& launcher_;
  std::string cmd_;
  std::string work_dir_;
};

}  // namespace

std::unique_ptr<Model> CommandModel(util::Env& env, sandbox::Launcher& launcher, std::string cmd,
                                    std::string work_dir) {
  return std::make_unique<Command>(env, launcher, std::move(cmd), std::move(work_dir));
}

}  // namespace fbkit::model

// The model options every command with a model step shares: --llm-cmd CMD (the JSON
// protocol of docs/models.md) or --llm PROVIDER:MODEL (a built-in provider with our
// prompts), with --llm-url, --llm-cache, --llm-offline, --llm-price, --llm-timeout,
// --llm-jobs, --llm-retries.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "model/llm_provider.h"
#include "model/model.h"
#include "util/expected.h"

namespace fbkit::cli {

struct ModelArgs {
  std::string cmd;
  std::string llm;
  std::string url;
  std::string cache;
  std::string price;
  bool offline = false;
  int timeout = 120;
  int jobs = 4;
  int retries = 4;
  model::StepPrompts prompts;  // the command's steps' prompts, for --llm
};

// Adds the options; `steps` says what the model does for this command (in --help), `prompts`
// are its steps' prompts for a built-in provider.
void AddModelOptions(CLI::App* cmd, ModelArgs* a, const std::string& steps,
                     const model::StepPrompts& prompts);

// The model the options name, or null for none (the deterministic defaults). `work_dir`
// holds --llm-cmd's exchanged files. Errors name the option at fault.
util::Expected<std::shared_ptr<model::Model>> MakeModel(const ModelArgs& a,
                                                         const std::string& work_dir);

// "WHO: model NAME: N answers (R requests, H from the cache), T tokens" on stderr.
void ReportModel(const std::string& who, const model::Model* model);

}  // namespace fbkit::cli

// One agent's run as `fb-extract infer` records it, RUN_DIR/<id>/result.json
// (fbkit.infer-result/1), and the usage an agent reports ($FBKIT_USAGE, usage.json): their
// one owner, writer and reader both (extract/infer writes and re-reads them, extract/eval
// reads the usage beside the predictions; docs/formats.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.h"

namespace fbkit::agents {

// Token usage as an agent reported it.
struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  std::optional<double> cost;
  int64_t api_calls = -1;  // -1: unknown
  std::string source;      // the file it came from (relative to the instance directory)
};

// How an agent's run ended; InferStatusName is what result.json says.
enum class InferStatus {
  kFinished,  // "finished": the agent exited (any exit code)
  kTimedOut,  // "timed_out": stopped at --timeout
  kError,     // "error": it could not run, or its result could not be collected
};

std::string_view InferStatusName(InferStatus s);
std::optional<InferStatus> InferStatusFromName(std::string_view name);

struct InferResult {
  std::string instance_id;
  int level = 1;
  InferStatus status = InferStatus::kError;
  std::string error;   // why the instance could not be run
  int exit_code = -1;
  int signal = 0;
  double agent_seconds = 0;
  double fbkit_seconds = 0;  // workspace preparation, diff and bookkeeping
  std::string patch;
  std::string patch_sha256;
  std::vector<std::string> excluded;  // "PATH: binary" or "PATH: N KiB (over the limit)"
  std::string network;                      // AgentNetworkName of what the agent had
  std::vector<std::string> network_refused;  // requests the model proxy refused (at most 100)
  // Copies of the task's packages the agent could read, allowed (--exposed-copies allow).
  std::vector<std::string> exposed_copies;
  std::optional<Usage> usage;
  // The agent's command could not start inside the sandbox (exit 126/127 with the shell's
  // "not found" or "Permission denied"): a batch stops here, every instance would fail alike.
  bool could_not_start = false;
};

std::string InferResultJson(const InferResult& r);
util::Expected<InferResult> ParseInferResult(const std::string& json);

// An agent's usage.json ({input_tokens, output_tokens, cost?, api_calls?}; untrusted text),
// its `source` set to `source`; nullopt when the counts are missing or not whole numbers.
std::optional<Usage> ParseUsage(const std::string& text, const std::string& source);

}  // namespace fbkit::agents

// HTTPS POSTs for the built-in model providers (llm_provider.h), behind an interface so the
// provider logic is tested over a fake. The real client is libcurl with the system's CA
// bundle and proxy variables; its answers are bounded in size and time.
#pragma once

#include <string>
#include <vector>

#include "util/expected.h"

namespace fbkit::model {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  int timeout_s = 120;  // the whole exchange
};

struct HttpResponse {
  long status = 0;
  std::string body;
  std::string retry_after;  // the Retry-After header, when sent
  bool too_big = false;     // the answer was over 32 MiB and was cut off (no status, no body)
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // The response, whatever its status (too_big for an answer over 32 MiB); an error when
  // no response came (no connection, a timeout), naming the URL.
  virtual util::Expected<HttpResponse> Post(const HttpRequest& request) = 0;
};

// The process-wide libcurl client (thread-safe).
HttpClient& CurlHttp();

}  // namespace fbkit::model

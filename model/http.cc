#include "model/http.h"

#include <curl/curl.h>

#include <cctype>
#include <memory>
#include <mutex>

namespace fbkit::model {

namespace {

constexpr size_t kMaxBody = 32u << 20;

struct Received {
  std::string body;
  std::string retry_after;
  bool too_big = false;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* r = static_cast<Received*>(user);
  size_t n = size * count;
  if (r->body.size() + n > kMaxBody) {
    r->too_big = true;
    return 0;  // stops the transfer
  }
  r->body.append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* r = static_cast<Received*>(user);
  size_t n = size * count;
  std::string line(data, n);
  const std::string name = "retry-after:";
  if (line.size() > name.size()) {
    std::string head = line.substr(0, name.size());
    for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (head == name) {
      std::string v = line.substr(name.size());
      size_t b = v.find_first_not_of(" \t"), e = v.find_last_not_of(" \t\r\n");
      r->retry_after = b == std::string::npos ? "" : v.substr(b, e - b + 1);
    }
  }
  return n;
}

class Curl : public HttpClient {
 public:
  Curl() { curl_global_init(CURL_GLOBAL_DEFAULT); }

  util::Expected<HttpResponse> Post(const HttpRequest& req) override {
    std::unique_ptr<CURL, void (*)(CURL*)> h(curl_easy_init(), curl_easy_cleanup);
    if (!h) return util::Error{"HTTP: cannot start a request to " + req.url};
    curl_slist* list = nullptr;
    for (const auto& header : req.headers) list = curl_slist_append(list, header.c_str());
    std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(list, curl_slist_free_all);
    Received r;
    char error[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(h.get(), CURLOPT_URL, req.url.c_str());
    curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(h.get(), CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(h.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    curl_easy_setopt(h.get(), CURLOPT_TIMEOUT, static_cast<long>(req.timeout_s));
    curl_easy_setopt(h.get(), CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h.get(), CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(h.get(), CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(h.get(), CURLOPT_HEADERDATA, &r);
    curl_easy_setopt(h.get(), CURLOPT_ERRORBUFFER, error);
    CURLcode rc = curl_easy_perform(h.get());
    if (r.too_big) {
      HttpResponse big;
      big.too_big = true;
      return big;
    }
    if (rc != CURLE_OK) {
      return util::Error{"HTTP: " + req.url + ": " +
                         (error[0] ? std::string(error) : curl_easy_strerror(rc))};
    }
    HttpResponse out;
    curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &out.status);
    out.body = std::move(r.body);
    out.retry_after = std::move(r.retry_after);
    return out;
  }
};

}  // namespace

HttpClient& CurlHttp() {
  static Curl* client = new Curl();
  return *client;
}

}  // namespace fbkit::model

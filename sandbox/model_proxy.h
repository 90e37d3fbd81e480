// The only way out of an agent's sandbox under `infer --network model`: an HTTP proxy fbkit
// runs on the host, reached through a unix socket bound into the sandbox (whose own network
// namespace has nothing but loopback), that forwards CONNECT tunnels and plain-HTTP requests
// to the model endpoints it was given and to nothing else. No DNS inside the sandbox: the
// host resolves the allowed names. What the agent runs on its loopback to reach the socket
// (ForwarderCommand) is plumbing only; the host side decides.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "util/expected.h"

namespace fbkit::sandbox {

// A host and port a proxy forwards to ("api.openai.com", 443).
struct Endpoint {
  std::string host;  // lower case; a name or an IP literal (IPv6 without brackets)
  int port = 0;
  bool operator==(const Endpoint&) const = default;
};

// The endpoint a URL names ("https://h/v1" -> h:443, "http://127.0.0.1:8/x" -> 127.0.0.1:8);
// an error for anything but http(s)://HOST[:PORT][/...].
util::Expected<Endpoint> EndpointOf(const std::string& url);
// "HOST:PORT" ("[::1]:8080" for IPv6).
util::Expected<Endpoint> ParseEndpoint(const std::string& text);
std::string EndpointName(const Endpoint& e);

// What a proxy does with one request head (up to the blank line): the endpoint it asks for
// and, for a plain-HTTP request in absolute form, the head rewritten to origin form with
// `Connection: close`; an error (sent back as 400/403) otherwise.
struct ProxyRoute {
  Endpoint to;
  bool tunnel = false;   // CONNECT: answer 200, then bytes both ways
  std::string head;      // plain HTTP: what to send the endpoint first
};
util::Expected<ProxyRoute> RouteRequest(const std::string& head,
                                        const std::vector<Endpoint>& allowed);

// A running proxy: listens on `socket_path` (made 0666 in a directory fbkit owns) until
// destroyed; each connection on a thread of its own, bounded in number (64 at once) and in
// idle time (10 minutes). Refused requests are counted and the first few logged.
class ModelProxy {
 public:
  static util::Expected<std::unique_ptr<ModelProxy>> Start(const std::string& socket_path,
                                                           std::vector<Endpoint> allowed);
  virtual ~ModelProxy() = default;
  // Requests refused so far, "CONNECT evil.example:443: not an allowed endpoint".
  virtual std::vector<std::string> Refused() const = 0;
};

// A fresh directory for a proxy's socket, /tmp/fbkit-proxy-XXXXXX (short: a socket's path
// holds 107 bytes), mode 0711: the sandbox's user reaches the socket, lists nothing.
util::Expected<std::string> SocketDir();

// The shell command, run inside the sandbox before the agent, that listens on
// 127.0.0.1:`port` and carries each connection to the unix socket `socket` (a small Python
// program run by `python`, in the background).
std::string ForwarderCommand(const std::string& python, int port, const std::string& socket);

}  // namespace fbkit::sandbox

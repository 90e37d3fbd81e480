#include "sandbox/model_proxy.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <thread>

#include "util/strings.h"

namespace fbkit::sandbox {
namespace {

// "HOST[:PORT]" of an authority, brackets around an IPv6 literal; `port` when none is named.
util::Expected<Endpoint> Authority(const std::string& text, int port) {
  Endpoint e;
  std::string rest;
  if (text.starts_with("[")) {
    size_t close = text.find(']');
    if (close == std::string::npos) return util::Error{"an unclosed [ in '" + text + "'"};
    e.host = text.substr(1, close - 1);
    rest = text.substr(close + 1);
  } else {
    size_t colon = text.find(':');
    e.host = text.substr(0, colon);
    rest = colon == std::string::npos ? "" : text.substr(colon);
  }
  e.host = util::AsciiLower(e.host);
  if (e.host.empty() || e.host.find_first_of(" \t\r\n/@?#") != std::string::npos) {
    return util::Error{"no host in '" + text + "'"};
  }
  e.port = port;
  if (!rest.empty()) {
    if (rest[0] != ':' || rest.size() < 2 || rest.size() > 6 ||
        rest.find_first_not_of("0123456789", 1) != std::string::npos) {
      return util::Error{"a bad port in '" + text + "'"};
    }
    e.port = std::stoi(rest.substr(1));
  }
  if (e.port <= 0 || e.port > 65535) return util::Error{"a bad port in '" + text + "'"};
  return e;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void Answer(int fd, int status, const std::string& reason, const std::string& why) {
  std::string body = "fbkit's model proxy: " + why + "\n";
  SendAll(fd, "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: text/plain\r\n" +
                  "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
}

// A connection to `to`, resolved on the host; -1 when none could be made within 30 s.
int Dial(const Endpoint& to) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(to.host.c_str(), std::to_string(to.port).c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      ::close(fd), fd = -1;
      continue;
    }
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (::poll(&p, 1, 30000) != 1 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      ::close(fd), fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

class Proxy : public ModelProxy {
 public:
  Proxy(int listener, std::string path, std::vector<Endpoint> allowed)
      : listener_(listener), path_(std::move(path)), allowed_(std::move(allowed)) {
    accepter_ = std::thread([this] { Accept(); });
  }
  ~Proxy() override {
    stop_ = true;
    accepter_.join();
    std::unique_lock lock(mu_);
    done_.wait(lock, [this] { return open_ == 0; });
    ::close(listener_);
    ::unlink(path_.c_str());
  }
  std::vector<std::string> Refused() const override {
    std::lock_guard lock(mu_);
    return refused_;
  }

 private:
  void Accept() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 200) != 1) continue;
      int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      {
        std::lock_guard lock(mu_);
        if (open_ >= kMaxOpen) {
          ::close(fd);
          continue;
        }
        ++open_;
      }
      std::thread([this, fd] {
        Serve(fd);
        ::close(fd);
        std::lock_guard lock(mu_);
        --open_;
        done_.notify_all();
      }).detach();
    }
  }

  void Refuse(int fd, const std::string& why) {
    Answer(fd, 403, "Forbidden", why);
    std::lock_guard lock(mu_);
    if (refused_.size() < 100) refused_.push_back(why);
  }

  // The request head (to the blank line) and what came after it; false on a timeout, an
  // oversized head or a closed connection.
  bool ReadHead(int fd, std::string* head, std::string* extra) {
    std::string buf;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (buf.find("\r\n\r\n") == std::string::npos) {
      if (buf.size() > kMaxHead || stop_ || std::chrono::steady_clock::now() > deadline) return false;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 200) != 1) continue;
      char chunk[4096];
      ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return false;
      buf.append(chunk, static_cast<size_t>(n));
    }
    size_t end = buf.find("\r\n\r\n") + 4;
    *head = buf.substr(0, end);
    *extra = buf.substr(end);
    return true;
  }

  void Serve(int client) {
    std::string head, extra;
    if (!ReadHead(client, &head, &extra)) return;
    auto route = RouteRequest(head, allowed_);
    if (!route.ok()) return Refuse(client, route.error());
    int up = Dial(route->to);
    if (up < 0) return Answer(client, 502, "Bad Gateway", "cannot reach " + EndpointName(route->to));
    bool sent = route->tunnel ? SendAll(client, "HTTP/1.1 200 Connection established\r\n\r\n")
                              : SendAll(up, route->head);
    if (sent && SendAll(up, extra)) Splice(client, up);
    ::close(up);
  }

  // Bytes both ways until both sides are done, a side fails, fbkit stops, or 10 idle minutes.
  void Splice(int a, int b) {
    pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    bool open[2] = {true, true};
    auto idle_since = std::chrono::steady_clock::now();
    while ((open[0] || open[1]) && !stop_) {
      if (std::chrono::steady_clock::now() - idle_since > std::chrono::minutes(10)) return;
      for (int i = 0; i < 2; ++i) p[i].events = open[i] ? POLLIN : 0;
      if (::poll(p, 2, 200) <= 0) continue;
      for (int i = 0; i < 2; ++i) {
        if (!open[i] || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char chunk[65536];
        ssize_t n = ::recv(p[i].fd, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          open[i] = false;
          ::shutdown(p[1 - i].fd, SHUT_WR);
          continue;
        }
        if (!SendAll(p[1 - i].fd, std::string_view(chunk, static_cast<size_t>(n)))) return;
        idle_since = std::chrono::steady_clock::now();
      }
    }
  }

  static constexpr int kMaxOpen = 64;
  static constexpr size_t kMaxHead = 64 * 1024;
  int listener_;
  std::string path_;
  std::vector<Endpoint> allowed_;
  std::atomic<bool> stop_{false};
  std::thread accepter_;
  mutable std::mutex mu_;
  std::condition_variable done_;
  int open_ = 0;
  std::vector<std::string> refused_;
};

}  // namespace

util::Expected<Endpoint> EndpointOf(const std::string& url) {
  int port = url.starts_with("https://") ? 443 : url.starts_with("http://") ? 80 : 0;
  if (port == 0) return util::Error{"'" + url + "' is no http:// or https:// URL"};
  std::string rest = url.substr(url.find("//") + 2);
  return Authority(rest.substr(0, rest.find_first_of("/?#")), port);
}

util::Expected<Endpoint> ParseEndpoint(const std::string& text) {
  auto e = Authority(text, 0);
  if (!e.ok()) return e;
  if (e->port == 0) return util::Error{"'" + text + "' names no port (HOST:PORT)"};
  return e;
}

std::string EndpointName(const Endpoint& e) {
  bool v6 = e.host.find(':') != std::string::npos;
  return (v6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.port);
}

util::Expected<ProxyRoute> RouteRequest(const std::string& head,
                                        const std::vector<Endpoint>& allowed) {
  size_t eol = head.find("\r\n");
  std::string line = head.substr(0, eol);
  size_t s1 = line.find(' '), s2 = line.rfind(' ');
  if (s1 == std::string::npos || s2 == s1 || !line.substr(s2 + 1).starts_with("HTTP/1.")) {
    return util::Error{"not an HTTP/1 request"};
  }
  std::string method = line.substr(0, s1), target = line.substr(s1 + 1, s2 - s1 - 1);
  ProxyRoute route;
  if (method == "CONNECT") {
    auto to = ParseEndpoint(target);
    if (!to.ok()) return util::Error{"CONNECT " + util::Printable(target) + ": " + to.error()};
    route.to = *to;
    route.tunnel = true;
  } else if (target.starts_with("http://")) {
    auto to = EndpointOf(target);
    if (!to.ok()) return util::Error{method + " " + util::Printable(target) + ": " + to.error()};
    route.to = *to;
    std::string rest = target.substr(7);
    size_t path = rest.find('/');
    std::string origin = path == std::string::npos ? "/" : rest.substr(path);
    route.head = method + " " + origin + line.substr(s2) + "\r\n";
    for (size_t b = eol + 2; b < head.size();) {
      size_t e = head.find("\r\n", b);
      std::string field = head.substr(b, e - b);
      b = e + 2;
      if (field.empty()) break;
      std::string name = util::AsciiLower(field.substr(0, field.find(':')));
      if (name == "connection" || name == "proxy-connection" || name == "keep-alive" ||
          name == "proxy-authorization") {
        continue;
      }
      route.head += field + "\r\n";
    }
    route.head += "Connection: close\r\n\r\n";
  } else {
    return util::Error{method + " " + util::Printable(target) +
                       ": only CONNECT and plain-HTTP requests in absolute form are forwarded"};
  }
  if (std::find(allowed.begin(), allowed.end(), route.to) == allowed.end()) {
    return util::Error{(route.tunnel ? "CONNECT " : method + " ") + EndpointName(route.to) +
                       ": not an allowed endpoint"};
  }
  return route;
}

util::Expected<std::string> SocketDir() {
  char tmpl[] = "/tmp/fbkit-proxy-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return util::Error{std::string("cannot make a directory in /tmp: ") + std::strerror(errno)};
  if (::chmod(tmpl, 0711) != 0) {
    util::Error e{std::string(tmpl) + ": cannot set its mode: " + std::strerror(errno)};
    ::rmdir(tmpl);
    return e;
  }
  return std::string(tmpl);
}

util::Expected<std::unique_ptr<ModelProxy>> ModelProxy::Start(const std::string& socket_path,
                                                               std::vector<Endpoint> allowed) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) {
    return util::Error{socket_path + ": too long a path for a unix socket"};
  }
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return util::Error{std::string("socket: ") + std::strerror(errno)};
  ::unlink(socket_path.c_str());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0 ||
      ::chmod(socket_path.c_str(), 0666) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return util::Error{socket_path + ": cannot listen: " + why};
  }
  return std::unique_ptr<ModelProxy>(new Proxy(fd, socket_path, std::move(allowed)));
}

std::string ForwarderCommand(const std::string& python, int port, const std::string& socket) {
  static const char* kProgram =
      "import os, socket, sys, threading\n"
      "srv = socket.socket()\n"
      "srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
      "srv.bind(('127.0.0.1', int(sys.argv[1])))\n"
      "srv.listen(64)\n"
      "if os.fork():\n"
      "    os._exit(0)\n"
      "os.setsid()\n"
      "def pump(a, b):\n"
      "    try:\n"
      "        while True:\n"
      "            d = a.recv(65536)\n"
      "            if not d:\n"
      "                break\n"
      "            b.sendall(d)\n"
      "    except OSError:\n"
      "        pass\n"
      "    try:\n"
      "        b.shutdown(socket.SHUT_WR)\n"
      "    except OSError:\n"
      "        pass\n"
      "def serve(c):\n"
      "    u = socket.socket(socket.AF_UNIX)\n"
      "    try:\n"
      "        u.connect(sys.argv[2])\n"
      "    except OSError:\n"
      "        c.close()\n"
      "        return\n"
      "    t = threading.Thread(target=pump, args=(u, c), daemon=True)\n"
      "    t.start()\n"
      "    pump(c, u)\n"
      "    t.join()\n"
      "    c.close()\n"
      "    u.close()\n"
      "while True:\n"
      "    c, _ = srv.accept()\n"
      "    threading.Thread(target=serve, args=(c,), daemon=True).start()\n";
  return util::ShellQuote(python) + " -I -S -c " + util::ShellQuote(kProgram) + " " +
         std::to_string(port) + " " + util::ShellQuote(socket) + " </dev/null >/dev/null 2>&1";
}

}  // namespace fbkit::sandbox

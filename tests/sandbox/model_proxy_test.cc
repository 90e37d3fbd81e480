#include "sandbox/model_proxy.h"

#include <gtest/gtest.h>

namespace fbkit::sandbox {
namespace {

TEST(ModelProxy, EndpointsOfUrlsAndNames) {
  EXPECT_EQ(*EndpointOf("https://API.openai.com/v1"), (Endpoint{"api.openai.com", 443}));
  EXPECT_EQ(*EndpointOf("http://127.0.0.1:8080"), (Endpoint{"127.0.0.1", 8080}));
  EXPECT_EQ(*EndpointOf("http://[::1]:9/x"), (Endpoint{"::1", 9}));
  EXPECT_EQ(EndpointName(Endpoint{"::1", 9}), "[::1]:9");
  EXPECT_FALSE(EndpointOf("ftp://h/").ok());
  EXPECT_FALSE(EndpointOf("https://user@h/").ok());
  EXPECT_FALSE(ParseEndpoint("h").ok()) << "no port";
  EXPECT_FALSE(ParseEndpoint("h:99999").ok());
}

TEST(ModelProxy, OnlyTheAllowedEndpointsAreRouted) {
  std::vector<Endpoint> allowed = {{"api.openai.com", 443}, {"127.0.0.1", 8080}};
  auto tunnel = RouteRequest("CONNECT api.openai.com:443 HTTP/1.1\r\nHost: x\r\n\r\n", allowed);
  ASSERT_TRUE(tunnel.ok()) << tunnel.error();
  EXPECT_TRUE(tunnel->tunnel);
  auto other = RouteRequest("CONNECT github.com:443 HTTP/1.1\r\n\r\n", allowed);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error(), "CONNECT github.com:443: not an allowed endpoint");
  EXPECT_FALSE(RouteRequest("CONNECT api.openai.com:22 HTTP/1.1\r\n\r\n", allowed).ok());
  // Plain HTTP in absolute form goes out in origin form, on a connection of its own.
  auto plain = RouteRequest(
      "POST http://127.0.0.1:8080/v1/chat?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
      "Proxy-Connection: keep-alive\r\nContent-Length: 2\r\n\r\n", allowed);
  ASSERT_TRUE(plain.ok()) << plain.error();
  EXPECT_FALSE(plain->tunnel);
  EXPECT_EQ(plain->head, "POST /v1/chat?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
                         "Content-Length: 2\r\nConnection: close\r\n\r\n");
  // A Host header naming another server does not reroute: the target decides.
  auto host = RouteRequest("GET http://evil.example/ HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n", allowed);
  EXPECT_FALSE(host.ok());
  EXPECT_FALSE(RouteRequest("GET /relative HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n", allowed).ok());
  EXPECT_FALSE(RouteRequest("GET https://api.openai.com/ HTTP/1.1\r\n\r\n", allowed).ok());
  EXPECT_FALSE(RouteRequest("garbage\r\n\r\n", allowed).ok());
}

}  // namespace
}  // namespace fbkit::sandbox

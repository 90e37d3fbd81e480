// SHA-256 and MD5 of byte strings, as lowercase hex (OpenSSL's implementations). MD5 only
// where a format asks for it (FeatureBench's instance ids), never for integrity.
#pragma once

#include <string>
#include <string_view>

namespace fbkit::util {

std::string Sha256Hex(std::string_view data);
std::string Md5Hex(std::string_view data);
// HMAC-SHA256 of `data` under `key`, as lowercase hex.
std::string HmacSha256Hex(std::string_view key, std::string_view data);

}  // namespace fbkit::util

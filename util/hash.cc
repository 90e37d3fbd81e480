#include "util/hash.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <stdexcept>

namespace fbkit::util {

namespace {

std::string DigestHex(std::string_view data, const EVP_MD* md, const char* name) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &len, md, nullptr) != 1) {
    throw std::runtime_error(std::string("OpenSSL EVP_Digest(") + name + ") failed");
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out(2 * len, '0');
  for (unsigned int i = 0; i < len; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 15];
  }
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view data) { return DigestHex(data, EVP_sha256(), "sha256"); }

std::string Md5Hex(std::string_view data) { return DigestHex(data, EVP_md5(), "md5"); }

std::string HmacSha256Hex(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len) == nullptr) {
    throw std::runtime_error("OpenSSL HMAC(sha256) failed");
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[mac[i] >> 4];
    out += kHex[mac[i] & 15];
  }
  return out;
}

}  // namespace fbkit::util

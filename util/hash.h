// SHA-256 of byte strings, as lowercase hex (OpenSSL's implementation, SHA-NI where present).
#pragma once

#include <string>
#include <string_view>

namespace fbkit::util {

std::string Sha256Hex(std::string_view data);

}  // namespace fbkit::util

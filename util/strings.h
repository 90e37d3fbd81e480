// Small string helpers shared by the modules' messages.
#pragma once

#include <cstddef>
#include <string>

namespace fbkit::util {

// The last `n` bytes of `text`, prefixed with "..." when something was cut (for the end of
// a command's output in an error message).
std::string Tail(const std::string& text, size_t n);

}  // namespace fbkit::util

// UTF-8 validation: fbkit reads source bytes as they are and reports invalid sequences.
#pragma once

#include <cstddef>
#include <string_view>

namespace fbkit::util {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if the bytes there are invalid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t Utf8SequenceLength(std::string_view s, size_t i);

// Offset of the first invalid byte, or npos if all of s is valid UTF-8.
size_t FindInvalidUtf8(std::string_view s);

}  // namespace fbkit::util

#include "util/strings.h"

namespace fbkit::util {

std::string Tail(const std::string& text, size_t n) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

}  // namespace fbkit::util

// A small streaming JSON writer that appends compact JSON to a string. It is fast (no
// intermediate document) and deterministic: keys are written in the order the caller gives,
// so callers write them sorted. Strings are escaped; invalid UTF-8 becomes U+FFFD.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fbkit::util {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);
  void String(std::string_view value);
  void Int(int64_t value);
  void Bool(bool value);
  void Null();
  // An array of the strings in `values` (any range of string-like elements), in its order.
  template <typename Strings>
  void StringArray(const Strings& values) {
    BeginArray();
    for (const auto& v : values) String(v);
    EndArray();
  }
  // Inserts already-serialised JSON as one value.
  void Raw(std::string_view json);

 private:
  void Separate();
  std::string* out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// Appends the JSON string literal for value (with quotes) to out.
void AppendJsonString(std::string_view value, std::string* out);

}  // namespace fbkit::util

#include "util/json_writer.h"

#include "util/utf8.h"

namespace fbkit::util {

void AppendJsonString(std::string_view value, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < value.size()) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c >= 0x80) {
      size_t len = Utf8SequenceLength(value, i);
      if (len == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD for an invalid byte
        ++i;
      } else {
        out->append(value.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out->push_back('"');
}

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_->push_back(',');
    first_.back() = false;
  }
}

void JsonWriter::BeginObject() {
  Separate();
  out_->push_back('{');
  first_.push_back(true);
}

void JsonWriter::EndObject() {
  out_->push_back('}');
  first_.pop_back();
}

void JsonWriter::BeginArray() {
  Separate();
  out_->push_back('[');
  first_.push_back(true);
}

void JsonWriter::EndArray() {
  out_->push_back(']');
  first_.pop_back();
}

void JsonWriter::Key(std::string_view key) {
  Separate();
  AppendJsonString(key, out_);
  out_->push_back(':');
  after_key_ = true;
}

void JsonWriter::String(std::string_view value) {
  Separate();
  AppendJsonString(value, out_);
}

void JsonWriter::Int(int64_t value) {
  Separate();
  out_->append(std::to_string(value));
}

void JsonWriter::Bool(bool value) {
  Separate();
  out_->append(value ? "true" : "false");
}

void JsonWriter::Null() {
  Separate();
  out_->append("null");
}

void JsonWriter::Raw(std::string_view json) {
  Separate();
  out_->append(json);
}

}  // namespace fbkit::util

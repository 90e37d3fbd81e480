// Recoverable errors as values: Expected<T> holds a T or an Error message, Status holds
// nothing or an Error. A stage whose callers act on *why* it failed gives its own error type,
// Expected<T, E> (extract/make's Refusal: the rule that refused, with its evidence), rather
// than a message beside out-parameters. A failure goes up unchanged with `failure()`:
// `if (!x.ok()) return x.failure();`. Exceptions are reserved for fatal conditions caught in
// main().
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace fbkit::util {

struct Error {
  std::string message;
};

template <typename T, typename E = Error>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Expected(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  // The failure, to inspect or to return as it is.
  const E& failure() const { return std::get<1>(v_); }
  // The message of an Error.
  const std::string& error() const
    requires std::is_same_v<E, Error>
  {
    return std::get<1>(v_).message;
  }

 private:
  std::variant<T, E> v_;
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error.message)), ok_(false) {}  // NOLINT
  static Status Ok() { return Status(); }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string& error() const { return error_; }
  // The failure, to return as it is.
  Error failure() const { return Error{error_}; }

 private:
  std::string error_;
  bool ok_ = true;
};

}  // namespace fbkit::util

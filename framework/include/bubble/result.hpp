#pragma once

#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

#include <bubble/errc.hpp>

namespace bubble {

// Result<T> is the outcome of an operation that yields a value or fails in an expected way, such
// as Channel::receive: it holds either a T or a non-zero std::error_code, never both and never
// neither.
//
// It converts implicitly from a T, from a std::error_code, and from any error code enum (a type E
// with std::is_error_code_enum<E>: bubble::errc, std::io_errc, std::future_errc, or an enum of
// your own with its std::error_category), so a function returning Result<T> can `return value;`,
// `return errc::closed;` or `return client_errc::circuit_open;`. An enum value becomes an error
// code through make_error_code(e), found by argument-dependent lookup, as std::error_code does it.
// Constructing it from an empty (zero) error code throws std::invalid_argument: an error result
// must name its error.
//
// Thread safety: like any value type; distinct objects may be used from distinct threads.
template <class T>
class Result {
  static_assert(!std::is_reference_v<T>, "bubble::Result<T>: T must not be a reference");
  static_assert(!std::is_same_v<std::decay_t<T>, std::error_code>,
                "bubble::Result<T>: T must not be std::error_code");
  static_assert(!std::is_error_code_enum_v<T>,
                "bubble::Result<T>: T must not be an error code enum (it would read as an error)");

 public:
  using value_type = T;

  // A result holding a value.
  Result(const T& value) : v_(std::in_place_index<0>, value) {}        // NOLINT: implicit by design
  Result(T&& value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  // A result holding the error `ec`, which must be non-zero (throws std::invalid_argument).
  Result(std::error_code ec) : v_(std::in_place_index<1>, ec) {  // NOLINT
    if (!ec)
      throw std::invalid_argument("bubble::Result: constructed from an empty std::error_code");
  }
  // A result holding the error make_error_code(e), for any error code enum E (bubble::errc or the
  // caller's own); a value that makes an empty error code throws std::invalid_argument.
  template <class E>
  requires std::is_error_code_enum_v<E> Result(E e)
      : Result(std::error_code(e)) {}  // NOLINT: implicit by design

  // True when the result holds a value.
  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  // The value. Throws std::logic_error naming the error when the result holds an error.
  T& value() & {
    check();
    return *std::get_if<0>(&v_);
  }
  const T& value() const& {
    check();
    return *std::get_if<0>(&v_);
  }
  T&& value() && {
    check();
    return std::move(*std::get_if<0>(&v_));
  }

  // The value, or `fallback` when the result holds an error.
  template <class U>
  T value_or(U&& fallback) const& {
    return has_value() ? *std::get_if<0>(&v_) : static_cast<T>(std::forward<U>(fallback));
  }

  // Like value(): checked, throws std::logic_error when the result holds an error.
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The error; an empty std::error_code when the result holds a value.
  std::error_code error() const noexcept {
    const std::error_code* ec = std::get_if<1>(&v_);
    return ec != nullptr ? *ec : std::error_code{};
  }

 private:
  void check() const {
    if (const std::error_code* ec = std::get_if<1>(&v_)) {
      throw std::logic_error("bubble::Result::value: the result holds no value but the error \"" +
                             ec->message() + "\" (" + ec->category().name() + ":" +
                             std::to_string(ec->value()) + ")");
    }
  }

  std::variant<T, std::error_code> v_;
};

}  // namespace bubble

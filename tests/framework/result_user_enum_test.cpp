// Tests of bubble::Result<T> with error code enums other than bubble::errc: an application's own
// enum with its own std::error_category, and the standard library's std::io_errc.

#include <bubble/result.hpp>

#include <gtest/gtest.h>

#include <future>
#include <ios>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>

namespace client {

// An application's error enum, registered the standard way.
enum class client_errc {
  circuit_open = 1,
  retries_exhausted,
};

const std::error_category& client_category() noexcept {
  struct Category final : std::error_category {
    const char* name() const noexcept override { return "client"; }
    std::string message(int v) const override {
      switch (static_cast<client_errc>(v)) {
        case client_errc::circuit_open:
          return "the circuit breaker is open";
        case client_errc::retries_exhausted:
          return "every retry failed";
      }
      return "unknown client error";
    }
  };
  static const Category category;
  return category;
}

std::error_code make_error_code(client_errc e) noexcept {
  return {static_cast<int>(e), client_category()};
}

// An unscoped enum, which converts to int: as an argument of Result<int> it must still be an error.
enum legacy_errc { legacy_ok = 0, legacy_busy = 7 };

std::error_code make_error_code(legacy_errc e) noexcept {
  return {static_cast<int>(e), client_category()};
}

}  // namespace client

template <>
struct std::is_error_code_enum<client::client_errc> : std::true_type {};
template <>
struct std::is_error_code_enum<client::legacy_errc> : std::true_type {};

namespace {

using bubble::Result;
using client::client_errc;

// The shape a user writes: both returns convert implicitly.
Result<int> call(bool open) {
  if (open) return client_errc::circuit_open;
  return 42;
}

TEST(ResultUserEnum, AFunctionReturnsTheUsersEnumDirectly) {
  const Result<int> failed = call(true);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error(), client_errc::circuit_open);
  EXPECT_EQ(&failed.error().category(), &client::client_category());
  EXPECT_EQ(failed.error().value(), 1);
  EXPECT_EQ(call(false).value(), 42);
}

TEST(ResultUserEnum, ValueOfAUserErrorNamesItsCategoryAndMessage) {
  const Result<std::string> r = client_errc::retries_exhausted;
  try {
    (void)r.value();
    FAIL() << "value() of an error result did not throw";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("every retry failed"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("client:2"), std::string::npos) << e.what();
  }
}

TEST(ResultUserEnum, AnUnscopedEnumIsAnErrorNotAValue) {
  // legacy_busy converts to int, but Result<int> takes it as the error it names.
  const Result<int> r = client::legacy_busy;
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().value(), 7);
  EXPECT_EQ(&r.error().category(), &client::client_category());
}

TEST(ResultUserEnum, AZeroEnumValueIsRejectedLikeAnEmptyErrorCode) {
  EXPECT_THROW((void)Result<int>(client::legacy_ok), std::invalid_argument);
}

TEST(ResultUserEnum, StandardErrorCodeEnumsWork) {
  const Result<int> io = std::io_errc::stream;
  EXPECT_EQ(io.error(), std::io_errc::stream);
  EXPECT_EQ(&io.error().category(), &std::iostream_category());
  const Result<int> fut = std::future_errc::broken_promise;
  EXPECT_EQ(fut.error(), std::future_errc::broken_promise);
}

// What is accepted, at compile time: error code enums, error codes and values; not error
// condition enums (std::errc names conditions, not codes) and not unrelated enums.
enum class plain { a = 1 };
static_assert(std::is_convertible_v<client_errc, Result<int>>);
static_assert(std::is_convertible_v<bubble::errc, Result<int>>);
static_assert(std::is_convertible_v<std::error_code, Result<int>>);
static_assert(!std::is_convertible_v<std::errc, Result<int>>);
static_assert(!std::is_convertible_v<plain, Result<int>>);

}  // namespace

// Tests of bubble::Result<T>.

#include <bubble/result.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace {

using bubble::errc;
using bubble::Result;

TEST(Result, HoldsAValue) {
  Result<std::string> r = std::string("hi");
  EXPECT_TRUE(r.has_value());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(r.value(), "hi");
  EXPECT_EQ(*r, "hi");
  EXPECT_EQ(r->size(), 2u);
  EXPECT_FALSE(r.error());
  EXPECT_EQ(r.value_or("x"), "hi");
}

TEST(Result, HoldsAnErrorFromErrcOrErrorCode) {
  const Result<int> a = errc::closed;
  const Result<int> b = std::error_code(errc::empty);
  EXPECT_FALSE(a.has_value());
  EXPECT_FALSE(static_cast<bool>(a));
  EXPECT_EQ(a.error(), errc::closed);
  EXPECT_EQ(b.error(), errc::empty);
  EXPECT_EQ(a.value_or(7), 7);
}

TEST(Result, ValueOfAnErrorThrowsLogicErrorNamingTheError) {
  const Result<int> r = errc::closed;
  try {
    (void)r.value();
    FAIL() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(),
                 "bubble::Result::value: the result holds no value but the error \"closed\" "
                 "(bubble:3)");
  }
  EXPECT_THROW((void)*r, std::logic_error);
}

TEST(Result, AnEmptyErrorCodeIsRejected) {
  EXPECT_THROW(Result<int>(std::error_code{}), std::invalid_argument);
}

TEST(Result, MovesMoveOnlyValuesOut) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(3);
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 3);
}

}  // namespace

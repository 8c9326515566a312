// Tests of how time values read in GoogleTest failures: bubble::PrintTo for TimePoint (found by
// argument-dependent lookup), Duration through the standard operator<<, and kStart.

#include <bubble/bubble.hpp>
#include <bubble/time.hpp>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace {

using namespace std::chrono_literals;
using bubble::Duration;
using bubble::kStart;
using bubble::TimePoint;

TEST(TimePrinters, KStartIsTheDefaultStartOfABubble) {
  EXPECT_EQ(kStart.time_since_epoch(), bubble::kDefaultStart.time_since_epoch());
  TimePoint at_start{};
  TimePoint after_sleep{};
  bubble::run([&](bubble::Runtime& rt) {
    at_start = rt.now();
    rt.sleep_for(1500ms);
    after_sleep = rt.now();
  });
  EXPECT_EQ(at_start, kStart);
  EXPECT_EQ(after_sleep, kStart + 1500ms);
}

TEST(TimePrinters, TimePointsPrintRelativeToTheStart) {
  EXPECT_EQ(testing::PrintToString(kStart + 1500ms), "+1.5s since start");
  EXPECT_EQ(testing::PrintToString(kStart), "+0s since start");
  EXPECT_EQ(testing::PrintToString(kStart - 2s), "-2s since start");
  EXPECT_EQ(testing::PrintToString(bubble::kNoDeadline), "no deadline");
  // A steady-clock time point (counted from boot) is not passed off as a bubble time.
  EXPECT_EQ(testing::PrintToString(TimePoint{90s}), "1m30s since the clock's origin");
}

// Durations print through the standard library's operator<< for std::chrono::duration: exact,
// in nanoseconds (there is no bubble printer for them; see time.hpp).
TEST(TimePrinters, DurationsPrintAsNanoseconds) {
  EXPECT_EQ(testing::PrintToString(Duration{150ms}), "150000000ns");
  EXPECT_EQ(testing::PrintToString(Duration{-3s}), "-3000000000ns");
}

// The point of the printers: what a failed comparison says.
TEST(TimePrinters, AFailedDurationComparisonPrintsBothDurations) {
  EXPECT_NONFATAL_FAILURE(EXPECT_EQ(Duration{150ms}, Duration{1500ms}), "Which is: 150000000ns");
  EXPECT_NONFATAL_FAILURE(EXPECT_EQ(Duration{150ms}, Duration{1500ms}), "Which is: 1500000000ns");
}

TEST(TimePrinters, AFailedTimePointComparisonReadsAsTimeSinceStart) {
  const TimePoint now = kStart + 2s;
  EXPECT_NONFATAL_FAILURE(EXPECT_EQ(now, kStart + 1500ms), "Which is: +2s since start");
  EXPECT_NONFATAL_FAILURE(EXPECT_EQ(now, kStart + 1500ms), "Which is: +1.5s since start");
  EXPECT_NONFATAL_FAILURE(EXPECT_LT(now, kStart), "actual: +2s since start vs +0s since start");
}

}  // namespace

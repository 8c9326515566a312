// The time vocabulary of time.hpp: formatting of wall times and durations, and Clock::now()
// following the calling thread's runtime.
#include <bubble/bubble.hpp>
#include <bubble/time.hpp>

#include <gtest/gtest.h>

#include <chrono>

namespace bubble {
namespace {

using namespace std::chrono_literals;

TEST(FormatWallTime, PrintsRfc3339InUtc) {
  EXPECT_EQ(format_wall_time(kDefaultStart), "2000-01-01T00:00:00Z");
  EXPECT_EQ(format_wall_time(kDefaultStart + 3s), "2000-01-01T00:00:03Z");
  EXPECT_EQ(format_wall_time(kDefaultStart + 24h * 366 + 1h + 2min + 3s),
            "2001-01-01T01:02:03Z");  // 2000 is a leap year
  EXPECT_EQ(format_wall_time(WallTime{}), "1970-01-01T00:00:00Z");
}

TEST(FormatWallTime, PrintsOnlyTheFractionalDigitsNeeded) {
  EXPECT_EQ(format_wall_time(kDefaultStart + 3s + 250ms), "2000-01-01T00:00:03.25Z");
  EXPECT_EQ(format_wall_time(kDefaultStart + 1ns), "2000-01-01T00:00:00.000000001Z");
  EXPECT_EQ(format_wall_time(kDefaultStart + 1us), "2000-01-01T00:00:00.000001Z");
}

TEST(FormatDuration, PicksAUnitPeopleRead) {
  EXPECT_EQ(format_duration(0s), "0s");
  EXPECT_EQ(format_duration(7ns), "7ns");
  EXPECT_EQ(format_duration(250us), "250us");
  EXPECT_EQ(format_duration(20ms), "20ms");
  EXPECT_EQ(format_duration(1500ms), "1.5s");
  EXPECT_EQ(format_duration(-3s), "-3s");
  EXPECT_EQ(format_duration(1h + 2min + 3s), "1h2m3s");
  EXPECT_EQ(format_duration(2min), "2m0s");
}

TEST(FormatDuration, PrintsTheExtremesWithoutOverflow) {
  EXPECT_EQ(format_duration(Duration::min()).front(), '-');
  EXPECT_NE(format_duration(Duration::max()).find('h'), std::string::npos);
}

TEST(Clock, FollowsTheCallingThreadsRuntime) {
  const TimePoint before = system_runtime().now();
  const TimePoint outside = Clock::now();
  EXPECT_GE(outside, before);  // the system runtime's steady clock, outside a bubble
  run({}, [](Runtime& rt) {
    EXPECT_EQ(Clock::now(), rt.now());
    EXPECT_EQ(Clock::now(), bubble::kStart);
    rt.sleep_for(1s);
    EXPECT_EQ(Clock::now(), bubble::kStart + 1s);
  });
}

TEST(SleepFor, SaturatesInsteadOfOverflowing) {
  // A sleep past the end of time never returns: in a bubble that is a deadlock, reported.
  EXPECT_THROW(run({}, [](Runtime& rt) { rt.sleep_for(Duration::max()); }), DeadlockError);
}

}  // namespace
}  // namespace bubble

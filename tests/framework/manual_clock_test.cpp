// Tests of bubble::ManualClock: exact, single-threaded.

#include <bubble/manual_clock.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::ManualClock;
using bubble::TimePoint;

TEST(ManualClock, StartsAtTheGivenTimeAndMovesOnlyWhenAdvancedOrSet) {
  ManualClock fresh;
  EXPECT_EQ(fresh.now(), TimePoint{});
  const TimePoint start = TimePoint{} + 42s;
  ManualClock clock(start);
  EXPECT_EQ(clock.now(), start);
  EXPECT_EQ(clock.advance(3s), 0u);
  EXPECT_EQ(clock.now(), start + 3s);
  EXPECT_EQ(clock.set(start + 10s), 0u);
  EXPECT_EQ(clock.now(), start + 10s);
}

TEST(ManualClock, AdvanceFiresDueTimersInDeadlineOrderEachSeeingItsDeadline) {
  ManualClock clock;
  const TimePoint t0 = clock.now();
  std::vector<std::pair<int, TimePoint>> fired;
  clock.schedule_after(3s, [&] { fired.emplace_back(3, clock.now()); });
  clock.schedule_after(1s, [&] { fired.emplace_back(1, clock.now()); });
  clock.schedule_after(2s, [&] { fired.emplace_back(2, clock.now()); });
  clock.schedule_after(9s, [&] { fired.emplace_back(9, clock.now()); });
  EXPECT_EQ(clock.advance(5s), 3u);
  ASSERT_EQ(fired.size(), 3u);
  EXPECT_EQ(fired[0], std::make_pair(1, t0 + 1s));
  EXPECT_EQ(fired[1], std::make_pair(2, t0 + 2s));
  EXPECT_EQ(fired[2], std::make_pair(3, t0 + 3s));
  EXPECT_EQ(clock.now(), t0 + 5s);
  EXPECT_EQ(clock.pending(), 1u);
}

TEST(ManualClock, TimersWithTheSameDeadlineFireInCreationOrder) {
  ManualClock clock;
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) clock.schedule_after(1s, [&order, i] { order.push_back(i); });
  EXPECT_EQ(clock.advance(1s), 5u);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(ManualClock, ATimerExactlyAtTheEndOfTheWindowFires) {
  ManualClock clock;
  bool fired = false;
  clock.schedule_after(2s, [&] { fired = true; });
  EXPECT_EQ(clock.advance(2s - 1ns), 0u);
  EXPECT_FALSE(fired);
  EXPECT_EQ(clock.advance(1ns), 1u);
  EXPECT_TRUE(fired);
}

TEST(ManualClock, TimersScheduledByCallbacksInsideTheWindowFireToo) {
  ManualClock clock;
  const TimePoint t0 = clock.now();
  std::vector<TimePoint> seen;
  clock.schedule_after(1s, [&] {
    seen.push_back(clock.now());
    clock.schedule_after(1s, [&] { seen.push_back(clock.now()); });   // t0 + 2s: inside.
    clock.schedule_after(10s, [&] { seen.push_back(clock.now()); });  // t0 + 11s: outside.
  });
  EXPECT_EQ(clock.advance(3s), 2u);
  EXPECT_EQ(seen, (std::vector<TimePoint>{t0 + 1s, t0 + 2s}));
  EXPECT_EQ(clock.pending(), 1u);
  EXPECT_EQ(clock.next_deadline(), t0 + 11s);
}

TEST(ManualClock, ATimerInThePastIsDueAtOnceAtNow) {
  ManualClock clock(TimePoint{} + 10s);
  TimePoint seen{};
  clock.schedule_at(TimePoint{} + 1s, [&] { seen = clock.now(); });
  EXPECT_EQ(clock.next_deadline(), TimePoint{} + 10s);
  EXPECT_EQ(clock.advance(0s), 1u);
  EXPECT_EQ(seen, TimePoint{} + 10s);
  clock.schedule_after(-5s, [] {});
  EXPECT_EQ(clock.next_deadline(), TimePoint{} + 10s);
}

TEST(ManualClock, CancelRemovesAPendingTimerOnly) {
  ManualClock clock;
  bool fired = false;
  const bubble::TimerId id = clock.schedule_after(1s, [&] { fired = true; });
  const bubble::TimerId other = clock.schedule_after(1s, [] {});
  EXPECT_NE(id, other);
  EXPECT_TRUE(clock.cancel(id));
  EXPECT_FALSE(clock.cancel(id));
  EXPECT_FALSE(clock.cancel(12345));
  EXPECT_EQ(clock.advance(1s), 1u);
  EXPECT_FALSE(fired);
  EXPECT_FALSE(clock.cancel(other));  // Already fired.
}

TEST(ManualClock, NextDeadlineAndPendingDescribeTheTimers) {
  ManualClock clock;
  EXPECT_FALSE(clock.next_deadline().has_value());
  EXPECT_EQ(clock.pending(), 0u);
  clock.schedule_after(5s, [] {});
  clock.schedule_after(2s, [] {});
  EXPECT_EQ(clock.next_deadline(), TimePoint{} + 2s);
  EXPECT_EQ(clock.pending(), 2u);
}

TEST(ManualClock, SetFiresTimersUpToTheNewTime) {
  ManualClock clock;
  int fired = 0;
  clock.schedule_after(1s, [&] { ++fired; });
  clock.schedule_after(4s, [&] { ++fired; });
  EXPECT_EQ(clock.set(TimePoint{} + 2s), 1u);
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(clock.set(TimePoint{} + 2s), 0u);  // Same time: allowed.
}

TEST(ManualClock, SetRefusesToGoBackwardsNamingBothTimes) {
  ManualClock clock(TimePoint{} + 5s);
  try {
    clock.set(TimePoint{} + 3s);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bubble::ManualClock::set"), std::string::npos) << what;
    EXPECT_NE(what.find("TimePoint{3s}"), std::string::npos) << what;
    EXPECT_NE(what.find("TimePoint{5s}"), std::string::npos) << what;
  }
  EXPECT_EQ(clock.now(), TimePoint{} + 5s);
}

TEST(ManualClock, NegativeAdvanceThrowsNamingTheValue) {
  ManualClock clock;
  try {
    clock.advance(-3ms);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "bubble::ManualClock::advance: d must be >= 0, got -3ms");
  }
}

TEST(ManualClock, EmptyCallbackThrows) {
  ManualClock clock;
  EXPECT_THROW(clock.schedule_after(1s, nullptr), std::invalid_argument);
}

TEST(ManualClock, AdvanceFromACallbackThrowsLogicError) {
  ManualClock clock;
  bool threw = false;
  clock.schedule_after(1s, [&] {
    try {
      clock.advance(1s);
    } catch (const std::logic_error&) {
      threw = true;
    }
  });
  clock.advance(1s);
  EXPECT_TRUE(threw);
}

TEST(ManualClock, AnExceptionFromACallbackLeavesTheClockAtItsDeadlineAndLaterTimersPending) {
  ManualClock clock;
  clock.schedule_after(1s, [] { throw std::runtime_error("boom"); });
  bool later = false;
  clock.schedule_after(2s, [&] { later = true; });
  EXPECT_THROW(clock.advance(5s), std::runtime_error);
  EXPECT_EQ(clock.now(), TimePoint{} + 1s);
  EXPECT_FALSE(later);
  EXPECT_EQ(clock.pending(), 1u);
  EXPECT_EQ(clock.advance(4s), 1u);
  EXPECT_TRUE(later);
}

TEST(ManualClock, HugeAdvanceSaturatesAtTheEndOfTime) {
  ManualClock clock(TimePoint{} + 1s);
  clock.advance(bubble::Duration::max());
  EXPECT_EQ(clock.now(), bubble::kNoDeadline);
}

}  // namespace

// Guide: a first fake-clock test (docs/GUIDE-FIRST-TEST.md). The body runs in a bubble: the
// timer fires after exactly two virtual seconds, and no real time passes.
#include <bubble/testing.hpp>
#include <bubble/timer.hpp>

#include <gtest/gtest.h>

using namespace std::chrono_literals;

BUBBLE_TEST(FirstTest, ATimerFiresAfterExactlyItsDuration) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  bubble::Timer timer(2s, rt);
  const auto fired = timer.channel().receive();  // blocks until the timer fires
  ASSERT_TRUE(fired.has_value());
  EXPECT_EQ(*fired - start, 2s);    // the time the timer fired at, exactly
  EXPECT_EQ(rt.now() - start, 2s);  // and the clock did not move further
}

// BUBBLE_STD_TEST: a BUBBLE_TEST whose runs intercept the standard library.

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/interpose.hpp>
#include <bubble/testing.hpp>

#include "components/timer_service.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::steady_clock;

BUBBLE_STD_TEST(InterposeStdTest, SleepForAnHourReturnsAtOnceAndSteadyClockMovesByExactlyAnHour) {
  ASSERT_TRUE(bubble::interpose::active());  // Else the sleep below would be a real one.
  const auto t0 = steady_clock::now();
  const bubble::TimePoint v0 = bubble::current_runtime().now();
  std::thread sleeper([] { std::this_thread::sleep_for(1h); });
  sleeper.join();
  EXPECT_EQ(steady_clock::now() - t0, 1h);
  EXPECT_EQ(bubble::current_runtime().now() - v0, 1h);
}

// The example of docs/unmodified-code.md.
BUBBLE_STD_TEST(InterposeStdTest, RateLimiterLetsOneCallerThroughEveryHundredMilliseconds) {
  ASSERT_TRUE(bubble::interpose::active());    // Else the limiter would sleep for real.
  components::IntervalLimiter limiter(100ms);  // steady_clock + sleep_for inside
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> callers;
  for (int i = 0; i < 3; ++i) callers.emplace_back([&] { limiter.acquire(); });
  for (auto& t : callers) t.join();
  EXPECT_EQ(std::chrono::steady_clock::now() - t0, 200ms);  // exact, and no real time passes
}

BUBBLE_TEST(InterposeStdTest, APlainBubbleTestDoesNotIntercept) {
  EXPECT_FALSE(bubble::interpose::active());
}

// Every explored schedule of a std test intercepts: the environment's strategy and schedule count
// apply as for BUBBLE_TEST.
TEST(InterposeStdTest, RunTestWithInterceptStdExploresEveryScheduleIntercepted) {
  int intercepted_runs = 0;
  bubble::Options options;
  options.intercept_std = true;
  const auto env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "BUBBLE_SCHEDULES") return "20";
    return std::nullopt;
  };
  const auto outcome = bubble::testing::run_test(
      [&](bubble::Runtime&) {
        if (bubble::interpose::active()) ++intercepted_runs;
        std::mutex m;
        std::thread t([&] { std::lock_guard lock(m); });
        { std::lock_guard lock(m); }
        t.join();
      },
      options, env);
  EXPECT_FALSE(outcome.failed);
  EXPECT_EQ(outcome.runs, 20u);
  EXPECT_EQ(intercepted_runs, 20);
}

}  // namespace

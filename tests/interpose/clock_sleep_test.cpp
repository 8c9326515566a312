// Clocks, sleeps and yields in an intercepting bubble read and wait on virtual time.

#include <sched.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/interpose.hpp>

#include "intercepted_run.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::steady_clock;
using std::chrono::system_clock;

// The virtual steady clock starts at bubble::kStart, so steady_clock reads it as the same count.
steady_clock::time_point steady_start() {
  return steady_clock::time_point{bubble::kStart.time_since_epoch()};
}

TEST(InterposeClock, SleepForAnHourReturnsWithSteadyClockMovedByExactlyAnHour) {
  steady_clock::time_point before;
  steady_clock::time_point after;
  const auto result = run_std([&] {
    before = steady_clock::now();
    std::this_thread::sleep_for(1h);
    after = steady_clock::now();
  });
  EXPECT_EQ(before, steady_start());
  EXPECT_EQ(after - before, 1h);
  EXPECT_EQ(result.elapsed, 1h);
}

TEST(InterposeClock, SystemClockIsTheBubblesWallView) {
  system_clock::time_point at_start;
  system_clock::time_point later;
  std::time_t seconds = 0;
  timeval tv{};
  run_std([&] {
    at_start = system_clock::now();
    std::this_thread::sleep_for(90s + 250ms);
    later = system_clock::now();
    seconds = std::time(nullptr);
    gettimeofday(&tv, nullptr);
  });
  EXPECT_EQ(at_start, system_clock::time_point{bubble::kDefaultStart.time_since_epoch()});
  EXPECT_EQ(later - at_start, 90s + 250ms);
  EXPECT_EQ(seconds, 946'684'800 + 90);
  EXPECT_EQ(tv.tv_sec, 946'684'800 + 90);
  EXPECT_EQ(tv.tv_usec, 250'000);
}

TEST(InterposeClock, HighResolutionClockAndEveryMonotonicClockReadVirtualTime) {
  run_std([] {
    std::this_thread::sleep_for(5ms);
    const auto want = bubble::kStart.time_since_epoch() + 5ms;
    EXPECT_EQ(std::chrono::high_resolution_clock::now().time_since_epoch(), want);
    for (clockid_t c : {CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_COARSE,
                        CLOCK_BOOTTIME, CLOCK_REALTIME, CLOCK_REALTIME_COARSE}) {
      timespec ts{};
      ASSERT_EQ(clock_gettime(c, &ts), 0) << "clock " << c;
      EXPECT_EQ(ts.tv_sec, 946'684'800) << "clock " << c;
      EXPECT_EQ(ts.tv_nsec, 5'000'000) << "clock " << c;
    }
  });
}

TEST(InterposeClock, EveryCSleepIsAVirtualSleep) {
  run_std([] {
    const auto t0 = steady_clock::now();
    const timespec ten_ms{0, 10'000'000};
    ASSERT_EQ(nanosleep(&ten_ms, nullptr), 0);
    EXPECT_EQ(steady_clock::now() - t0, 10ms);
    ASSERT_EQ(usleep(1500), 0);
    EXPECT_EQ(steady_clock::now() - t0, 11500us);
    ASSERT_EQ(sleep(2), 0u);
    EXPECT_EQ(steady_clock::now() - t0, 2011500us);
    ASSERT_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &ten_ms, nullptr), 0);
    EXPECT_EQ(steady_clock::now() - t0, 2021500us);
    // Absolute: until 3 s after the start of the run, on the steady and on the wall clock.
    timespec abs{946'684'800 + 3, 0};
    ASSERT_EQ(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, nullptr), 0);
    EXPECT_EQ(steady_clock::now() - t0, 3s);
    abs.tv_sec += 1;
    ASSERT_EQ(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &abs, nullptr), 0);
    EXPECT_EQ(steady_clock::now() - t0, 4s);
  });
}

TEST(InterposeClock, SleepUntilAndBadArgumentsBehaveAsPosixSays) {
  run_std([] {
    const auto t0 = steady_clock::now();
    std::this_thread::sleep_until(t0 + 42ms);
    EXPECT_EQ(steady_clock::now() - t0, 42ms);
    const timespec bad{0, 1'000'000'000};
    errno = 0;
    EXPECT_EQ(nanosleep(&bad, nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, nullptr), EINVAL);
    EXPECT_EQ(clock_nanosleep(CLOCK_PROCESS_CPUTIME_ID, 0, &bad, nullptr), ENOTSUP);
    EXPECT_EQ(steady_clock::now() - t0, 42ms);
  });
}

TEST(InterposeClock, YieldLetsTheOtherThreadRunWithoutMovingTime) {
  std::vector<int> order;
  std::mutex order_lock;  // Two threads append.
  auto record = [&](int step) {
    std::lock_guard lock(order_lock);
    order.push_back(step);
  };
  const auto result = run_std([&] {
    std::thread other([&] { record(2); });
    record(1);
    std::this_thread::yield();  // fifo: the other thread runs here
    record(3);
    other.join();
  });
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(result.elapsed, 0s);
}

TEST(InterposeClock, ABubbleWithoutInterceptStdIsLeftAlone) {
  bool active = true;
  steady_clock::time_point before;
  steady_clock::time_point after;
  bubble::run([&](bubble::Runtime& rt) {
    active = bubble::interpose::active();
    before = steady_clock::now();
    rt.sleep_for(1h);  // virtual: the real steady clock does not see it
    after = steady_clock::now();
  });
  EXPECT_FALSE(active);
  EXPECT_LT(after - before, 1h);
  EXPECT_FALSE(bubble::interpose::active());
}

TEST(InterposeClock, TimerCallbacksReadVirtualTimeButAreNotIntercepted) {
  steady_clock::time_point seen{};
  bool active_in_callback = true;
  bool active_in_thread = false;
  run_std([&] {
    bubble::Runtime& rt = bubble::current_runtime();
    active_in_thread = bubble::interpose::active();
    rt.schedule_at(rt.now() + 7ms, [&] {
      seen = steady_clock::now();
      active_in_callback = bubble::interpose::active();
    });
    std::this_thread::sleep_for(10ms);
  });
  EXPECT_TRUE(active_in_thread);
  EXPECT_FALSE(active_in_callback);
  EXPECT_EQ(seen, steady_start() + 7ms);
}

}  // namespace

// RateLimiter, TicketBooth and ConcurrencyLimiter on the system runtime (real threads; run under
// ThreadSanitizer in CI). Assertions are on counts, ordering and lower bounds of time only.
#include <bubble/context.hpp>
#include <bubble/limiter/concurrency_limiter.hpp>
#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/limiter/ticket_booth.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <vector>

namespace bubble {
namespace {

using namespace std::chrono_literals;

PoolOptions pool_options(int workers, std::ptrdiff_t queue_capacity) {
  PoolOptions options;
  options.workers = workers;
  options.queue_capacity = queue_capacity;
  return options;
}

// Eight threads race try_submit on a bucket of 5 that does not refill during the test: exactly
// five are admitted, and exactly those five jobs run.
TEST(RateLimiterSystem, ConcurrentTrySubmitsAdmitExactlyN) {
  Runtime& rt = system_runtime();
  Pool pool(pool_options(2, 1000), rt);
  std::atomic<int> admitted{0}, limited{0}, ran{0};
  {
    RateLimiter limiter(pool, 5, 1h);
    std::vector<Thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back(
          "submitter",
          [&] {
            for (int i = 0; i < 10; ++i) {
              const std::error_code ec = limiter.try_submit([&] { ran.fetch_add(1); });
              if (!ec) admitted.fetch_add(1);
              if (ec == errc::rate_limited) limited.fetch_add(1);
            }
          },
          rt);
    }
    for (auto& t : threads) t.join();
  }
  ASSERT_FALSE(pool.shutdown());
  EXPECT_EQ(admitted.load(), 5);
  EXPECT_EQ(limited.load(), 75);
  EXPECT_EQ(ran.load(), 5);
}

// stop() makes every submit return limiter_stopped, whether it was already waiting for a token or
// arrives later; none of their jobs runs.
TEST(RateLimiterSystem, StopReleasesEveryWaitingSubmit) {
  Runtime& rt = system_runtime();
  Pool pool(pool_options(1, 100), rt);
  std::atomic<int> stopped{0}, ran{0};
  RateLimiter limiter(pool, 1, 1h);
  ASSERT_FALSE(limiter.try_submit([] {}));
  std::vector<Thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back(
        "submitter",
        [&] {
          if (limiter.submit(Context::background(), [&] { ran.fetch_add(1); }) ==
              errc::limiter_stopped) {
            stopped.fetch_add(1);
          }
        },
        rt);
  }
  limiter.stop();
  for (auto& t : threads) t.join();
  EXPECT_EQ(stopped.load(), 4);
  ASSERT_FALSE(pool.shutdown());
  EXPECT_EQ(ran.load(), 0);
}

// Six blocking submits through 2 tokens per 20 ms need at least two refills.
TEST(RateLimiterSystem, SubmitsWaitForRealRefills) {
  Runtime& rt = system_runtime();
  Pool pool(pool_options(1, 100), rt);
  const TimePoint start = rt.now();  // before the refill grid starts (at construction)
  RateLimiter limiter(pool, 2, 20ms);
  for (int i = 0; i < 6; ++i) ASSERT_FALSE(limiter.submit(Context::background(), [] {}));
  EXPECT_GE(rt.now() - start, 40ms);
  limiter.stop();
  ASSERT_FALSE(pool.shutdown());
}

// Two takers share a booth of one ticket per 10 ms: six tickets take at least 50 ms.
TEST(TicketBoothSystem, TicketsComeAtLeastAnIntervalApart) {
  Runtime& rt = system_runtime();
  TicketBooth booth(50ms, 5, rt);
  const TimePoint start = rt.now();
  std::vector<Thread> takers;
  for (int t = 0; t < 2; ++t) {
    takers.emplace_back(
        "taker",
        [&] {
          for (int i = 0; i < 3; ++i) EXPECT_FALSE(booth.take(Context::background()));
        },
        rt);
  }
  for (auto& t : takers) t.join();
  EXPECT_GE(rt.now() - start, 50ms);
  EXPECT_EQ(booth.taken(), 6u);
  booth.stop();
  EXPECT_EQ(booth.take(Context::background()), errc::limiter_stopped);
}

// Eight threads hammer a limiter of 3: never more than 3 inside at once.
TEST(ConcurrencyLimiterSystem, NeverMoreThanKInFlight) {
  Runtime& rt = system_runtime();
  ConcurrencyLimiter limiter(3, rt);
  std::atomic<int> inside{0}, max_inside{0}, runs{0};
  std::vector<Thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back(
        "worker",
        [&] {
          for (int i = 0; i < 200; ++i) {
            EXPECT_FALSE(limiter.run(Context::background(), [&] {
              const int now = inside.fetch_add(1) + 1;
              int seen = max_inside.load();
              while (now > seen && !max_inside.compare_exchange_weak(seen, now)) {
              }
              runs.fetch_add(1);
              inside.fetch_sub(1);
            }));
          }
        },
        rt);
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(max_inside.load(), 3);
  EXPECT_GE(max_inside.load(), 1);
  EXPECT_EQ(runs.load(), 1600);
  EXPECT_EQ(limiter.in_flight(), 0);
}

}  // namespace
}  // namespace bubble

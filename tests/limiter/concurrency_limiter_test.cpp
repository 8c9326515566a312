// ConcurrencyLimiter in bubbles, and its composition with a rate limiter: a rate limit for the
// contract plus a concurrency limit for safety.
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/limiter/concurrency_limiter.hpp>
#include <bubble/limiter/token_bucket.hpp>
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace bubble {
namespace {

using namespace std::chrono_literals;

BUBBLE_TEST(ConcurrencyLimiter, AtMostKInFlight) {
  Runtime& rt = current_runtime();
  ConcurrencyLimiter limiter(3, rt);
  const TimePoint start = rt.now();
  int in_flight = 0, max_in_flight = 0;
  std::vector<Thread> workers;
  for (int i = 0; i < 10; ++i) {
    workers.emplace_back(
        "worker",
        [&] {
          ASSERT_FALSE(limiter.run(Context::background(), [&] {
            max_in_flight = std::max(max_in_flight, ++in_flight);
            EXPECT_LE(limiter.in_flight(), 3);
            rt.sleep_for(100ms);
            --in_flight;
          }));
        },
        rt);
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(max_in_flight, 3);
  EXPECT_EQ(rt.now() - start, 400ms);  // ceil(10 / 3) waves of 100 ms
  EXPECT_EQ(limiter.in_flight(), 0);
}

// A heavy waiter at the head is not overtaken by lighter requests that would fit.
BUBBLE_TEST(ConcurrencyLimiter, WeightedRequestsAreServedInOrder) {
  Runtime& rt = current_runtime();
  ConcurrencyLimiter limiter(4, rt);
  ASSERT_FALSE(limiter.acquire(Context::background(), 3));
  std::vector<std::string> order;
  Thread heavy(
      "heavy",
      [&] {
        ASSERT_FALSE(limiter.acquire(Context::background(), 2));
        order.push_back("heavy");
      },
      rt);
  bubble::wait();
  EXPECT_FALSE(limiter.try_acquire(1));  // one unit is free, but the heavy waiter is first
  Thread light(
      "light",
      [&] {
        ASSERT_FALSE(limiter.acquire(Context::background(), 1));
        order.push_back("light");
      },
      rt);
  bubble::wait();
  EXPECT_TRUE(order.empty());  // light did not take the free unit past heavy
  limiter.release(3);          // now both fit: heavy (2) from the head, then light (1)
  heavy.join();
  light.join();
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order, (std::vector<std::string>{"heavy", "light"}));
  EXPECT_EQ(limiter.in_flight(), 3);
  limiter.release(3);
}

BUBBLE_TEST(ConcurrencyLimiter, AcquireGivesUpWhenTheContextEnds) {
  Runtime& rt = current_runtime();
  ConcurrencyLimiter limiter(1, rt);
  ASSERT_TRUE(limiter.try_acquire());
  const TimePoint start = rt.now();
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 250ms, rt);
  bool ran = false;
  EXPECT_EQ(limiter.run(ctx, [&] { ran = true; }), errc::deadline_exceeded);
  EXPECT_EQ(rt.now() - start, 250ms);
  EXPECT_FALSE(ran);
  EXPECT_EQ(limiter.in_flight(), 1);
  limiter.release();
  cancel();
}

BUBBLE_TEST(ConcurrencyLimiter, RunReleasesWhenTheWorkThrows) {
  Runtime& rt = current_runtime();
  ConcurrencyLimiter limiter(2, rt);
  EXPECT_THROW((void)limiter.run(Context::background(), [] { throw std::runtime_error("boom"); }),
               std::runtime_error);
  EXPECT_EQ(limiter.in_flight(), 0);
}

BUBBLE_TEST(ConcurrencyLimiter, BadArgumentsThrowNamingTheValue) {
  Runtime& rt = current_runtime();
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_EQ(message([&] { ConcurrencyLimiter l(0, rt); }),
            "bubble::ConcurrencyLimiter: limit must be >= 1, got 0");
  ConcurrencyLimiter limiter(2, rt);
  EXPECT_EQ(message([&] { (void)limiter.try_acquire(3); }),
            "bubble::ConcurrencyLimiter: weight must be in [1, 2], got 3");
  EXPECT_EQ(message([&] { (void)limiter.acquire(Context::background(), 0); }),
            "bubble::ConcurrencyLimiter: weight must be in [1, 2], got 0");
  EXPECT_EQ(message([&] { limiter.release(0); }),
            "bubble::ConcurrencyLimiter: weight must be >= 1, got 0");
  EXPECT_THROW(limiter.release(1), std::logic_error);  // nothing is in flight
  EXPECT_EQ(limiter.in_flight(), 0);
}

// --- Both limits together: a rate limit for the contract, a concurrency limit for safety.
// The classic Go example waits for a token (lim.Wait), then starts the
// call in an errgroup limited to 5 (g.SetLimit(5): g.Go blocks while 5 run). Same here, with a
// TokenBucket and a ConcurrencyLimiter; `concurrency` may be null to show the rate limit alone.

struct CallLog {
  std::vector<Duration> starts;  // when each call started, from the beginning
  int max_in_flight = 0;
  Duration finished{};  // when the last call ended
};

CallLog call_all(Runtime& rt, TokenBucket& rate, ConcurrencyLimiter* concurrency, int calls,
                 Duration latency) {
  CallLog log;
  const TimePoint start = rt.now();
  int in_flight = 0;
  std::vector<Thread> running;
  for (int i = 0; i < calls; ++i) {
    EXPECT_FALSE(rate.wait(Context::background()));  // the contract: the downstream's quota
    if (concurrency != nullptr) {
      EXPECT_FALSE(concurrency->acquire(Context::background()));  // safety: at most k at once
    }
    log.starts.push_back(rt.now() - start);
    log.max_in_flight = std::max(log.max_in_flight, ++in_flight);
    running.emplace_back(
        "call",
        [&rt, &in_flight, concurrency, latency] {
          rt.sleep_for(latency);  // the downstream call
          --in_flight;
          if (concurrency != nullptr) concurrency->release();
        },
        rt);
  }
  for (auto& t : running) t.join();
  log.finished = rt.now() - start;
  return log;
}

// A healthy downstream (50 ms per call): the rate limit binds, the concurrency limit never does.
BUBBLE_TEST(RateAndConcurrency, HealthyDownstreamIsPacedByTheRate) {
  Runtime& rt = current_runtime();
  TokenBucket rate(10, 2, rt);  // 10 calls per second, bursts of 2
  ConcurrencyLimiter concurrency(5, rt);
  const CallLog log = call_all(rt, rate, &concurrency, 10, 50ms);
  EXPECT_EQ(log.starts, (std::vector<Duration>{0ms, 0ms, 100ms, 200ms, 300ms, 400ms, 500ms, 600ms,
                                               700ms, 800ms}));
  EXPECT_EQ(log.max_in_flight, 2);  // the initial burst
  EXPECT_EQ(log.finished, 850ms);
}

// The downstream slows to 10 s per call. The rate limit alone keeps sending 10 per second, so all
// ten calls pile up on the struggling service; the concurrency limit caps them at 5 (Little's
// law: in flight = rate x time per call) and the rest wait their turn.
BUBBLE_TEST(RateAndConcurrency, SlowDownstreamIsProtectedByTheConcurrencyLimit) {
  Runtime& rt = current_runtime();
  TokenBucket rate_only(10, 2, rt);
  const CallLog unprotected = call_all(rt, rate_only, nullptr, 10, 10s);
  EXPECT_EQ(unprotected.max_in_flight, 10);

  TokenBucket rate(10, 2, rt);
  ConcurrencyLimiter concurrency(5, rt);
  const CallLog protected_log = call_all(rt, rate, &concurrency, 10, 10s);
  EXPECT_EQ(protected_log.max_in_flight, 5);
  // The first five start within the rate (0, 0, 100, 200, 300 ms); the next five only as
  // earlier calls end, 10 s later.
  EXPECT_EQ(std::vector<Duration>(protected_log.starts.begin(), protected_log.starts.begin() + 5),
            (std::vector<Duration>{0ms, 0ms, 100ms, 200ms, 300ms}));
  for (int i = 5; i < 10; ++i) EXPECT_GE(protected_log.starts[i], 10s) << "call " << i;
  EXPECT_EQ(concurrency.in_flight(), 0);
}

}  // namespace
}  // namespace bubble

// RateLimiter in bubbles: every sentence of its contract, exact in virtual time.
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/notification.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
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

// Sleeps until `t`, then lets every other thread (the refill thread) settle.
void settle_at(Runtime& rt, TimePoint t) {
  rt.sleep_until(t);
  bubble::wait();
}

BUBBLE_TEST(RateLimiter, StartsFullAndRefillsToNAtEachIntervalBoundary) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(1, 100), rt);
  const TimePoint start = rt.now();
  RateLimiter limiter(pool, 3, 1s);
  EXPECT_EQ(limiter.available(), 3);
  for (int k = 0; k < 4; ++k) {
    const TimePoint boundary = start + k * 1s;
    settle_at(rt, boundary);
    EXPECT_EQ(limiter.available(), 3) << "at " << k << " s";
    // Spend all three at the boundary; the fourth is refused until the next boundary.
    for (int i = 0; i < 3; ++i) EXPECT_FALSE(limiter.try_submit([] {})) << k << "/" << i;
    EXPECT_EQ(limiter.try_submit([] {}), errc::rate_limited);
    settle_at(rt, boundary + 999ms);
    EXPECT_EQ(limiter.available(), 0) << "no refill within an interval";
    EXPECT_EQ(limiter.try_submit([] {}), errc::rate_limited);
  }
}

// A submit that runs at a boundary instant before the refill thread does (here: its sleep's timer
// was created first, so under fifo it fires first) sees the top-up itself. Without that, it would
// spend the previous interval's token, the refill thread would then top the bucket up again, and
// two jobs would be admitted in the interval [2 * interval, 3 * interval) of a limiter of n = 1.
BUBBLE_TEST(RateLimiter, SubmitAtABoundaryInstantNeverAdmitsMoreThanNInThatInterval) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(1, 100), rt);
  const TimePoint start = rt.now();
  RateLimiter limiter(pool, 1, 29ms);
  rt.sleep_until(start + 58ms);
  ASSERT_FALSE(limiter.submit(Context::background(), [] {}));
  EXPECT_EQ(rt.now() - start, 58ms);
  ASSERT_FALSE(limiter.submit(Context::background(), [] {}));
  EXPECT_EQ(rt.now() - start, 87ms) << "the second job of [58ms, 87ms) must wait for 87ms";
}

// The refill is a top-up to n, in steps: a bucket with tokens left does not grow past n.
BUBBLE_TEST(RateLimiter, RefillTopsUpToNNotBeyond) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(1, 100), rt);
  const TimePoint start = rt.now();
  RateLimiter limiter(pool, 3, 1s);
  EXPECT_FALSE(limiter.try_submit([] {}));
  settle_at(rt, start + 1s);
  EXPECT_EQ(limiter.available(), 3);
  settle_at(rt, start + 5s);
  EXPECT_EQ(limiter.available(), 3);
}

// Submitting five jobs through a limiter of 2 per second: two at once, two at 1 s, one at 2 s.
BUBBLE_TEST(RateLimiter, SubmitWaitsForTheNextRefill) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(2, 100), rt);
  const TimePoint start = rt.now();
  RateLimiter limiter(pool, 2, 1s);
  std::vector<Duration> accepted;
  for (int i = 0; i < 5; ++i) {
    ASSERT_FALSE(limiter.submit(Context::background(), [] {}));
    accepted.push_back(rt.now() - start);
  }
  EXPECT_EQ(accepted, (std::vector<Duration>{0s, 0s, 1s, 1s, 2s}));
}

// Tokens are spent at submission, not when a worker starts the job: jobs backed up in the queue
// start back to back, above the rate.
BUBBLE_TEST(RateLimiter, TokensAreSpentAtSubmissionNotAtStart) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(1, 100), rt);
  const TimePoint start = rt.now();
  RateLimiter limiter(pool, 2, 1s);
  std::vector<Duration> started;
  auto job = [&](const Context&) {
    started.push_back(rt.now() - start);
    rt.sleep_for(1500ms);  // slower than the rate: the queue backs up
  };
  for (int i = 0; i < 4; ++i) ASSERT_FALSE(limiter.submit(Context::background(), job));
  EXPECT_EQ(rt.now() - start, 1s);  // all four admitted by 1 s
  rt.sleep_for(10s);
  EXPECT_EQ(started, (std::vector<Duration>{0ms, 1500ms, 3000ms, 4500ms}));
}

// Pool rejection, errc::full from try_submit: the token goes back to the bucket.
BUBBLE_TEST(RateLimiter, TokenReturnedWhenThePoolIsFull) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(1, 1), rt);
  RateLimiter limiter(pool, 5, 1s);
  Notification release(rt);
  ASSERT_FALSE(limiter.try_submit([&](const Context&) { release.wait(); }));
  bubble::wait();                           // the worker has taken the first job
  ASSERT_FALSE(limiter.try_submit([] {}));  // fills the queue
  EXPECT_EQ(limiter.available(), 3);
  bool ran = false;
  EXPECT_EQ(limiter.try_submit([&] { ran = true; }), errc::full);
  EXPECT_EQ(limiter.available(), 3);  // refunded
  release.notify();
  bubble::wait();
  EXPECT_FALSE(ran);  // a rejected job never runs
}

// Pool rejection, errc::closed from either submit: the token goes back to the bucket.
BUBBLE_TEST(RateLimiter, TokenReturnedWhenThePoolIsClosed) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(1, 10), rt);
  RateLimiter limiter(pool, 2, 1s);
  ASSERT_FALSE(limiter.try_submit([] {}));
  ASSERT_FALSE(pool.shutdown());
  EXPECT_EQ(limiter.available(), 1);
  EXPECT_EQ(limiter.submit(Context::background(), [] {}), errc::closed);
  EXPECT_EQ(limiter.available(), 1);
  EXPECT_EQ(limiter.try_submit([] {}), errc::closed);
  EXPECT_EQ(limiter.available(), 1);
}

// A refund never fills the bucket beyond n: the refill came between the take and the refund.
BUBBLE_TEST(RateLimiter, RefundNeverExceedsN) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(1, 1), rt);
  const TimePoint start = rt.now();
  RateLimiter limiter(pool, 2, 1s);
  Notification release(rt);
  ASSERT_FALSE(limiter.try_submit([&](const Context&) { release.wait(); }));
  bubble::wait();
  ASSERT_FALSE(limiter.try_submit([] {}));  // queue full now; bucket empty
  // A submit that waits for room in the pool holds a spent token across the refill at 1 s,
  // then is refused when the pool shuts down: its refund must not make 3 tokens.
  std::error_code result;
  Thread submitter(
      "submitter",
      [&] {
        rt.sleep_until(start + 500ms);
        EXPECT_EQ(limiter.available(), 0);
        settle_at(rt, start + 1s);  // refill to 2
        result = limiter.submit(Context::background(), [] {});
      },
      rt);
  settle_at(rt, start + 1s + 1ms);
  EXPECT_EQ(limiter.available(), 1);  // the submitter holds one, waiting for room
  Thread closer(
      "closer", [&] { (void)pool.shutdown(); }, rt);
  rt.sleep_for(1ms);
  release.notify();
  submitter.join();
  closer.join();
  EXPECT_EQ(result, errc::closed);
  EXPECT_EQ(limiter.available(), 2);
}

// A submit waiting for a token is woken by stop() and returns limiter_stopped; so does every
// later call; stop() is idempotent.
BUBBLE_TEST(RateLimiter, WaitingSubmitWokenByStop) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(1, 10), rt);
  const TimePoint start = rt.now();
  RateLimiter limiter(pool, 1, 1s);
  ASSERT_FALSE(limiter.try_submit([] {}));
  std::error_code waiting;
  Duration returned_at{};
  bool ran = false;
  Thread submitter(
      "submitter",
      [&] {
        waiting = limiter.submit(Context::background(), [&] { ran = true; });
        returned_at = rt.now() - start;
      },
      rt);
  rt.sleep_for(300ms);
  limiter.stop();
  submitter.join();
  EXPECT_EQ(waiting, errc::limiter_stopped);
  EXPECT_EQ(returned_at, 300ms);
  EXPECT_TRUE(limiter.stopped());
  limiter.stop();             // idempotent
  settle_at(rt, start + 5s);  // no refill thread any more: still no tokens, still stopped
  EXPECT_EQ(limiter.available(), 0);
  EXPECT_EQ(limiter.submit(Context::background(), [] {}), errc::limiter_stopped);
  EXPECT_EQ(limiter.try_submit([] {}), errc::limiter_stopped);
  bubble::wait();
  EXPECT_FALSE(ran);
}

// Stopped with tokens left: both calls still refuse.
BUBBLE_TEST(RateLimiter, StoppedLimiterRefusesEvenWithTokens) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(1, 10), rt);
  RateLimiter limiter(pool, 3, 1s);
  limiter.stop();
  EXPECT_EQ(limiter.available(), 3);
  EXPECT_EQ(limiter.try_submit([] {}), errc::limiter_stopped);
  EXPECT_EQ(limiter.submit(Context::background(), [] {}), errc::limiter_stopped);
}

// A submit whose context ends while it waits for a token returns ctx.err() and spends nothing.
BUBBLE_TEST(RateLimiter, SubmitContextEndsWhileWaitingForAToken) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(1, 10), rt);
  const TimePoint start = rt.now();
  RateLimiter limiter(pool, 1, 1s);
  ASSERT_FALSE(limiter.try_submit([] {}));
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 400ms, rt);
  EXPECT_EQ(limiter.submit(ctx, [] {}), errc::deadline_exceeded);
  EXPECT_EQ(rt.now() - start, 400ms);
  EXPECT_EQ(limiter.submit(ctx, [] {}), errc::deadline_exceeded);  // already done: at once
  EXPECT_EQ(rt.now() - start, 400ms);
  settle_at(rt, start + 1s);
  EXPECT_EQ(limiter.available(), 1);
  cancel();
}

// When the pool refuses a job, its refunded token wakes one waiting submit. If that waiter's
// context ends at the same moment, the token must go on to the next waiter rather than be lost.
// Property (fifo and 40 random schedules): b, which waits with no deadline, gets the refunded
// token at once (the pool then refuses b's job too: it is shutting down), with no refill.
TEST(RateLimiter, RefundedTokenIsNotLostWhenItsWaiterGivesUp) {
  std::vector<Strategy> strategies{Strategy::fifo()};
  for (std::uint64_t seed = 1; seed <= 40; ++seed) strategies.push_back(Strategy::random(seed));
  for (const Strategy& strategy : strategies) {
    SCOPED_TRACE(strategy.to_string());
    Options options;
    options.strategy = strategy;
    run(options, [](Runtime& rt) {
      Pool pool(pool_options(1, 1), rt);
      const TimePoint start = rt.now();
      RateLimiter limiter(pool, 3, 1000h);  // no refill during the test
      Notification release(rt);
      ASSERT_FALSE(limiter.try_submit([&](const Context&) { release.wait(); }));
      bubble::wait();                           // the worker runs the first job
      ASSERT_FALSE(limiter.try_submit([] {}));  // the queue is full; one token left
      std::error_code r_result, a_result, b_result;
      // r takes the last token and waits for room in the pool.
      Thread r(
          "r", [&] { r_result = limiter.submit(Context::background(), [] {}); }, rt);
      bubble::wait();
      auto [a_ctx, cancel_a] = Context::with_cancel(Context::background());
      Thread a(
          "a", [&, ctx = a_ctx] { a_result = limiter.submit(ctx, [] {}); }, rt);
      Thread b(
          "b", [&] { b_result = limiter.submit(Context::background(), [] {}); }, rt);
      bubble::wait();  // a and b wait for a token
      // The pool shuts down, refusing r's job: r's token is refunded and wakes a (the longest
      // waiter). c cancels a's context as soon as the token is back, before a can take it.
      Thread c(
          "c",
          [&, cancel = cancel_a] {
            while (limiter.available() == 0) rt.yield();
            cancel();
          },
          rt);
      Thread d(
          "d", [&] { (void)pool.shutdown(); }, rt);
      r.join();
      a.join();
      b.join();
      EXPECT_EQ(r_result, errc::closed);
      EXPECT_TRUE(a_result == errc::canceled || a_result == errc::closed) << a_result.message();
      EXPECT_EQ(b_result, errc::closed);
      EXPECT_EQ((rt.now() - start).count(), 0);  // no refill was needed
      EXPECT_EQ(limiter.available(), 1);
      release.notify();
      c.join();
      d.join();
    });
  }
}

// The job runs with a context derived from the submitter's: cancelling it after the job is queued
// cancels the job too.
BUBBLE_TEST(RateLimiter, JobRunsWithTheSubmittersContext) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(1, 10), rt);
  RateLimiter limiter(pool, 5, 1s);
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::error_code job_saw;
  ASSERT_FALSE(limiter.submit(ctx, [&](const Context& job_ctx) {
    job_ctx.wait();
    job_saw = job_ctx.err();
  }));
  rt.sleep_for(100ms);
  cancel();
  bubble::wait();
  EXPECT_EQ(job_saw, errc::canceled);
}

// Property (checked under fifo and under 20 random schedules): in every interval
// [start + k * interval, start + (k + 1) * interval) the limiter admits at most n jobs, and with
// submitters always waiting it admits exactly n.
TEST(RateLimiter, NeverMoreThanNPerInterval) {
  std::vector<Strategy> strategies{Strategy::fifo()};
  for (std::uint64_t seed = 1; seed <= 20; ++seed) strategies.push_back(Strategy::random(seed));
  for (const Strategy& strategy : strategies) {
    Options options;
    options.strategy = strategy;
    run(options, [](Runtime& rt) {
      Pool pool(pool_options(4, 64), rt);
      const TimePoint start = rt.now();
      RateLimiter limiter(pool, 3, 100ms);
      std::map<std::int64_t, int> per_interval;
      std::vector<Thread> submitters;
      for (int s = 0; s < 4; ++s) {
        submitters.emplace_back(
            "submitter",
            [&] {
              for (int i = 0; i < 6; ++i) {
                ASSERT_FALSE(limiter.submit(Context::background(), [] {}));
                ++per_interval[(rt.now() - start) / 100ms];
              }
            },
            rt);
      }
      for (auto& t : submitters) t.join();
      // 24 jobs at 3 per interval: intervals 0..7, exactly 3 each.
      EXPECT_EQ(per_interval.size(), 8u);
      for (const auto& [k, count] : per_interval) EXPECT_EQ(count, 3) << "interval " << k;
    });
  }
}

BUBBLE_TEST(RateLimiter, BadArgumentsThrowNamingTheValue) {
  Runtime& rt = current_runtime();
  Pool pool(pool_options(1, 10), rt);
  auto message = [&](int n, Duration interval) {
    try {
      RateLimiter limiter(pool, n, interval);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_EQ(message(0, 1s), "bubble::RateLimiter: n must be >= 1, got 0");
  EXPECT_EQ(message(-4, 1s), "bubble::RateLimiter: n must be >= 1, got -4");
  EXPECT_EQ(message(1, 0s), "bubble::RateLimiter: interval must be > 0, got 0s");
  EXPECT_EQ(message(1, -20ms), "bubble::RateLimiter: interval must be > 0, got -20ms");
}

}  // namespace
}  // namespace bubble

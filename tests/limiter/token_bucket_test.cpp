// TokenBucket in bubbles: the blocking behaviour of wait() (upstream's Wait* family, exact in
// virtual time), reservations on the runtime's clock, and many threads sharing one bucket.
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/limiter/token_bucket.hpp>
#include <bubble/testing.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

namespace bubble {
namespace {

using namespace std::chrono_literals;

constexpr Duration kPeriod = 100ms;

BUBBLE_TEST(TokenBucket, WaitSimple) {
  Runtime& rt = current_runtime();
  TokenBucket lim(10, 3, rt);
  const TimePoint start = rt.now();
  auto [cancelled, cancel] = Context::with_cancel(Context::background());
  cancel();
  EXPECT_EQ(lim.wait(cancelled, 1), errc::canceled);
  EXPECT_EQ(lim.wait(Context::background(), 4), errc::exceeds_burst);
  EXPECT_EQ(lim.tokens(), 3.0);  // neither took anything
  EXPECT_FALSE(lim.wait(Context::background(), 2));
  EXPECT_EQ(rt.now() - start, Duration::zero());  // act now
  EXPECT_FALSE(lim.wait(Context::background(), 3));
  EXPECT_EQ(rt.now() - start, 2 * kPeriod);  // act later: exactly two periods
}

BUBBLE_TEST(TokenBucket, WaitCancelGivesTheTokensBack) {
  Runtime& rt = current_runtime();
  TokenBucket lim(10, 3, rt);
  const TimePoint start = rt.now();
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  EXPECT_FALSE(lim.wait(ctx, 2));  // 1 token left
  auto canceller = rt.spawn("canceller", [&, cancel = cancel] {
    rt.sleep_for(kPeriod);
    cancel();
  });
  EXPECT_EQ(lim.wait(ctx, 3), errc::canceled);  // would have been due at 2d
  EXPECT_EQ(rt.now() - start, kPeriod);         // returned when the context ended
  EXPECT_EQ(lim.tokens(), 2.0);                 // all 3 tokens back: -2 + 1 (refill) + 3
  EXPECT_FALSE(lim.wait(Context::background(), 2));
  EXPECT_EQ(rt.now() - start, kPeriod);  // act now after the cancel
  canceller->join();
}

BUBBLE_TEST(TokenBucket, WaitTimeoutFailsAtOnceConsumingNothing) {
  Runtime& rt = current_runtime();
  TokenBucket lim(10, 3, rt);
  const TimePoint start = rt.now();
  auto [ctx, cancel] = Context::with_timeout(Context::background(), kPeriod, rt);
  EXPECT_FALSE(lim.wait(ctx, 2));
  EXPECT_EQ(lim.wait(ctx, 3), errc::would_exceed_deadline);
  EXPECT_EQ(rt.now(), start);      // at once
  EXPECT_EQ(lim.tokens(), 1.0);    // nothing consumed
  EXPECT_FALSE(lim.wait(ctx, 1));  // the last token is still there
  EXPECT_EQ(rt.now(), start);
  cancel();
}

BUBBLE_TEST(TokenBucket, WaitDueExactlyAtTheDeadlineSucceeds) {
  Runtime& rt = current_runtime();
  TokenBucket lim(10, 3, rt);
  const TimePoint start = rt.now();
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 2 * kPeriod, rt);
  ASSERT_TRUE(lim.allow(2));
  EXPECT_FALSE(lim.wait(ctx, 3));  // due at 2d, the deadline: the tokens win
  EXPECT_EQ(rt.now() - start, 2 * kPeriod);
  EXPECT_EQ(lim.tokens(), 0.0);
  cancel();
}

BUBBLE_TEST(TokenBucket, WaitInfiniteRateIgnoresTheBurst) {
  Runtime& rt = current_runtime();
  TokenBucket lim(kInfiniteRate, 0, rt);
  const TimePoint start = rt.now();
  EXPECT_FALSE(lim.wait(Context::background(), 3));
  EXPECT_EQ(rt.now(), start);
}

BUBBLE_TEST(TokenBucket, SetRateAfterZeroRate) {
  Runtime& rt = current_runtime();
  TokenBucket lim(0, 1, rt);
  EXPECT_TRUE(lim.allow());   // starts full
  EXPECT_FALSE(lim.allow());  // never refills
  rt.sleep_for(1h);
  EXPECT_FALSE(lim.allow());
  lim.set_rate(10);
  const TimePoint start = rt.now();
  EXPECT_FALSE(lim.wait(Context::background()));
  EXPECT_EQ(rt.now() - start, kPeriod);  // the next token in 100 ms
}

BUBBLE_TEST(TokenBucket, ZeroRateWaitEndsOnlyWithItsContext) {
  Runtime& rt = current_runtime();
  TokenBucket lim(0, 1, rt);
  ASSERT_TRUE(lim.allow());
  const TimePoint start = rt.now();
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  auto canceller = rt.spawn("canceller", [&, cancel = cancel] {
    rt.sleep_for(1000h);
    cancel();
  });
  EXPECT_EQ(lim.wait(ctx), errc::canceled);
  EXPECT_EQ(rt.now() - start, 1000h);
  canceller->join();
}

// Five threads wait for one token each on a bucket of rate 10, burst 1: they are served 100 ms
// apart, and each returns exactly when its token falls due.
BUBBLE_TEST(TokenBucket, WaitersAreSpacedExactlyOnePeriodApart) {
  Runtime& rt = current_runtime();
  TokenBucket lim(10, 1, rt);
  const TimePoint start = rt.now();
  std::vector<Duration> done(5);
  std::vector<std::unique_ptr<ThreadHandle>> threads;
  for (int i = 0; i < 5; ++i) {
    threads.push_back(rt.spawn("waiter", [&, i] {
      EXPECT_FALSE(lim.wait(Context::background()));
      done[i] = rt.now() - start;
    }));
  }
  for (auto& t : threads) t->join();
  // Whatever order the schedule lets them reserve in, one is served at each multiple of 100 ms.
  std::sort(done.begin(), done.end());
  EXPECT_EQ(done, (std::vector<Duration>{0ms, 100ms, 200ms, 300ms, 400ms}));
}

BUBBLE_TEST(TokenBucket, ReservationDelayCountsDownOnTheRuntimeClock) {
  Runtime& rt = current_runtime();
  TokenBucket lim(10, 2, rt);
  TokenBucket::Reservation first = lim.reserve(2);
  EXPECT_TRUE(first.ok());
  EXPECT_EQ(first.delay(), Duration::zero());
  TokenBucket::Reservation r = lim.reserve(2);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.tokens(), 2);
  EXPECT_EQ(r.delay(), 2 * kPeriod);
  rt.sleep_for(50ms);
  EXPECT_EQ(r.delay(), 150ms);
  rt.sleep_for(150ms);
  EXPECT_EQ(r.delay(), Duration::zero());
  TokenBucket::Reservation too_big = lim.reserve(3);
  EXPECT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.delay(), kInfiniteDuration);
}

BUBBLE_TEST(TokenBucket, ReservationCancelsOnlyOnce) {
  Runtime& rt = current_runtime();
  TokenBucket lim(10, 2, rt);
  ASSERT_TRUE(lim.allow(2));
  TokenBucket::Reservation r = lim.reserve(2);
  EXPECT_EQ(lim.tokens(), -2.0);
  r.cancel();
  EXPECT_EQ(lim.tokens(), 0.0);
  r.cancel();  // no effect: rate.go would give the tokens back again
  EXPECT_EQ(lim.tokens(), 0.0);
  TokenBucket::Reservation moved = std::move(r);
  moved.cancel();
  EXPECT_EQ(lim.tokens(), 0.0);
  EXPECT_FALSE(r.ok());  // NOLINT(bugprone-use-after-move): a moved-from reservation is empty
}

BUBBLE_TEST(TokenBucket, ExplicitTimeVariantsMatchTheCore) {
  Runtime& rt = current_runtime();
  TokenBucket lim(10, 3, rt);
  TokenBucketCore core(10, 3);
  const TimePoint t0 = rt.now();
  EXPECT_EQ(lim.allow_at(t0, 2), core.allow_at(t0, 2));
  const TokenBucket::Reservation r = lim.reserve_at(t0, 3);
  const TokenReservation c = core.reserve_at(t0, 3);
  EXPECT_EQ(r.ok(), c.ok);
  EXPECT_EQ(r.time_to_act(), c.time_to_act);
  lim.set_rate_at(t0 + kPeriod, 20);
  core.set_rate_at(t0 + kPeriod, 20);
  lim.set_burst_at(t0 + 2 * kPeriod, 5);
  core.set_burst_at(t0 + 2 * kPeriod, 5);
  EXPECT_EQ(lim.tokens_at(t0 + 9 * kPeriod), core.tokens_at(t0 + 9 * kPeriod));
  EXPECT_EQ(lim.rate(), 20.0);
  EXPECT_EQ(lim.burst(), 5);
}

}  // namespace
}  // namespace bubble

// RateLimiter refunds in bubbles: a token the pool refused goes back only to the interval that
// issued it, so no refund ever lets an interval admit more than n jobs. Exact virtual times.
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/notification.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <system_error>

namespace bubble {
namespace {

using namespace std::chrono_literals;

// A submit spends interval 0's token, waits for room in a full pool across the boundary at 10 ms,
// and is refused (tenant_limit) at 13 ms, after interval 1's token was spent by another submit.
// Refunding the old token into interval 1 would let a third job in at 14 ms: two admissions in
// [10ms, 20ms) from a limiter of 1 per 10 ms. The refund is dropped instead.
//
// The pool: 2 workers, 2 queue slots, at most 1 queued and 1 running job per tenant. Worker 2
// runs a's blocker until the end, so a's queued job never starts. Worker 1 runs x's blocker until
// 12 ms, then the jobs of x and v (each until 13 ms) one after the other: room appears once at
// 12 ms and once at 13 ms, so every hand-off below happens at its own instant and the test holds
// under every schedule.
BUBBLE_TEST(RateLimiterRefund, ARefundAfterTheNextTopUpIsDropped) {
  Runtime& rt = current_runtime();
  PoolOptions options;
  options.workers = 2;
  options.queue_capacity = 2;
  options.max_queued_per_tenant = 1;
  options.max_running_per_tenant = 1;
  Pool pool(options, rt);
  const TimePoint start = rt.now();
  RateLimiter limiter(pool, 1, 10ms);
  Notification release_x(rt);
  Notification release_a(rt);
  struct ReleaseOnExit {  // so that a failed ASSERT does not leave the workers blocked
    Notification& x;
    Notification& a;
    ~ReleaseOnExit() {
      x.notify();
      a.notify();
    }
  } release_on_exit{release_x, release_a};
  auto on = [](const char* tenant) {
    JobOptions opts;
    opts.tenant = tenant;
    return opts;
  };
  auto until_13ms = [&] { rt.sleep_until(start + 13ms); };
  ASSERT_FALSE(pool.try_submit(
      Context::background(), [&] { release_x.wait(); }, on("x")));
  ASSERT_FALSE(pool.try_submit(
      Context::background(), [&] { release_a.wait(); }, on("a")));
  bubble::wait();  // both workers busy
  ASSERT_FALSE(pool.try_submit(Context::background(), until_13ms, on("x")));
  ASSERT_FALSE(pool.try_submit(Context::background(), until_13ms, on("v")));  // the queue is full

  std::error_code d_result, s1_result, t2_result, t3_result;
  Duration d_returned{}, s1_returned{}, t2_returned{}, t3_returned{};
  bool s1_ran = false;
  // d (tenant a, straight to the pool) waits for room first; s1 (tenant a) spends interval 0's
  // token and waits behind it.
  Thread d(
      "d",
      [&] {
        rt.sleep_until(start + 1ms);
        d_result = pool.submit(
            Context::background(), [] {}, on("a"));
        d_returned = rt.now() - start;
      },
      rt);
  Thread s1(
      "s1",
      [&] {
        rt.sleep_until(start + 2ms);
        s1_result = limiter.submit(
            Context::background(), [&] { s1_ran = true; }, on("a"));
        s1_returned = rt.now() - start;
      },
      rt);
  // t2 spends interval 1's token at 11 ms and waits for room behind s1.
  Thread t2(
      "t2",
      [&] {
        rt.sleep_until(start + 11ms);
        t2_result = limiter.submit(
            Context::background(), [] {}, on("y"));
        t2_returned = rt.now() - start;
      },
      rt);
  // 12 ms: room for d (tenant a is now at its queued cap). 13 ms: room for s1, which is refused
  // with tenant_limit and passes the room on to t2.
  Thread x(
      "x",
      [&] {
        rt.sleep_until(start + 12ms);
        release_x.notify();
      },
      rt);
  // t3 at 14 ms, still in interval 1, whose token t2 holds: refused.
  Thread t3(
      "t3",
      [&] {
        rt.sleep_until(start + 14ms);
        t3_result = limiter.try_submit([] {}, on("z"));
        t3_returned = rt.now() - start;
      },
      rt);
  d.join();
  s1.join();
  t2.join();
  x.join();
  t3.join();
  EXPECT_FALSE(d_result);
  EXPECT_EQ(d_returned, 12ms);
  EXPECT_EQ(s1_result, errc::tenant_limit);
  EXPECT_EQ(s1_returned, 13ms);
  EXPECT_FALSE(t2_result);
  EXPECT_EQ(t2_returned, 13ms);
  EXPECT_EQ(t3_result, errc::rate_limited)
      << "a second admission in [10ms, 20ms) at " << format_duration(t3_returned);
  EXPECT_EQ(t3_returned, 14ms);
  EXPECT_EQ(limiter.available(), 0);
  rt.sleep_until(start + 20ms);
  bubble::wait();  // the refill thread has run (try_submit's fast path does not top up)
  EXPECT_FALSE(limiter.try_submit([] {}, on("z")));  // interval 2 has its own token
  release_a.notify();
  EXPECT_FALSE(pool.shutdown());
  EXPECT_FALSE(s1_ran);
}

// A refund within the interval that issued the token is credited: the job refused by the full
// pool gives its token to the next submit of the same interval.
BUBBLE_TEST(RateLimiterRefund, ARefundWithinTheIssuingIntervalIsCredited) {
  Runtime& rt = current_runtime();
  PoolOptions options;
  options.workers = 1;
  options.queue_capacity = 1;
  Pool pool(options, rt);
  const TimePoint start = rt.now();
  RateLimiter limiter(pool, 2, 10ms);
  Notification release(rt);
  ASSERT_FALSE(limiter.try_submit([&] { release.wait(); }));
  bubble::wait();
  rt.sleep_until(start + 3ms);
  ASSERT_FALSE(pool.try_submit(Context::background(), [] {}));  // the queue is full
  EXPECT_EQ(limiter.try_submit([] {}), errc::full);
  EXPECT_EQ(limiter.available(), 1);  // refunded
  release.notify();
  bubble::wait();
  EXPECT_FALSE(limiter.try_submit([] {}));
  EXPECT_EQ(limiter.available(), 0);
  EXPECT_EQ(rt.now() - start, 3ms);
  EXPECT_FALSE(pool.shutdown());
}

// A token spent in interval 0 and refused in interval 1 (the pool closed while the submit waited
// for room) is not refunded: interval 1 keeps what its own top-up left. Here another submit spent
// one of interval 1's two tokens and gave up waiting for room (its token stays spent), so
// interval 1 has one token left; refunding the old token would make it two, three in all.
BUBBLE_TEST(RateLimiterRefund, ARefusalAfterTheBoundaryLeavesTheNewIntervalsTokensAlone) {
  Runtime& rt = current_runtime();
  PoolOptions options;
  options.workers = 1;
  options.queue_capacity = 1;
  Pool pool(options, rt);
  const TimePoint start = rt.now();
  RateLimiter limiter(pool, 2, 10ms);
  Notification release(rt);
  ASSERT_FALSE(limiter.try_submit([&] { release.wait(); }));
  bubble::wait();
  ASSERT_FALSE(pool.try_submit(Context::background(), [] {}));  // the queue is full
  std::error_code old_token, gave_up;
  Thread w1("w1", [&] {
    rt.sleep_until(start + 5ms);  // spends interval 0's second token, waits for room
    old_token = limiter.submit(Context::background(), [] {});
  });
  Thread w2(
      "w2",
      [&] {
        rt.sleep_until(start + 12ms);  // spends one of interval 1's tokens, gives up at 14 ms
        auto [ctx, cancel] = Context::with_timeout(Context::background(), 2ms, rt);
        gave_up = limiter.submit(ctx, [] {});
        cancel();
      },
      rt);
  rt.sleep_until(start + 15ms);
  EXPECT_EQ(gave_up, errc::deadline_exceeded);
  EXPECT_EQ(limiter.available(), 1);
  Thread closer(
      "closer", [&] { (void)pool.shutdown(); }, rt);
  w1.join();  // refused at once by the shutdown
  EXPECT_EQ(old_token, errc::closed);
  EXPECT_EQ(rt.now() - start, 15ms);
  EXPECT_EQ(limiter.available(), 1) << "interval 0's token was refunded into interval 1";
  release.notify();
  w2.join();
  closer.join();
}

}  // namespace
}  // namespace bubble

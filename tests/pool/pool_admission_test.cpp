// Admission in a bubble (virtual time, exact): backpressure, rejection, time-bounded admission,
// and the three ways a blocked submitter wakes up (room, close, deadline).

#include <chrono>
#include <memory>

#include <gtest/gtest.h>

#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>

#include "../support/sleeper_job.hpp"

namespace {

using namespace std::chrono_literals;
using bubble::Context;
using bubble::errc;
using bubble::Pool;

// A job that takes `d` of virtual time.
using bubble::test_support::sleeper;

BUBBLE_TEST(PoolAdmission, BlockedSubmitterIsWokenByRoom) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 1}, rt);
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(10ms)));  // Runs 0..10 ms.
  bubble::wait();                                                   // Let the worker take it.
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(10ms)));  // Fills the queue.
  EXPECT_EQ(pool.stats().queue_depth, 1u);
  // The queue is full: this submit waits until the worker takes the queued job at 10 ms.
  EXPECT_FALSE(pool.submit(Context::background(), sleeper(10ms)));
  EXPECT_EQ(rt.now() - start, 10ms);
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(rt.now() - start, 30ms);
  EXPECT_EQ(pool.stats().completed, 3u);
}

BUBBLE_TEST(PoolAdmission, BlockedSubmitterIsWokenByItsContext) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 1}, rt);
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(100ms)));
  bubble::wait();
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(100ms)));
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 5ms, rt);
  bool ran = false;
  EXPECT_EQ(pool.submit(ctx, [&] { ran = true; }), errc::deadline_exceeded);
  EXPECT_EQ(rt.now() - start, 5ms);
  EXPECT_FALSE(pool.shutdown());
  EXPECT_FALSE(ran);
  EXPECT_EQ(pool.stats().submitted, 2u);
}

BUBBLE_TEST(PoolAdmission, BlockedSubmitterIsWokenByShutdown) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 1}, rt);
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(10ms)));
  bubble::wait();
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(10ms)));
  std::error_code blocked_result;
  bubble::TimePoint blocked_returned{};
  bubble::Thread blocked(
      "blocked-submitter",
      [&] {
        blocked_result = pool.submit(Context::background(), sleeper(10ms));
        blocked_returned = rt.now();
      },
      rt);
  bubble::sleep_for(3ms);
  EXPECT_EQ(pool.stats().waiting_submitters, 1u);
  EXPECT_FALSE(pool.shutdown());  // Wakes the submitter at 3 ms, then drains until 20 ms.
  EXPECT_EQ(rt.now() - start, 20ms);
  blocked.join();
  EXPECT_EQ(blocked_result, errc::closed);
  EXPECT_EQ(blocked_returned - start, 3ms);
  EXPECT_EQ(pool.stats().rejected_closed, 1u);
  EXPECT_EQ(pool.stats().completed, 2u);
}

BUBBLE_TEST(PoolAdmission, TrySubmitRefusesAtOnceWhenFull) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 2}, rt);
  ASSERT_FALSE(pool.try_submit(Context::background(), sleeper(10ms)));
  bubble::wait();
  ASSERT_FALSE(pool.try_submit(Context::background(), sleeper(10ms)));
  ASSERT_FALSE(pool.try_submit(Context::background(), sleeper(10ms)));
  // A refused job is destroyed before the call returns and never runs.
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> watch = token;
  EXPECT_EQ(pool.try_submit(Context::background(), [t = std::move(token)] { ++*t; }), errc::full);
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(rt.now(), start);
  const bubble::PoolStats s = pool.stats();
  EXPECT_EQ(s.rejected_full, 1u);
  EXPECT_EQ(s.shed, 1u);
  EXPECT_EQ(s.submitted, 3u);
}

BUBBLE_TEST(PoolAdmission, SubmitWithinReturnsFullAfterExactlyMaxWait) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 1}, rt);
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(100ms)));
  bubble::wait();
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(100ms)));
  bool ran = false;
  EXPECT_EQ(pool.submit_within(
                Context::background(), [&] { ran = true; }, 30ms),
            errc::full);
  EXPECT_EQ(rt.now() - start, 30ms);
  // Room frees at 100 ms, within this one's 80 ms budget (30 + 80 > 100).
  EXPECT_FALSE(pool.submit_within(
      Context::background(), [&] { ran = true; }, 80ms));
  EXPECT_EQ(rt.now() - start, 100ms);
  // max_wait <= 0 behaves like try_submit.
  EXPECT_EQ(pool.submit_within(Context::background(), sleeper(1ms), 0ms), errc::full);
  EXPECT_EQ(rt.now() - start, 100ms);
  EXPECT_FALSE(pool.shutdown());
  EXPECT_TRUE(ran);
  EXPECT_EQ(pool.stats().rejected_full, 2u);
}

BUBBLE_TEST(PoolAdmission, SubmitWithinReportsItsContextWhenThatEndsFirst) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 1}, rt);
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(100ms)));
  bubble::wait();
  ASSERT_FALSE(pool.submit(Context::background(), sleeper(100ms)));
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 20ms, rt);
  EXPECT_EQ(pool.submit_within(ctx, sleeper(1ms), 50ms), errc::deadline_exceeded);
  EXPECT_EQ(rt.now() - start, 20ms);
  EXPECT_EQ(pool.stats().rejected_full, 0u);
}

BUBBLE_TEST(PoolAdmission, LateSubmitAfterShutdownIsRefusedAndNeverRuns) {
  bubble::Runtime& rt = bubble::current_runtime();
  Pool pool({.workers = 2}, rt);
  EXPECT_FALSE(pool.shutdown());
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> watch = token;
  EXPECT_EQ(pool.submit(Context::background(), [t = std::move(token)] { ++*t; }), errc::closed);
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(pool.try_submit(Context::background(), sleeper(1ms)), errc::closed);
  EXPECT_EQ(pool.submit_within(Context::background(), sleeper(1ms), 1s), errc::closed);
  EXPECT_EQ(pool.stats().rejected_closed, 3u);
  EXPECT_EQ(pool.stats().submitted, 0u);
}

BUBBLE_TEST(PoolAdmission, ContextAlreadyDoneIsRefusedAtOnce) {
  bubble::Runtime& rt = bubble::current_runtime();
  Pool pool({.workers = 1}, rt);
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  cancel();
  EXPECT_EQ(pool.submit(ctx, sleeper(1ms)), errc::canceled);
  EXPECT_EQ(pool.try_submit(ctx, sleeper(1ms)), errc::canceled);
  EXPECT_EQ(pool.stats().submitted, 0u);
}

}  // namespace

// Tests of bubble::Context, CancelFunc, Context::Callback and after_done on
// the system runtime (real threads; TSan in CI) and on ManualRuntime (a hand-advanced clock for
// exact deadline checks). Only ordering and lower bounds on time are asserted; threads are
// sequenced with the primitives' own signals, never with sleeps.

#include <bubble/context.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../../support/error_codes.hpp"
#include "manual_runtime.hpp"

namespace {

using namespace std::chrono_literals;
using bubble::CancelFunc;
using bubble::Context;
using bubble::errc;
using bubble::TimePoint;
using bubble::test_support::ec;
using bubble_test::ManualRuntime;

TEST(Context, BackgroundNeverEndsAndHasNoDeadlineNorCause) {
  const Context bg = Context::background();
  EXPECT_FALSE(bg.done());
  EXPECT_FALSE(bg.err());
  EXPECT_FALSE(bg.cause());
  EXPECT_FALSE(bg.deadline().has_value());
  EXPECT_FALSE(bg.can_end());
  EXPECT_EQ(bg.registrations(), 0u);
  // One shared state: every call and the default constructor give the same context.
  EXPECT_TRUE(bg == Context::background());
  EXPECT_TRUE(bg == Context());
}

TEST(Context, CancelEndsTheContextWithCanceled) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  EXPECT_TRUE(ctx.can_end());
  EXPECT_FALSE(ctx.done());
  EXPECT_FALSE(ctx.err());
  EXPECT_FALSE(ctx.cause());
  cancel();
  EXPECT_TRUE(ctx.done());
  EXPECT_EQ(ctx.err(), ec(errc::canceled));
  EXPECT_EQ(ctx.cause(), ec(errc::canceled));
}

TEST(Context, CancelWithACauseKeepsErrCanceledAndTheFirstCauseStands) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  cancel(ec(errc::limiter_stopped));
  cancel(ec(errc::closed));  // Already done: does nothing.
  cancel();
  EXPECT_EQ(ctx.err(), ec(errc::canceled));
  EXPECT_EQ(ctx.cause(), ec(errc::limiter_stopped));
}

TEST(Context, CancelWithAnEmptyCauseReportsCanceledAsTheCause) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  cancel(std::error_code{});
  EXPECT_EQ(ctx.cause(), ec(errc::canceled));
}

TEST(Context, CopiesObserveTheSameContextAndCancelFuncCopiesCancelIt) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  const Context copy = ctx;
  const CancelFunc cancel_copy = cancel;
  EXPECT_TRUE(copy == ctx);
  cancel_copy();
  EXPECT_TRUE(copy.done());
  EXPECT_TRUE(ctx.done());
}

TEST(Context, DefaultConstructedCancelFuncDoesNothing) {
  const CancelFunc nothing;
  nothing();
  nothing(ec(errc::closed));
  SUCCEED();
}

TEST(Context, CancellingAParentEndsChildrenAndGrandchildrenWithTheParentsErrAndCause) {
  auto [parent, cancel_parent] = Context::with_cancel(Context::background());
  auto [child, cancel_child] = Context::with_cancel(parent);
  auto [grandchild, cancel_grandchild] = Context::with_cancel(child);
  cancel_parent(ec(errc::limiter_stopped));
  EXPECT_EQ(child.err(), ec(errc::canceled));
  EXPECT_EQ(child.cause(), ec(errc::limiter_stopped));
  EXPECT_EQ(grandchild.err(), ec(errc::canceled));
  EXPECT_EQ(grandchild.cause(), ec(errc::limiter_stopped));
}

TEST(Context, CancellingAChildDoesNotEndItsParent) {
  auto [parent, cancel_parent] = Context::with_cancel(Context::background());
  auto [child, cancel_child] = Context::with_cancel(parent);
  cancel_child();
  EXPECT_TRUE(child.done());
  EXPECT_FALSE(parent.done());
}

TEST(Context, AChildOfADoneParentIsDoneAtOnce) {
  auto [parent, cancel_parent] = Context::with_cancel(Context::background());
  cancel_parent(ec(errc::closed));
  auto [child, cancel_child] = Context::with_cancel(parent);
  EXPECT_TRUE(child.done());
  EXPECT_EQ(child.err(), ec(errc::canceled));
  EXPECT_EQ(child.cause(), ec(errc::closed));
  EXPECT_EQ(parent.registrations(), 0u);
}

TEST(Context, ChildrenLeaveTheirParentWhenCancelledOrDestroyed) {
  auto [parent, cancel_parent] = Context::with_cancel(Context::background());
  {
    auto [a, cancel_a] = Context::with_cancel(parent);
    auto [b, cancel_b] = Context::with_cancel(parent);
    EXPECT_EQ(parent.registrations(), 2u);
    cancel_a();
    EXPECT_EQ(parent.registrations(), 1u);
  }
  EXPECT_EQ(parent.registrations(), 0u);
  // Many forgotten children leave nothing behind; cancelling the parent afterwards touches none of
  // them (ASan would report a use after free).
  for (int i = 0; i < 1000; ++i) {
    auto pair = Context::with_cancel(parent);
  }
  EXPECT_EQ(parent.registrations(), 0u);
  cancel_parent();
}

TEST(Context, ADestroyedChildHandleIsKeptAliveByItsCancelFunc) {
  auto [parent, cancel_parent] = Context::with_cancel(Context::background());
  CancelFunc cancel_child;
  {
    auto pair = Context::with_cancel(parent);
    cancel_child = pair.second;
  }
  EXPECT_EQ(parent.registrations(), 1u);
  cancel_child();
  EXPECT_EQ(parent.registrations(), 0u);
}

TEST(Context, WithDeadlineInThePastIsDoneAtOnceWithDeadlineExceeded) {
  bubble::Runtime& rt = bubble::system_runtime();
  auto [ctx, cancel] = Context::with_deadline(Context::background(), rt.now() - 1s, rt);
  EXPECT_TRUE(ctx.done());
  EXPECT_EQ(ctx.err(), ec(errc::deadline_exceeded));
  EXPECT_EQ(ctx.cause(), ec(errc::deadline_exceeded));
  ASSERT_TRUE(ctx.deadline().has_value());
}

TEST(Context, ZeroAndNegativeTimeoutsAreDoneAtOnce) {
  auto [zero, cancel_zero] = Context::with_timeout(Context::background(), 0s);
  auto [negative, cancel_negative] = Context::with_timeout(Context::background(), -5s);
  EXPECT_EQ(zero.err(), ec(errc::deadline_exceeded));
  EXPECT_EQ(negative.err(), ec(errc::deadline_exceeded));
}

TEST(Context, TimeoutEndsTheContextNoEarlierThanItsDeadline) {
  bubble::Runtime& rt = bubble::system_runtime();
  const TimePoint start = rt.now();
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 2ms, rt);
  ASSERT_TRUE(ctx.deadline().has_value());
  EXPECT_GE(*ctx.deadline(), start + 2ms);
  ctx.wait();
  EXPECT_GE(rt.now(), *ctx.deadline());
  EXPECT_EQ(ctx.err(), ec(errc::deadline_exceeded));
  EXPECT_EQ(ctx.cause(), ec(errc::deadline_exceeded));
}

TEST(Context, HugeTimeoutSaturatesInsteadOfOverflowing) {
  auto [ctx, cancel] = Context::with_timeout(Context::background(), bubble::Duration::max());
  ASSERT_TRUE(ctx.deadline().has_value());
  EXPECT_EQ(*ctx.deadline(), bubble::kNoDeadline);
  EXPECT_FALSE(ctx.done());
}

TEST(Context, DeadlineFiresOnTheRuntimesClockExactlyAtTheDeadline) {
  ManualRuntime rt;
  const TimePoint deadline = rt.now() + 10s;
  auto [ctx, cancel] = Context::with_deadline(Context::background(), deadline, rt);
  EXPECT_EQ(rt.pending_timers(), 1u);
  rt.advance(10s - 1ns);
  EXPECT_FALSE(ctx.done());
  rt.advance(1ns);
  EXPECT_TRUE(ctx.done());
  EXPECT_EQ(ctx.err(), ec(errc::deadline_exceeded));
}

TEST(Context, CancellingBeforeTheDeadlineCancelsTheTimer) {
  ManualRuntime rt;
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 10s, rt);
  EXPECT_EQ(rt.pending_timers(), 1u);
  cancel();
  EXPECT_EQ(rt.pending_timers(), 0u);
  EXPECT_EQ(rt.cancelled(), 1);
  rt.advance(20s);
  EXPECT_EQ(ctx.err(), ec(errc::canceled));
}

TEST(Context, ParentCancellationCancelsTheChildsDeadlineTimer) {
  ManualRuntime rt;
  auto [parent, cancel_parent] = Context::with_cancel(Context::background());
  auto [child, cancel_child] = Context::with_timeout(parent, 10s, rt);
  cancel_parent();
  EXPECT_EQ(rt.pending_timers(), 0u);
  EXPECT_EQ(child.err(), ec(errc::canceled));
}

TEST(Context, ChildKeepsAnEarlierParentDeadlineWithoutATimerOfItsOwn) {
  ManualRuntime rt;
  const TimePoint t0 = rt.now();
  auto [parent, cancel_parent] = Context::with_deadline(Context::background(), t0 + 5s, rt);
  auto [child, cancel_child] = Context::with_deadline(parent, t0 + 8s, rt);
  EXPECT_EQ(child.deadline(), t0 + 5s);
  EXPECT_EQ(rt.scheduled(), 1);  // Only the parent's timer.
  rt.advance(5s);
  EXPECT_EQ(child.err(), ec(errc::deadline_exceeded));
  EXPECT_EQ(child.cause(), ec(errc::deadline_exceeded));
}

TEST(Context, ChildWithAnEarlierOwnDeadlineEndsFirst) {
  ManualRuntime rt;
  const TimePoint t0 = rt.now();
  auto [parent, cancel_parent] = Context::with_deadline(Context::background(), t0 + 8s, rt);
  auto [child, cancel_child] = Context::with_deadline(parent, t0 + 5s, rt);
  EXPECT_EQ(child.deadline(), t0 + 5s);
  EXPECT_EQ(parent.deadline(), t0 + 8s);
  rt.advance(5s);
  EXPECT_TRUE(child.done());
  EXPECT_FALSE(parent.done());
  rt.advance(3s);
  EXPECT_TRUE(parent.done());
}

TEST(Context, WithCancelInheritsTheParentsDeadline) {
  ManualRuntime rt;
  auto [parent, cancel_parent] = Context::with_timeout(Context::background(), 3s, rt);
  auto [child, cancel_child] = Context::with_cancel(parent);
  EXPECT_EQ(child.deadline(), parent.deadline());
}

TEST(Context, WaitReturnsAtOnceWhenDone) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  cancel();
  ctx.wait();
  EXPECT_TRUE(ctx.done());
}

TEST(Context, WaitBlocksUntilAnotherThreadCancels) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::atomic<bool> was_done_after_wait{false};
  std::thread waiter([&, c = ctx] {
    c.wait();
    was_done_after_wait = c.done();
  });
  // Cancel only once the waiter is registered (its Callback), so it is really blocked.
  while (ctx.registrations() == 0) std::this_thread::yield();
  cancel();
  waiter.join();
  EXPECT_TRUE(was_done_after_wait);
}

TEST(ContextCallback, RunsOnceOnTheCancellingThreadInRegistrationOrder) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::vector<int> order;
  std::thread::id ran_on;
  Context::Callback first(ctx, [&] {
    order.push_back(1);
    ran_on = std::this_thread::get_id();
  });
  Context::Callback second(ctx, [&] { order.push_back(2); });
  EXPECT_TRUE(order.empty());
  std::thread canceller([&, c = cancel] { c(); });
  const std::thread::id canceller_id = canceller.get_id();
  canceller.join();
  cancel();  // A second cancel does not run them again.
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(ran_on, canceller_id);
}

TEST(ContextCallback, RunsInTheConstructorWhenAlreadyDone) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  cancel();
  bool ran = false;
  Context::Callback cb(ctx, [&] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(ContextCallback, NeverRunsOnBackgroundAndRegistersNothing) {
  bool ran = false;
  Context::Callback cb(Context::background(), [&] { ran = true; });
  EXPECT_EQ(Context::background().registrations(), 0u);
  EXPECT_FALSE(ran);
}

TEST(ContextCallback, DestroyedCallbackDoesNotRun) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  bool ran = false;
  {
    Context::Callback cb(ctx, [&] { ran = true; });
    EXPECT_EQ(ctx.registrations(), 1u);
  }
  EXPECT_EQ(ctx.registrations(), 0u);
  cancel();
  EXPECT_FALSE(ran);
}

TEST(ContextCallback, DestructorWaitsForTheCallbackRunningOnAnotherThread) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::atomic<bool> entered{false};
  std::atomic<bool> destroying{false};
  std::atomic<bool> finished{false};
  auto cb = std::make_unique<Context::Callback>(ctx, [&] {
    entered = true;
    while (!destroying) std::this_thread::yield();
    // Keep running for a while after the destructor has started.
    for (int i = 0; i < 1000; ++i) std::this_thread::yield();
    finished = true;
  });
  std::thread canceller([c = cancel] { c(); });
  while (!entered) std::this_thread::yield();
  destroying = true;
  cb.reset();
  // The destructor returned only after the callback did.
  EXPECT_TRUE(finished);
  canceller.join();
}

// Property: a function that spawns a thread (allowed) while another thread destroys its Callback
// has returned before the destructor does, whatever the race between the two.
TEST(ContextCallback, DestroyingACallbackWhoseFunctionSpawnsAThreadWaitsForTheFunction) {
  bubble::Runtime& rt = bubble::system_runtime();
  for (int round = 0; round < 200; ++round) {
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    std::atomic<bool> entered{false};
    std::atomic<bool> returned{false};
    auto cb = std::make_unique<Context::Callback>(ctx, [&] {
      entered = true;
      detach(rt.spawn("spawned_by_callback", [] {}));  // Detached.
      returned = true;
    });
    std::thread canceller([c = cancel] { c(); });
    if (round % 2 == 0) {
      while (!entered) std::this_thread::yield();  // Remove while the function runs.
    }
    const bool ran_before = entered;
    cb.reset();
    EXPECT_EQ(returned.load(), entered.load()) << "round " << round;
    if (ran_before) {
      EXPECT_TRUE(returned) << "round " << round;
    }
    canceller.join();
  }
}

TEST(ContextCallback, ACallbackMayDestroyItsOwnRegistration) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::unique_ptr<Context::Callback> cb;
  bool ran = false;
  cb = std::make_unique<Context::Callback>(ctx, [&] {
    ran = true;
    cb.reset();  // Same thread: must not wait for itself.
  });
  cancel();
  EXPECT_TRUE(ran);
  EXPECT_EQ(cb, nullptr);
}

TEST(ContextCallback, KeepsTheContextAlive) {
  bool ran = false;
  CancelFunc cancel;
  std::unique_ptr<Context::Callback> cb;
  {
    auto pair = Context::with_cancel(Context::background());
    cancel = pair.second;
    cb = std::make_unique<Context::Callback>(pair.first, [&] { ran = true; });
  }
  cancel();
  EXPECT_TRUE(ran);
}

TEST(ContextCallback, ConcurrentRegistrationAndCancellationRunEachCallbackExactlyOnce) {
  // Property: whether a Callback is constructed before, during or after the cancel, its function
  // runs exactly once (inline in the constructor or on the canceller).
  for (int round = 0; round < 50; ++round) {
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    constexpr int kThreads = 4;
    std::atomic<int> runs{0};
    std::latch start(kThreads + 1);
    std::vector<std::thread> threads;
    std::vector<std::unique_ptr<Context::Callback>> cbs(kThreads * 10);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t, c = ctx] {
        start.arrive_and_wait();
        for (int i = 0; i < 10; ++i) {
          cbs[static_cast<std::size_t>(t * 10 + i)] =
              std::make_unique<Context::Callback>(c, [&] { runs.fetch_add(1); });
        }
      });
    }
    start.arrive_and_wait();
    cancel();
    for (auto& th : threads) th.join();
    EXPECT_EQ(runs.load(), kThreads * 10);
  }
}

TEST(AfterFunc, RunsTheFunctionInANewThreadOnceTheContextEnds) {
  ManualRuntime rt;
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::latch ran(1);
  std::atomic<std::thread::id> ran_on{};
  auto handle = bubble::after_done(
      ctx,
      [&] {
        ran_on = std::this_thread::get_id();
        ran.count_down();
      },
      rt);
  EXPECT_EQ(rt.spawned(), 0);
  cancel();
  EXPECT_EQ(rt.spawned(), 1);  // Started by cancel, before it returned.
  ran.wait();
  EXPECT_NE(ran_on.load(), std::this_thread::get_id());
  EXPECT_FALSE(handle.stop());  // Already started.
}

TEST(AfterFunc, StopBeforeTheContextEndsPreventsTheRun) {
  ManualRuntime rt;
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  auto handle = bubble::after_done(
      ctx, [] {}, rt);
  EXPECT_EQ(ctx.registrations(), 1u);
  EXPECT_TRUE(handle.stop());
  EXPECT_EQ(ctx.registrations(), 0u);
  EXPECT_FALSE(handle.stop());  // Already stopped.
  cancel();
  EXPECT_EQ(rt.spawned(), 0);
}

TEST(AfterFunc, StartsBeforeReturningWhenTheContextIsAlreadyDone) {
  ManualRuntime rt;
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  cancel();
  std::latch ran(1);
  auto handle = bubble::after_done(
      ctx, [&] { ran.count_down(); }, rt);
  EXPECT_EQ(rt.spawned(), 1);
  ran.wait();
  EXPECT_FALSE(handle.stop());
}

TEST(AfterFunc, DroppingTheHandleDoesNotCancelTheRegistration) {
  ManualRuntime rt;
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::latch ran(1);
  {
    (void)bubble::after_done(
        ctx, [&] { ran.count_down(); }, rt);
  }
  cancel();
  EXPECT_EQ(rt.spawned(), 1);
  ran.wait();
}

TEST(AfterFunc, OnBackgroundNeverRunsAndStopReportsThePrevention) {
  ManualRuntime rt;
  auto handle = bubble::after_done(
      Context::background(), [] {}, rt);
  EXPECT_EQ(Context::background().registrations(), 0u);
  EXPECT_TRUE(handle.stop());
  EXPECT_EQ(rt.spawned(), 0);
}

TEST(AfterFunc, EmptyFunctionsAreRejected) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  EXPECT_THROW(bubble::after_done(ctx, nullptr), std::invalid_argument);
  EXPECT_THROW(Context::Callback(ctx, nullptr), std::invalid_argument);
  EXPECT_EQ(ctx.registrations(), 0u);
}

TEST(AfterFunc, DefaultHandleStopReturnsFalse) {
  bubble::AfterDone handle;
  EXPECT_FALSE(handle.stop());
}

TEST(AfterFunc, StopRacingCancelHasExactlyOneWinner) {
  // Property: for every interleaving, stop() returns true iff the function was not started.
  for (int round = 0; round < 100; ++round) {
    ManualRuntime rt;
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    auto handle = bubble::after_done(
        ctx, [] {}, rt);
    std::thread canceller([c = cancel] { c(); });
    const bool stopped = handle.stop();
    canceller.join();
    EXPECT_EQ(rt.spawned(), stopped ? 0 : 1);
  }
}

}  // namespace

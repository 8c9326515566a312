// Tests of bubble::Timer, bubble::Ticker and after_func(Duration, ...). Exact time behaviour is
// checked on ManualRuntime (a hand-advanced clock whose timer callbacks run inside advance());
// on the system runtime only ordering and lower bounds are asserted.

#include <bubble/timer.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../../support/error_codes.hpp"
#include "manual_runtime.hpp"

namespace {

using namespace std::chrono_literals;
using bubble::errc;
using bubble::Ticker;
using bubble::TimePoint;
using bubble::Timer;
using bubble::test_support::ec;
using bubble_test::ManualRuntime;

TEST(Timer, DeliversTheScheduledFireTimeNotTheTimeItIsRead) {
  ManualRuntime rt;
  const TimePoint t0 = rt.now();
  Timer timer(5s, rt);
  rt.advance(5s - 1ns);
  EXPECT_EQ(timer.channel().try_receive().error(), ec(errc::empty));
  rt.advance(1ns);
  rt.advance(3s);  // Read late.
  EXPECT_EQ(timer.channel().try_receive().value(), t0 + 5s);
  EXPECT_EQ(timer.channel().try_receive().error(), ec(errc::empty));  // Fires once.
}

TEST(Timer, ZeroOrNegativeDurationFiresAtOnceWithNowAsItsTime) {
  ManualRuntime rt;
  rt.advance(1h);
  const TimePoint now = rt.now();
  Timer zero(0s, rt);
  Timer negative(-3s, rt);
  EXPECT_EQ(rt.advance(0s), 2u);
  EXPECT_EQ(zero.channel().try_receive().value(), now);
  EXPECT_EQ(negative.channel().try_receive().value(), now);
}

TEST(Timer, StopBeforeFiringReturnsTrueAndNothingIsDelivered) {
  ManualRuntime rt;
  Timer timer(5s, rt);
  EXPECT_TRUE(timer.stop());
  EXPECT_EQ(rt.pending_timers(), 0u);
  rt.advance(10s);
  EXPECT_EQ(timer.channel().try_receive().error(), ec(errc::empty));
  EXPECT_FALSE(timer.stop());  // Already stopped.
}

// Go 1.23: a value that fired but was not received is still pending; stop() withdraws it and
// reports that it stopped the timer, so `if (!t.stop()) receive();` cannot block.
TEST(Timer, StopAfterFiringButBeforeTheValueIsReceivedReturnsTrueAndWithdrawsIt) {
  ManualRuntime rt;
  Timer timer(5s, rt);
  rt.advance(5s);
  EXPECT_EQ(timer.channel().size(), 1u);
  EXPECT_TRUE(timer.stop());
  EXPECT_EQ(timer.channel().try_receive().error(), ec(errc::empty));
  EXPECT_FALSE(timer.stop());  // Already stopped.
}

TEST(Timer, StopAndResetAfterTheValueWasReceivedReturnFalse) {
  ManualRuntime rt;
  const TimePoint t0 = rt.now();
  Timer timer(1s, rt);
  rt.advance(1s);
  EXPECT_EQ(timer.channel().try_receive().value(), t0 + 1s);
  EXPECT_FALSE(timer.stop());
  EXPECT_FALSE(timer.reset(1s));  // Was stopped.
  rt.advance(1s);
  EXPECT_EQ(timer.channel().try_receive().value(), t0 + 2s);
  EXPECT_FALSE(timer.reset(1s));  // Fired and received.
}

TEST(Timer, ResetOfAnActiveTimerReturnsTrueAndOnlyTheNewDeadlineFires) {
  ManualRuntime rt;
  const TimePoint t0 = rt.now();
  Timer timer(5s, rt);
  rt.advance(2s);
  EXPECT_TRUE(timer.reset(5s));
  EXPECT_EQ(rt.pending_timers(), 1u);
  rt.advance(3s);  // The old deadline, t0 + 5s.
  EXPECT_EQ(timer.channel().try_receive().error(), ec(errc::empty));
  rt.advance(2s);
  EXPECT_EQ(timer.channel().try_receive().value(), t0 + 7s);
}

TEST(Timer, ResetAfterFiringButBeforeTheValueIsReceivedReturnsTrueAndOnlyTheNewValueComes) {
  ManualRuntime rt;
  const TimePoint t0 = rt.now();
  Timer timer(1s, rt);
  rt.advance(1s);
  EXPECT_TRUE(timer.reset(1s));
  EXPECT_EQ(timer.channel().try_receive().error(), ec(errc::empty));
  rt.advance(1s);
  EXPECT_EQ(timer.channel().try_receive().value(), t0 + 2s);
}

TEST(Timer, ResetOfAStoppedTimerReturnsFalseAndRearmsIt) {
  ManualRuntime rt;
  const TimePoint t0 = rt.now();
  Timer timer(1s, rt);
  EXPECT_TRUE(timer.stop());
  EXPECT_FALSE(timer.reset(2s));
  rt.advance(2s);
  EXPECT_EQ(timer.channel().try_receive().value(), t0 + 2s);
}

TEST(Timer, DestructionCancelsTheRuntimeTimer) {
  ManualRuntime rt;
  { Timer timer(1s, rt); }
  EXPECT_EQ(rt.pending_timers(), 0u);
}

TEST(Timer, ResetAndStopAreSchedulingPointsAndFiringIsNot) {
  ManualRuntime rt(/*controlled=*/true);
  Timer timer(1s, rt);
  (void)rt.take_points();
  rt.advance(1s);  // The timer callback runs here: it must not reach a scheduling point.
  EXPECT_TRUE(rt.take_points().empty());
  (void)timer.reset(1s);
  (void)timer.stop();
  const auto points = rt.take_points();
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].kind, "Timer::reset");
  EXPECT_EQ(points[1].kind, "Timer::stop");
}

TEST(Timer, FiresOnTheSystemRuntimeNoEarlierThanItsDeadline) {
  bubble::Runtime& rt = bubble::system_runtime();
  const TimePoint start = rt.now();
  Timer timer(2ms, rt);
  const TimePoint fired = timer.channel().receive().value();
  EXPECT_GE(fired, start + 2ms);
  EXPECT_GE(rt.now(), fired);
}

// Property: whatever the race between the runtime's timer thread firing and stop() (nobody
// receives), stop() returns true and no value is received after it returns.
TEST(Timer, StopRacingTheFiringReturnsTrueAndNoValueIsReceivedAfterIt) {
  bubble::Runtime& rt = bubble::system_runtime();
  for (int round = 0; round < 2000; ++round) {
    Timer timer(0s, rt);
    EXPECT_TRUE(timer.stop()) << "round " << round;
    EXPECT_EQ(timer.channel().try_receive().error(), ec(errc::empty));
  }
}

// Waits, without sleeping, until the runtime's timer thread has delivered the timer's value.
void await_fired(Timer& timer) {
  while (timer.channel().size() == 0) std::this_thread::yield();
}

TEST(Timer, StopOfAFiredButUnreceivedTimerReturnsTrueOnTheSystemRuntime) {
  bubble::Runtime& rt = bubble::system_runtime();
  for (int round = 0; round < 100; ++round) {
    Timer timer(0s, rt);
    await_fired(timer);
    EXPECT_TRUE(timer.stop()) << "round " << round;
    EXPECT_EQ(timer.channel().try_receive().error(), ec(errc::empty));
    EXPECT_FALSE(timer.stop());
  }
}

// The idiom of Go's time.Timer documentation returns at once whether the timer fired or not:
// were stop() to return false with nothing to receive, the receive would block for ever.
TEST(Timer, TheStopThenDrainIdiomNeverBlocksOnTheSystemRuntime) {
  bubble::Runtime& rt = bubble::system_runtime();
  for (int round = 0; round < 100; ++round) {
    Timer fired(0s, rt);
    Timer pending(1h, rt);
    await_fired(fired);
    if (!fired.stop()) (void)fired.channel().receive();
    if (!pending.stop()) (void)pending.channel().receive();
  }
}

TEST(Timer, ResetOfAFiredButUnreceivedTimerDeliversOnlyItsNewExpiryOnTheSystemRuntime) {
  bubble::Runtime& rt = bubble::system_runtime();
  for (int round = 0; round < 100; ++round) {
    Timer timer(0s, rt);
    await_fired(timer);
    const TimePoint reset_at = rt.now();
    EXPECT_TRUE(timer.reset(0s)) << "round " << round;
    EXPECT_GE(timer.channel().receive().value(), reset_at);  // Not the first expiry.
    EXPECT_FALSE(timer.stop());
  }
}

TEST(Ticker, NonPositivePeriodThrowsNamingTheValue) {
  ManualRuntime rt;
  try {
    Ticker ticker(0s, rt);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "bubble::Ticker::Ticker: period must be > 0, got 0s");
  }
  try {
    Ticker ticker(-2ms, rt);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "bubble::Ticker::Ticker: period must be > 0, got -2ms");
  }
  Ticker ticker(1s, rt);
  EXPECT_THROW(ticker.reset(-1s), std::invalid_argument);
}

TEST(Ticker, TicksOnTheGridWithTheScheduledTimes) {
  ManualRuntime rt;
  const TimePoint t0 = rt.now();
  Ticker ticker(1s, rt);
  rt.advance(1s);
  EXPECT_EQ(ticker.channel().try_receive().value(), t0 + 1s);
  rt.advance(1s);
  EXPECT_EQ(ticker.channel().try_receive().value(), t0 + 2s);
  EXPECT_EQ(ticker.channel().capacity(), 1u);
}

TEST(Ticker, AfterAStallOneStaleTickIsDeliveredAtOnceThenTheGridResumes) {
  // The ticker keeps one tick in its channel while the receiver is stuck; the ticks that find
  // the slot full are dropped.
  ManualRuntime rt;
  const TimePoint t0 = rt.now();
  Ticker ticker(100ms, rt);
  rt.advance(250ms);  // Ticks at 100ms (kept) and 200ms (dropped).
  EXPECT_EQ(ticker.channel().try_receive().value(), t0 + 100ms);
  EXPECT_EQ(ticker.channel().try_receive().error(), ec(errc::empty));
  rt.advance(50ms);
  EXPECT_EQ(ticker.channel().try_receive().value(), t0 + 300ms);
}

TEST(Ticker, ATickDeliveredLateSkipsTheGridPointsAlreadyMissed) {
  ManualRuntime rt;
  const TimePoint t0 = rt.now();
  Ticker ticker(100ms, rt);
  rt.set_lag(250ms);  // The tick due at 100ms runs when now() is 350ms.
  rt.advance(100ms);
  EXPECT_EQ(ticker.channel().try_receive().value(), t0 + 100ms);
  rt.set_lag(0ms);
  // The grid points 200ms and 300ms were missed; the next tick is at 400ms.
  rt.advance(200ms);
  EXPECT_EQ(ticker.channel().try_receive().error(), ec(errc::empty));
  rt.advance(100ms);
  EXPECT_EQ(ticker.channel().try_receive().value(), t0 + 400ms);
}

TEST(Ticker, StopEndsTheTicksAndDiscardsAnUndeliveredOne) {
  ManualRuntime rt;
  Ticker ticker(1s, rt);
  rt.advance(1s);
  ticker.stop();
  EXPECT_EQ(ticker.channel().try_receive().error(), ec(errc::empty));
  EXPECT_EQ(rt.pending_timers(), 0u);
  rt.advance(5s);
  EXPECT_EQ(ticker.channel().try_receive().error(), ec(errc::empty));
}

TEST(Ticker, ResetRestartsTheGridWithTheNewPeriod) {
  ManualRuntime rt;
  const TimePoint t0 = rt.now();
  Ticker ticker(1s, rt);
  rt.advance(1500ms);  // One tick at 1s, undelivered.
  ticker.reset(2s);
  EXPECT_EQ(ticker.channel().try_receive().error(), ec(errc::empty));
  rt.advance(1500ms);  // t0 + 3s: the old grid would have ticked at 2s and 3s.
  EXPECT_EQ(ticker.channel().try_receive().error(), ec(errc::empty));
  rt.advance(500ms);
  EXPECT_EQ(ticker.channel().try_receive().value(), t0 + 3500ms);
  rt.advance(2s);
  EXPECT_EQ(ticker.channel().try_receive().value(), t0 + 5500ms);
}

TEST(Ticker, DestructionCancelsTheRuntimeTimer) {
  ManualRuntime rt;
  { Ticker ticker(1s, rt); }
  EXPECT_EQ(rt.pending_timers(), 0u);
}

// Waits, without sleeping, until the runtime's timer thread has delivered a tick.
void await_tick(Ticker& ticker) {
  while (ticker.channel().size() == 0) std::this_thread::yield();
}

TEST(Ticker, StopAndResetWithdrawAnUndeliveredTickOnTheSystemRuntime) {
  bubble::Runtime& rt = bubble::system_runtime();
  for (int round = 0; round < 10; ++round) {
    Ticker stopped(1ns, rt);
    await_tick(stopped);
    stopped.stop();
    EXPECT_EQ(stopped.channel().try_receive().error(), ec(errc::empty)) << "round " << round;
    Ticker reset(1ns, rt);
    await_tick(reset);
    reset.reset(1h);
    EXPECT_EQ(reset.channel().try_receive().error(), ec(errc::empty)) << "round " << round;
  }
}

TEST(Ticker, TicksOnTheSystemRuntimeAreOnTheGridAndIncreasing) {
  bubble::Runtime& rt = bubble::system_runtime();
  const TimePoint start = rt.now();
  Ticker ticker(1ms, rt);
  const TimePoint first = ticker.channel().receive().value();
  const TimePoint second = ticker.channel().receive().value();
  EXPECT_GE(first, start + 1ms);
  EXPECT_GT(second, first);
  EXPECT_EQ((second - first) % 1ms, 0ms);
  EXPECT_GE(rt.now(), second);
}

TEST(AfterFuncTimer, RunsTheFunctionInANewThreadAfterTheDuration) {
  ManualRuntime rt;
  std::latch ran(1);
  auto handle = bubble::after_func(
      5s, [&] { ran.count_down(); }, rt);
  rt.advance(5s - 1ns);
  EXPECT_EQ(rt.spawned(), 0);
  rt.advance(1ns);
  EXPECT_EQ(rt.spawned(), 1);
  ran.wait();
  EXPECT_FALSE(handle.stop());  // Already started.
}

TEST(AfterFuncTimer, StopBeforeTheDurationPreventsTheRun) {
  ManualRuntime rt;
  auto handle = bubble::after_func(
      5s, [] {}, rt);
  EXPECT_TRUE(handle.stop());
  EXPECT_EQ(rt.pending_timers(), 0u);
  EXPECT_FALSE(handle.stop());
  rt.advance(10s);
  EXPECT_EQ(rt.spawned(), 0);
}

TEST(AfterFuncTimer, NonPositiveDurationStartsAtTheNextTimerCallback) {
  ManualRuntime rt;
  std::latch ran(1);
  auto handle = bubble::after_func(
      -1s, [&] { ran.count_down(); }, rt);
  EXPECT_EQ(rt.advance(0s), 1u);
  EXPECT_EQ(rt.spawned(), 1);
  ran.wait();
}

TEST(AfterFuncTimer, DroppingTheHandleDoesNotStopIt) {
  ManualRuntime rt;
  std::latch ran(1);
  {
    (void)bubble::after_func(
        1s, [&] { ran.count_down(); }, rt);
  }
  rt.advance(1s);
  ran.wait();
  EXPECT_EQ(rt.spawned(), 1);
}

TEST(AfterFuncTimer, EmptyFunctionIsRejected) {
  ManualRuntime rt;
  EXPECT_THROW(bubble::after_func(1s, nullptr, rt), std::invalid_argument);
  EXPECT_EQ(rt.pending_timers(), 0u);
}

TEST(AfterFuncTimer, DefaultHandleStopReturnsFalse) {
  bubble::AfterFunc handle;
  EXPECT_FALSE(handle.stop());
}

// Reset, as Go's Timer.Reset on a time.AfterFunc timer: true when the function was pending (it
// now starts later), false when it had started (it starts again) or was stopped (armed again).
TEST(AfterFuncTimer, ResetBeforeItStartsMovesTheStart) {
  ManualRuntime rt;
  std::atomic<int> runs{0};
  auto handle = bubble::after_func(
      5s, [&] { ++runs; }, rt);
  rt.advance(3s);
  EXPECT_TRUE(handle.reset(5s));
  rt.advance(5s - 1ns);  // The first schedule's time (5s) has passed: nothing started.
  EXPECT_EQ(rt.spawned(), 0);
  rt.advance(1ns);
  EXPECT_EQ(rt.spawned(), 1);
  rt.advance(1h);
  EXPECT_EQ(rt.spawned(), 1);
  EXPECT_FALSE(handle.stop());
}

TEST(AfterFuncTimer, ResetAfterItStartedRunsItAgain) {
  ManualRuntime rt;
  std::latch ran(2);
  auto handle = bubble::after_func(
      1s, [&] { ran.count_down(); }, rt);
  rt.advance(1s);
  EXPECT_EQ(rt.spawned(), 1);
  EXPECT_FALSE(handle.reset(2s));
  rt.advance(2s - 1ns);
  EXPECT_EQ(rt.spawned(), 1);
  rt.advance(1ns);
  EXPECT_EQ(rt.spawned(), 2);
  ran.wait();  // The same function ran twice.
}

TEST(AfterFuncTimer, ResetAfterStopArmsItAgain) {
  ManualRuntime rt;
  auto handle = bubble::after_func(
      1s, [] {}, rt);
  EXPECT_TRUE(handle.stop());
  EXPECT_FALSE(handle.reset(1s));
  EXPECT_TRUE(handle.reset(2s));  // Pending again: the reset moves it.
  rt.advance(2s);
  EXPECT_EQ(rt.spawned(), 1);
  EXPECT_EQ(rt.pending_timers(), 0u);
}

TEST(AfterFuncTimer, DefaultHandleResetThrows) {
  bubble::AfterFunc handle;
  try {
    (void)handle.reset(1s);
    ADD_FAILURE() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("bubble::AfterFunc::reset"), std::string::npos);
  }
}

}  // namespace

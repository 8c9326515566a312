// Timer and Ticker stop/reset in bubbles, with exact virtual times: Go 1.23 semantics. A value
// that has fired but was not received is still pending, so stop() and reset() withdraw it and
// return true; `if (!t.stop()) t.channel().receive();` never blocks, and a reset timer delivers
// only its new expiry. These are BUBBLE_TESTs, so they hold under every explored schedule.

#include <bubble/channel.hpp>
#include <bubble/errc.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>
#include <bubble/timer.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::errc;
using bubble::Runtime;
using bubble::Ticker;
using bubble::TimePoint;
using bubble::Timer;

BUBBLE_TEST(TimerBubble, StopOfAFiredButUnreceivedTimerReturnsTrueAndWithdrawsTheValue) {
  Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Timer timer(1s, rt);
  rt.sleep_for(2s);  // The timer fired at 1s; nobody received its value.
  EXPECT_TRUE(timer.stop());
  EXPECT_EQ(timer.channel().try_receive().error(), errc::empty);
  EXPECT_FALSE(timer.stop());  // Now it is stopped.
  EXPECT_EQ(timer.channel().receive_until(rt.now() + 1h).error(), errc::timed_out);
  EXPECT_EQ(rt.now() - start, 2s + 1h);
}

// The idiom of Go's time.Timer documentation: it must return at once, whether the timer fired
// or not (no other thread receives from the channel).
BUBBLE_TEST(TimerBubble, TheStopThenDrainIdiomNeverBlocks) {
  Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Timer fired(1s, rt);
  Timer pending(1h, rt);
  rt.sleep_for(1s);
  if (!fired.stop()) (void)fired.channel().receive();
  if (!pending.stop()) (void)pending.channel().receive();
  EXPECT_EQ(rt.now() - start, 1s);
}

// The shape of Go's regression test for golang/go#69312: two timers with the same expiry; after
// receiving from one, the other has expired too but its value was not received, so stopping or
// resetting it returns true.
BUBBLE_TEST(TimerBubble, AfterReceivingFromOneOfTwoTimersDueTogetherTheOtherStopsWithTrue) {
  Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Timer first(1s, rt);
  Timer second(1s, rt);
  EXPECT_EQ(first.channel().receive().value(), start + 1s);
  EXPECT_TRUE(second.stop());
  EXPECT_EQ(second.channel().try_receive().error(), errc::empty);
}

BUBBLE_TEST(TimerBubble, AfterReceivingFromOneOfTwoTimersDueTogetherTheOtherResetsWithTrue) {
  Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Timer first(1s, rt);
  Timer second(1s, rt);
  EXPECT_EQ(first.channel().receive().value(), start + 1s);
  EXPECT_TRUE(second.reset(1s));
  EXPECT_EQ(second.channel().receive().value(), start + 2s);  // Only the new expiry.
  EXPECT_EQ(rt.now() - start, 2s);
}

BUBBLE_TEST(TimerBubble, ResetOfAFiredButUnreceivedTimerReturnsTrueAndDeliversOnlyItsNewExpiry) {
  Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Timer timer(1s, rt);
  rt.sleep_for(3s);
  EXPECT_TRUE(timer.reset(5s));
  EXPECT_EQ(timer.channel().receive().value(), start + 8s);
  EXPECT_EQ(rt.now() - start, 8s);
  EXPECT_EQ(timer.channel().try_receive().error(), errc::empty);
}

BUBBLE_TEST(TimerBubble, StopAndResetAfterTheValueWasReceivedReturnFalse) {
  Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Timer timer(1s, rt);
  EXPECT_EQ(timer.channel().receive().value(), start + 1s);
  EXPECT_FALSE(timer.stop());
  EXPECT_FALSE(timer.reset(1s));  // Stopped: re-armed, was not active.
  EXPECT_EQ(timer.channel().receive().value(), start + 2s);
  EXPECT_FALSE(timer.reset(1s));  // Received again.
  EXPECT_TRUE(timer.stop());      // Armed for 3s, not fired yet.
}

// A thread blocked in receive when the timer fires gets the value directly: it was received, so
// a later stop() returns false (and the idiom would not drain: it must not).
BUBBLE_TEST(TimerBubble, AValueHandedToAWaitingReceiverIsReceivedSoStopReturnsFalse) {
  Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Timer timer(1s, rt);
  TimePoint got{};
  TimePoint received_at{};
  {
    bubble::Thread receiver(
        "receiver",
        [&] {
          got = timer.channel().receive().value();
          received_at = rt.now();
        },
        rt);
  }
  EXPECT_EQ(got, start + 1s);
  EXPECT_EQ(received_at, start + 1s);
  EXPECT_FALSE(timer.stop());
}

// Property: a stop() that races the firing from another thread, at the firing's very instant,
// returns true whatever the schedule (nobody receives), and no value is received afterwards.
BUBBLE_TEST(TimerBubble, AStopAtTheInstantOfTheFiringReturnsTrueUnderEverySchedule) {
  Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Timer timer(1s, rt);
  bool stopped = false;
  {
    bubble::Thread stopper(
        "stopper",
        [&] {
          rt.sleep_for(1s);
          stopped = timer.stop();
        },
        rt);
    bubble::Thread other(
        "other", [&] { rt.sleep_for(1s); }, rt);
  }
  EXPECT_TRUE(stopped);
  EXPECT_EQ(rt.now() - start, 1s);
  EXPECT_EQ(timer.channel().receive_until(rt.now() + 1h).error(), errc::timed_out);
}

BUBBLE_TEST(TickerBubble, StopWithAnUndeliveredTickWithdrawsItAndEndsTheTicks) {
  Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Ticker ticker(1s, rt);
  rt.sleep_for(1500ms);  // The tick of 1s waits in the channel.
  ticker.stop();
  EXPECT_EQ(ticker.channel().receive_until(rt.now() + 10s).error(), errc::timed_out);
  EXPECT_EQ(rt.now() - start, 11500ms);
}

BUBBLE_TEST(TickerBubble, ResetWithAnUndeliveredTickDeliversOnlyTheNewGrid) {
  Runtime& rt = bubble::current_runtime();
  const TimePoint start = rt.now();
  Ticker ticker(1s, rt);
  rt.sleep_for(1500ms);
  ticker.reset(2s);
  EXPECT_EQ(ticker.channel().receive().value(), start + 3500ms);
  EXPECT_EQ(rt.now() - start, 3500ms);
  EXPECT_EQ(ticker.channel().receive().value(), start + 5500ms);
}

}  // namespace

// A park deadline that a wake-up beats is cancelled by that wake-up, even when the deadline is
// due at the same instant: a timer callback due together with it, and created first, hands the
// waiting receiver a value. The two due timers are one decision: pick 0 (always under fifo) fires
// the callback first, and the deadline, cancelled, never fires (one fired timer); pick 1 fires
// the deadline first, which makes the receiver runnable, and then the callback, whose value the
// receiver (still queued on the channel) gets all the same (two fired timers). Property: under
// fifo and 20 random seeds, the value arrives, and the run counts two fired timers exactly when
// the decision picked the deadline.
TEST(TimerBubbleRun, AWakeUpAtTheInstantOfAParkDeadlineCancelsTheDeadline) {
  std::vector<bubble::Strategy> strategies{bubble::Strategy::fifo()};
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    strategies.push_back(bubble::Strategy::random(seed));
  }
  int deadline_first_runs = 0;
  for (const bubble::Strategy& strategy : strategies) {
    const bubble::RunResult result = bubble::run({.strategy = strategy}, [&](Runtime& rt) {
      bubble::Channel<int> channel(0, rt);
      const TimePoint at = rt.now() + 1s;
      rt.schedule_at(at, [&] { (void)channel.try_send_from_callback(7); });
      EXPECT_EQ(channel.receive_until(at).value(), 7);
      EXPECT_EQ(rt.now() - (at - 1s), 1s);
    });
    ASSERT_EQ(result.schedule.decisions, 1u) << strategy.to_string();
    const bool deadline_first = !result.schedule.picks.empty() && result.schedule.picks[0] == 1;
    EXPECT_EQ(result.timers_fired, deadline_first ? 2u : 1u) << strategy.to_string();
    deadline_first_runs += deadline_first ? 1 : 0;
  }
  // Both orders were seen (fifo takes the callback first).
  EXPECT_GT(deadline_first_runs, 0);
  EXPECT_LT(deadline_first_runs, static_cast<int>(strategies.size()));
}

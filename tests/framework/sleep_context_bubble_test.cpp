// Tests, in a bubble (exact virtual times), of the sleeps a context can cut short
// (Runtime::sleep_for / sleep_until with a Context) and of bubble::after.

#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/thread.hpp>
#include <bubble/timer.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <system_error>

namespace {

using namespace std::chrono_literals;
using bubble::Context;
using bubble::errc;
using bubble::kStart;
using bubble::Runtime;
using bubble::TimePoint;

// Runs `root` under fifo and under a few random schedules: the times asserted are exact in each.
template <class F>
void in_bubbles(F root) {
  bubble::run(root);
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    bubble::run({.strategy = bubble::Strategy::random(seed)}, root);
  }
}

TEST(SleepWithContext, ACancelCutsTheSleepShortAtTheInstantOfTheCancel) {
  in_bubbles([](Runtime& rt) {
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    bubble::Thread canceller(
        "canceller",
        [&rt, cancel = cancel] {
          rt.sleep_for(2s);
          cancel();
        },
        rt);
    const std::error_code ec = rt.sleep_for(5s, ctx);
    EXPECT_EQ(ec, errc::canceled);
    EXPECT_EQ(rt.now(), kStart + 2s);
  });
}

TEST(SleepWithContext, TheFullSleepReturnsSuccessAndLeavesNoRegistration) {
  in_bubbles([](Runtime& rt) {
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    EXPECT_EQ(rt.sleep_for(5s, ctx), std::error_code{});
    EXPECT_EQ(rt.now(), kStart + 5s);
    EXPECT_EQ(ctx.registrations(), 0u);
    EXPECT_FALSE(ctx.done());
    cancel();  // Nothing is woken any more: the sleep is over.
    EXPECT_EQ(rt.now(), kStart + 5s);
  });
}

TEST(SleepWithContext, AContextDeadlineEndsTheSleepWithDeadlineExceeded) {
  in_bubbles([](Runtime& rt) {
    auto [ctx, cancel] = Context::with_timeout(Context::background(), 3s, rt);
    EXPECT_EQ(rt.sleep_until(kStart + 5s, ctx), errc::deadline_exceeded);
    EXPECT_EQ(rt.now(), kStart + 3s);
  });
}

TEST(SleepWithContext, AContextEndingAtTheWakeUpInstantStillMeansTheSleepElapsed) {
  in_bubbles([](Runtime& rt) {
    auto [ctx, cancel] = Context::with_timeout(Context::background(), 5s, rt);
    EXPECT_EQ(rt.sleep_for(5s, ctx), std::error_code{});
    EXPECT_EQ(rt.now(), kStart + 5s);
  });
}

TEST(SleepWithContext, AContextAlreadyDoneReturnsItsErrorWithoutSleeping) {
  in_bubbles([](Runtime& rt) {
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    cancel();
    EXPECT_EQ(rt.sleep_for(1h, ctx), errc::canceled);
    EXPECT_EQ(rt.sleep_until(kStart + 1h, ctx), errc::canceled);
    EXPECT_EQ(rt.now(), kStart);
    // A sleep that is already over has elapsed in full, whatever the context.
    EXPECT_EQ(rt.sleep_for(0s, ctx), std::error_code{});
    EXPECT_EQ(rt.sleep_until(kStart - 1s, ctx), std::error_code{});
  });
}

TEST(SleepWithContext, BackgroundMakesAPlainSleep) {
  in_bubbles([](Runtime& rt) {
    EXPECT_EQ(rt.sleep_for(1500ms, Context::background()), std::error_code{});
    EXPECT_EQ(rt.now(), kStart + 1500ms);
    EXPECT_EQ(bubble::sleep_until(kStart + 2s, Context::background()), std::error_code{});
    EXPECT_EQ(rt.now(), kStart + 2s);
  });
}

TEST(SleepWithContext, TheFreeFunctionsUseTheCallersBubble) {
  in_bubbles([](Runtime& rt) {
    auto [ctx, cancel] = Context::with_timeout(Context::background(), 250ms, rt);
    EXPECT_EQ(bubble::sleep_for(1s, ctx), errc::deadline_exceeded);
    EXPECT_EQ(rt.now(), kStart + 250ms);
  });
}

// A thread in such a sleep is blocked: if nothing can end it, the run deadlocks and says where.
TEST(SleepWithContext, ASleepNothingCanEndIsADeadlock) {
  try {
    bubble::run([](Runtime& rt) {
      auto [ctx, cancel] = Context::with_cancel(Context::background());
      (void)rt.sleep_for(bubble::Duration::max(), ctx);
    });
    FAIL() << "no deadlock reported";
  } catch (const bubble::DeadlockError& e) {
    EXPECT_NE(std::string(e.what()).find("sleep"), std::string::npos) << e.what();
  }
}

TEST(After, DeliversTheScheduledTimeOnce) {
  in_bubbles([](Runtime& rt) {
    bubble::After timeout = bubble::after(2s, rt);
    EXPECT_EQ(timeout.channel().try_receive().error(), errc::empty);
    rt.sleep_for(5s);  // Received late: the value is still the scheduled time.
    EXPECT_EQ(timeout.channel().try_receive().value(), kStart + 2s);
    EXPECT_EQ(timeout.channel().try_receive().error(), errc::empty);  // Only once.
    rt.sleep_for(10s);
    EXPECT_EQ(timeout.channel().try_receive().error(), errc::empty);
  });
}

TEST(After, WaitBlocksUntilTheScheduledTime) {
  in_bubbles([](Runtime& rt) {
    EXPECT_EQ(bubble::after(1500ms).wait(), kStart + 1500ms);
    EXPECT_EQ(rt.now(), kStart + 1500ms);
  });
}

TEST(After, ZeroOrNegativeDelaysDeliverNowAtOnce) {
  in_bubbles([](Runtime& rt) {
    rt.sleep_for(1s);
    EXPECT_EQ(bubble::after(0s).wait(), kStart + 1s);
    EXPECT_EQ(bubble::after(-5s).wait(), kStart + 1s);
    EXPECT_EQ(rt.now(), kStart + 1s);
  });
}

// The timeout pattern without select: wait on the After's channel with a context.
TEST(After, ItsChannelRacesAContext) {
  in_bubbles([](Runtime& rt) {
    auto [ctx, cancel] = Context::with_cancel(Context::background());
    bubble::Thread canceller(
        "canceller",
        [&rt, cancel = cancel] {
          rt.sleep_for(3s);
          cancel();
        },
        rt);
    bubble::After timeout = bubble::after(1s, rt);
    EXPECT_EQ(timeout.channel().receive(ctx).value(), kStart + 1s);
    bubble::After late = bubble::after(10s, rt);
    EXPECT_EQ(late.channel().receive(ctx).error(), errc::canceled);
    EXPECT_EQ(rt.now(), kStart + 3s);
  });
}

TEST(After, DestroyingItStopsTheTimer) {
  const bubble::RunResult r = bubble::run([](Runtime& rt) {
    { bubble::After forgotten = bubble::after(1h, rt); }
    rt.sleep_for(2h);
  });
  EXPECT_EQ(r.timers_fired, 1u);  // The sleep's deadline only.
}

TEST(After, MovesKeepTheChannel) {
  bubble::run([](Runtime& rt) {
    bubble::After a = bubble::after(1s, rt);
    bubble::Channel<TimePoint>* ch = &a.channel();
    bubble::After b = std::move(a);
    EXPECT_EQ(&b.channel(), ch);
    EXPECT_EQ(b.wait(), kStart + 1s);
  });
}

}  // namespace

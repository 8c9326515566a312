// Tests, on the system runtime, of the sleeps a context can cut short and of bubble::after.
// Nothing sleeps for real: the sleeps are cut short by another thread (which waits for the sleep
// to register on the context before cancelling), are already over, or never start.

#include <bubble/context.hpp>
#include <bubble/runtime.hpp>
#include <bubble/timer.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <system_error>
#include <thread>

namespace {

using namespace std::chrono_literals;
using bubble::Context;
using bubble::errc;

// Cancels `cancel` from another thread once something has registered on `ctx` (the sleep).
std::thread cancel_once_registered(const Context& ctx, bubble::CancelFunc cancel) {
  return std::thread([ctx, cancel] {
    while (ctx.registrations() == 0) std::this_thread::yield();
    cancel();
  });
}

TEST(SleepWithContext, AnotherThreadsCancelEndsAnHourLongSleep) {
  bubble::Runtime& rt = bubble::system_runtime();
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::thread canceller = cancel_once_registered(ctx, cancel);
  const bubble::TimePoint before = rt.now();
  EXPECT_EQ(rt.sleep_for(1h, ctx), errc::canceled);
  EXPECT_LT(rt.now(), before + 1h);
  canceller.join();
  EXPECT_EQ(ctx.registrations(), 0u);
}

TEST(SleepWithContext, SleepUntilIsCutShortToo) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::thread canceller = cancel_once_registered(ctx, cancel);
  EXPECT_EQ(bubble::sleep_until(bubble::system_runtime().now() + 1h, ctx), errc::canceled);
  canceller.join();
}

TEST(SleepWithContext, AContextAlreadyDoneReturnsAtOnce) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  cancel();
  EXPECT_EQ(bubble::sleep_for(24h, ctx), errc::canceled);
  auto [expired, unused] = Context::with_timeout(Context::background(), -1s);
  EXPECT_EQ(bubble::sleep_for(24h, expired), errc::deadline_exceeded);
}

TEST(SleepWithContext, ASleepAlreadyOverReturnsSuccess) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  bubble::Runtime& rt = bubble::system_runtime();
  EXPECT_EQ(rt.sleep_for(0s, ctx), std::error_code{});
  EXPECT_EQ(rt.sleep_until(rt.now() - 1s, ctx), std::error_code{});
  cancel();
  EXPECT_EQ(rt.sleep_for(-1s, ctx), std::error_code{});
}

TEST(After, ZeroDelayDeliversAtOnce) {
  bubble::Runtime& rt = bubble::system_runtime();
  const bubble::TimePoint before = rt.now();
  const bubble::TimePoint got = bubble::after(0s).wait();
  EXPECT_GE(got, before);
  EXPECT_LE(got, rt.now());
  const bubble::TimePoint past = bubble::after(-1h).wait();
  EXPECT_GE(past, got);
}

TEST(After, ItsChannelIsCutShortByAContextCancelledElsewhere) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  bubble::After timeout = bubble::after(1h);
  std::thread canceller = cancel_once_registered(ctx, cancel);
  EXPECT_EQ(timeout.channel().receive(ctx).error(), errc::canceled);
  canceller.join();
}

TEST(After, DestroyedBeforeItFiresDeliversNothing) {
  { bubble::After forgotten = bubble::after(1h); }
  bubble::After second = bubble::after(1h);
  EXPECT_EQ(second.channel().try_receive().error(), errc::empty);
}

}  // namespace

// Tests of bubble::signal_context and bubble::deliver_signal on the system runtime. Signals are
// sent with raise() (a handled signal: the process goes on) or the deliver_signal hook; tests wait
// on the context itself, never sleep.

#include <bubble/signal_context.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <stdexcept>

#include "../../support/error_codes.hpp"

namespace {

using bubble::Context;
using bubble::errc;
using bubble::test_support::ec;

TEST(SignalContext, ARealSignalCancelsTheContextWithCanceled) {
  const Context ctx = bubble::signal_context({SIGUSR1});
  EXPECT_FALSE(ctx.done());
  ASSERT_EQ(std::raise(SIGUSR1), 0);
  ctx.wait();
  EXPECT_EQ(ctx.err(), ec(errc::canceled));
  EXPECT_EQ(ctx.cause(), ec(errc::canceled));
}

TEST(SignalContext, SigtermAndSigintCancelInsteadOfTerminatingTheProcess) {
  const Context ctx = bubble::signal_context({SIGTERM, SIGINT});
  ASSERT_EQ(std::raise(SIGTERM), 0);
  ctx.wait();
  EXPECT_EQ(ctx.err(), ec(errc::canceled));
  const Context again = bubble::signal_context({SIGTERM, SIGINT});
  ASSERT_EQ(std::raise(SIGINT), 0);
  again.wait();
  EXPECT_TRUE(again.done());
}

TEST(SignalContext, DeliverSignalTakesTheSamePathAsARealSignal) {
  const Context ctx = bubble::signal_context({SIGUSR2});
  bubble::deliver_signal(SIGUSR2);
  ctx.wait();
  EXPECT_EQ(ctx.err(), ec(errc::canceled));
}

TEST(SignalContext, OneDeliveryCancelsEveryContextWatchingTheSignalAndNoOther) {
  const Context a = bubble::signal_context({SIGUSR1, SIGUSR2});
  const Context b = bubble::signal_context({SIGUSR2});
  const Context other = bubble::signal_context({SIGUSR1});
  bubble::deliver_signal(SIGUSR2);
  a.wait();
  b.wait();
  // The watcher handles one delivery completely (all matching contexts) before the next, and it
  // had finished with this one's matches before b ended; `other` does not watch SIGUSR2.
  EXPECT_FALSE(other.done());
  bubble::deliver_signal(SIGUSR1);
  other.wait();
}

TEST(SignalContext, ContextsCanBeUsedAsParents) {
  const Context sig = bubble::signal_context({SIGUSR1});
  auto [child, cancel] = Context::with_cancel(sig);
  ASSERT_EQ(std::raise(SIGUSR1), 0);
  child.wait();
  EXPECT_EQ(child.err(), ec(errc::canceled));
}

TEST(SignalContext, RejectsSignalsThatCannotBeHandled) {
  EXPECT_THROW(bubble::signal_context({}), std::invalid_argument);
  EXPECT_THROW(bubble::signal_context({SIGKILL}), std::invalid_argument);
  EXPECT_THROW(bubble::signal_context({SIGSTOP}), std::invalid_argument);
  EXPECT_THROW(bubble::signal_context({0}), std::invalid_argument);
  EXPECT_THROW(bubble::signal_context({-4}), std::invalid_argument);
  try {
    (void)bubble::signal_context({SIGKILL});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(SIGKILL)), std::string::npos) << e.what();
  }
  EXPECT_THROW(bubble::deliver_signal(0), std::invalid_argument);
  EXPECT_THROW(bubble::deliver_signal(100000), std::invalid_argument);
}

}  // namespace

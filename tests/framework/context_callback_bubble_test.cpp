// Context::Callback in bubbles, where every thread shares one OS thread: a callback function that
// reaches a scheduling point (spawning a thread) can be preempted while it runs, and another
// bubble thread may then destroy that very Callback. The destructor must wait until the function
// has returned; only a function that destroys its own Callback is not waited for.

#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/runtime.hpp>
#include <bubble/strategy.hpp>
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

using bubble::CancelFunc;
using bubble::Context;
using bubble::Runtime;

// What one run of the race saw.
struct RaceOutcome {
  bool running_when_removal_started = false;   // The remover found the function mid-way.
  bool running_when_removal_returned = false;  // Must never happen.
  int runs = 0;
};

// A canceller runs the callback, whose function spawns a thread (a scheduling point) in the
// middle; a remover destroys the Callback concurrently.
RaceOutcome race_cancel_against_removal(Runtime& rt) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  RaceOutcome out;
  bool running = false;
  auto cb = std::make_unique<Context::Callback>(ctx, [&] {
    running = true;
    detach(rt.spawn("spawned_by_callback", [] {}));  // Detached; other threads may run here.
    running = false;
    ++out.runs;
  });
  {
    bubble::Thread canceller(
        "canceller", [c = cancel] { c(); }, rt);
    bubble::Thread remover(
        "remover",
        [&] {
          out.running_when_removal_started = running;
          cb.reset();
          out.running_when_removal_returned = running;
        },
        rt);
  }
  return out;
}

// Property: under every schedule, destroying a Callback returns only after its function did.
BUBBLE_TEST(ContextCallbackBubble, DestroyingACallbackWhoseFunctionIsPreemptedWaitsForIt) {
  const RaceOutcome out = race_cancel_against_removal(bubble::current_runtime());
  EXPECT_FALSE(out.running_when_removal_returned);
  EXPECT_LE(out.runs, 1);
}

// The same property over explicit random and PCT schedules; some of them must reach the race
// (the remover finds the function running), or the test would prove nothing.
TEST(ContextCallbackBubble, DestroyingAPreemptedCallbackWaitsUnderRandomAndPctSchedules) {
  int raced = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    bubble::Options options;
    options.strategy =
        seed % 2 == 0 ? bubble::Strategy::random(seed) : bubble::Strategy::pct(seed, 3, 40);
    RaceOutcome out;
    bubble::run(options, [&](Runtime& rt) { out = race_cancel_against_removal(rt); });
    EXPECT_FALSE(out.running_when_removal_returned) << options.strategy.to_string();
    EXPECT_LE(out.runs, 1) << options.strategy.to_string();
    if (out.running_when_removal_started) ++raced;
  }
  EXPECT_GT(raced, 0);
}

// Property: when the bubble fails (a thread throws) while a remover is waiting for a preempted
// function, the teardown still lets the function finish before the destructor returns, and the
// run reports the failure (no std::terminate from an Unwind reaching the destructor).
TEST(ContextCallbackBubble, ARemovalWaitingWhenTheBubbleFailsWaitsAndTheRunReportsTheFailure) {
  int raced = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    bubble::Options options;
    options.strategy =
        seed % 2 == 0 ? bubble::Strategy::random(seed) : bubble::Strategy::pct(seed, 3, 40);
    bool ran = false;  // Else the remover came first and the thrower never started.
    bool running_when_removal_started = false;
    bool running_when_removal_returned = false;
    try {
      bubble::run(options, [&](Runtime& rt) {
        auto [ctx, cancel] = Context::with_cancel(Context::background());
        bool running = false;
        auto cb = std::make_unique<Context::Callback>(ctx, [&] {
          ran = running = true;
          detach(rt.spawn("thrower", [] { throw std::runtime_error("boom"); }));
          running = false;
        });
        bubble::Thread canceller(
            "canceller", [c = cancel] { c(); }, rt);
        bubble::Thread remover(
            "remover",
            [&] {
              running_when_removal_started = running;
              cb.reset();
              running_when_removal_returned = running;
            },
            rt);
      });
      EXPECT_FALSE(ran) << "the run did not fail under " << options.strategy.to_string();
    } catch (const bubble::RunFailure& e) {
      EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(running_when_removal_returned) << options.strategy.to_string();
    if (running_when_removal_started) ++raced;
  }
  EXPECT_GT(raced, 0);
}

// A function that destroys its own Callback, after being preempted, must not wait for itself.
BUBBLE_TEST(ContextCallbackBubble, AFunctionMayDestroyItsOwnCallbackAfterBeingPreempted) {
  Runtime& rt = bubble::current_runtime();
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::unique_ptr<Context::Callback> cb;
  bool ran = false;
  cb = std::make_unique<Context::Callback>(ctx, [&] {
    detach(rt.spawn("spawned_by_callback", [] {}));
    ran = true;
    cb.reset();  // Same bubble thread. Last: the captures are gone after it.
  });
  {
    bubble::Thread canceller(
        "canceller", [c = cancel] { c(); }, rt);
    bubble::Thread bystander(
        "bystander", [&] { bubble::yield(); }, rt);
  }
  EXPECT_TRUE(ran);
  EXPECT_EQ(cb, nullptr);
  EXPECT_EQ(ctx.registrations(), 0u);
}

// A child context ends from its parent's callback list; its own callbacks then run on the
// parent's canceller. Destroying one of them while it is preempted waits too.
BUBBLE_TEST(ContextCallbackBubble, DestroyingACallbackOfAChildPreemptedInTheCascadeWaitsForIt) {
  Runtime& rt = bubble::current_runtime();
  auto [parent, cancel_parent] = Context::with_cancel(Context::background());
  auto [child, cancel_child] = Context::with_cancel(parent);
  bool running = false;
  bool running_after_removal = false;
  auto cb = std::make_unique<Context::Callback>(child, [&] {
    running = true;
    detach(rt.spawn("spawned_by_callback", [] {}));
    running = false;
  });
  {
    bubble::Thread canceller(
        "canceller", [c = cancel_parent] { c(); }, rt);
    bubble::Thread remover(
        "remover",
        [&] {
          cb.reset();
          running_after_removal = running;
        },
        rt);
  }
  EXPECT_FALSE(running_after_removal);
  EXPECT_TRUE(child.done());
}

// A bubble's timer callback cannot park: destroying there a Callback whose function is running
// (preempted) on a bubble thread aborts with a message, rather than freeing a running function.
TEST(ContextCallbackBubbleDeathTest, DestroyingARunningCallbackFromATimerCallbackAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // Re-executes the test binary.
  EXPECT_DEATH(bubble::run([](Runtime& rt) {
                 auto [ctx, cancel] = Context::with_cancel(Context::background());
                 std::unique_ptr<Context::Callback> cb;
                 cb = std::make_unique<Context::Callback>(ctx, [&] {
                   (void)rt.schedule_at(rt.now(), [&] { cb.reset(); });
                   // The due timer fires at this scheduling point, while the function runs.
                   detach(rt.spawn("spawned_by_callback", [] {}));
                 });
                 bubble::Thread canceller(
                     "canceller", [c = cancel] { c(); }, rt);
               }),
               "a Context::Callback was destroyed in a timer callback of bubble.* while its "
               "function runs on a thread of that bubble");
}

}  // namespace

// The bubble's noexcept operations never allocate: Runtime::unpark (which makes a thread runnable,
// cancels its park deadline and may record a trace event) and Runtime::cancel_timer. Their
// memory is reserved beforehand (at spawn, when a timer slot is created, after each trace event);
// if they allocated, an out-of-memory there would call std::terminate.
//
// A program of its own, because counting_new.cpp replaces the global operator new to count
// allocations.

#include <bubble/bubble.hpp>
#include <bubble/notification.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include "counting_new.hpp"

#include <chrono>
#include <memory>
#include <vector>

namespace {

using bubble::test::allocations_of;
using bubble::test::AllocationScope;
using namespace std::chrono_literals;
using bubble::Runtime;

// Many threads blocked with a deadline (each park registers a timer) are woken at once:
// unpark pushes each onto the run queue (which never held them all before), cancels its park
// timer (freeing its slot) and, when tracing, records a wake event.
void wake_many(bool trace) {
  constexpr int kThreads = 300;
  std::size_t during_unparks = ~std::size_t{0};
  bubble::run({.trace = trace}, [&](Runtime& rt) {
    std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
    std::vector<std::unique_ptr<bubble::Waiter>> waiters;
    int parked = 0;
    for (int i = 0; i < kThreads; ++i) waiters.push_back(std::make_unique<bubble::Waiter>());
    for (int i = 0; i < kThreads; ++i) {
      threads.push_back(rt.spawn("t", [&rt, &parked, w = waiters[i].get()] {
        rt.prepare(*w);
        ++parked;
        (void)rt.park(*w, rt.now() + 1h, {"test::wait", 0, {}});
      }));
      // One at a time: the run queue never holds them all before the unparks below.
      while (parked < i + 1) rt.yield();
    }
    during_unparks = allocations_of(AllocationScope::this_thread, [&] {
      for (auto& w : waiters) rt.unpark(*w);
    });
    for (auto& t : threads) t->join();
  });
  EXPECT_EQ(during_unparks, 0u);
}

TEST(BubbleAllocation, UnparkNeverAllocates) {
  wake_many(false);
}

TEST(BubbleAllocation, UnparkNeverAllocatesWhenTracing) {
  wake_many(true);
}

// cancel_timer frees a slot (pushes it on the free list): reserved when the slot was created.
TEST(BubbleAllocation, CancelTimerNeverAllocates) {
  std::size_t during_cancels = ~std::size_t{0};
  bubble::run([&](Runtime& rt) {
    std::vector<bubble::TimerId> ids;
    for (int i = 0; i < 1000; ++i) ids.push_back(rt.schedule_at(rt.now() + 1h, [] {}));
    during_cancels = allocations_of(AllocationScope::this_thread, [&] {
      for (const bubble::TimerId id : ids) (void)rt.cancel_timer(id);
    });
  });
  EXPECT_EQ(during_cancels, 0u);
}

}  // namespace

namespace {

// trace_note and trace_span outside a bubble, and in a bubble without a trace, cost a test of a
// thread-local flag and do nothing: no allocation, no event.
TEST(BubbleAllocation, TraceMarkersAllocateNothingOutsideATracedBubble) {
  auto markers = [] {
    bubble::trace_note("flushed a batch of 50");
    auto span = bubble::trace_span("flush");
  };
  EXPECT_EQ(allocations_of(AllocationScope::this_thread, markers), 0u);
  std::size_t in_untraced = ~std::size_t{0};
  const bubble::RunResult r = bubble::run(
      [&](Runtime&) { in_untraced = allocations_of(AllocationScope::this_thread, markers); });
  EXPECT_EQ(in_untraced, 0u);
  EXPECT_TRUE(r.trace.empty());
}

}  // namespace

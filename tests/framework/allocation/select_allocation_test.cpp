// bubble::select allocates nothing per call, for a handful of cases: its bookkeeping (one waiter
// per case, the shared claim, the lock order, the cases' report entries) is on the caller's stack,
// and a context case's Context::Callback keeps its small function in place. Measured on both
// runtimes, for a select that proceeds at once and for one that blocks and is woken.
//
// A program of its own, because counting_new.cpp replaces the global operator new to count
// allocations.

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/select.hpp>

#include <gtest/gtest.h>

#include "counting_new.hpp"

namespace {

using bubble::Channel;
using bubble::Context;
using bubble::recv;
using bubble::send;
using bubble::test::allocations_of;
using bubble::test::AllocationScope;

// Four cases, one of each kind, proceeding at once (a buffered value) and after blocking (woken
// by a send from another thread of the same runtime).
void select_rounds(bubble::Runtime& rt, std::size_t& ready_allocs, std::size_t& blocking_allocs) {
  Channel<int> in(1, rt);
  Channel<int> out(0, rt);
  Channel<int> woken(0, rt);
  // Not a structured binding: clang 14 cannot capture one in a lambda.
  const auto cancellable = Context::with_cancel(Context::background());
  const Context& ctx = cancellable.first;
  auto ready = [&] {
    for (int i = 0; i < 100; ++i) {
      ASSERT_FALSE(in.try_send(i));
      auto s = bubble::select(send(out, i), recv(in), bubble::done(ctx), recv(woken));
      ASSERT_EQ(s.index(), 1u);
    }
  };
  ready();  // Warm-up.
  ready_allocs = allocations_of(AllocationScope::all_threads, ready);

  auto helper_body = [&] {
    for (int i = 0; i < 101; ++i) {
      while (woken.waiting_receivers() == 0) rt.yield();
      ASSERT_FALSE(woken.send(i));
    }
  };
  auto blocking = [&](int rounds) {
    for (int i = 0; i < rounds; ++i) {
      auto s = bubble::select(send(out, i), recv(in), bubble::done(ctx), recv(woken));
      ASSERT_EQ(s.index(), 3u);
    }
  };
  auto helper = rt.spawn("helper", helper_body);  // Spawning allocates: before counting.
  blocking(1);                                    // Warm-up.
  blocking_allocs = allocations_of(AllocationScope::all_threads, [&] { blocking(100); });
  helper->join();
}

TEST(SelectAllocation, ASelectAllocatesNothingInABubble) {
  std::size_t ready = 99;
  std::size_t blocking = 99;
  bubble::run([&](bubble::Runtime& rt) { select_rounds(rt, ready, blocking); });
  EXPECT_EQ(ready, 0u);
  EXPECT_EQ(blocking, 0u);
}

TEST(SelectAllocation, ASelectAllocatesNothingOnTheSystemRuntime) {
  std::size_t ready = 99;
  std::size_t blocking = 99;
  select_rounds(bubble::system_runtime(), ready, blocking);
  EXPECT_EQ(ready, 0u);
  EXPECT_EQ(blocking, 0u);
}

}  // namespace

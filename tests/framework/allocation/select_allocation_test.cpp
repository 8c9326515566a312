// bubble::select allocates nothing per call, for a handful of cases: its bookkeeping (one waiter
// per case, the shared claim, the lock order, the cases' report entries) is on the caller's stack,
// and a context case's Context::Callback keeps its small function in place. Measured on both
// runtimes, for a select that proceeds at once and for one that blocks and is woken.
//
// A program of its own, because it replaces the global operator new to count allocations.

#include <bubble/bubble.hpp>
#include <bubble/channel.hpp>
#include <bubble/context.hpp>
#include <bubble/select.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  return ::operator new(size);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

namespace {

using bubble::Channel;
using bubble::Context;
using bubble::recv;
using bubble::send;

// Counts the allocations `fn` makes (on every thread, while it runs).
template <class F>
std::size_t allocations_of(F&& fn) {
  g_allocations = 0;
  g_counting = true;
  fn();
  g_counting = false;
  return g_allocations.load();
}

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
  ready_allocs = allocations_of(ready);

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
  blocking_allocs = allocations_of([&] { blocking(100); });
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

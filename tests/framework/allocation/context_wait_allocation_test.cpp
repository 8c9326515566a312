// A blocking call that takes a Context and is ended by it allocates nothing on the waiting
// thread: the registration on the context (detail::EndWaitOnDone) lives on the waiter's stack
// and its callback captures one pointer, which std::function stores in place. Checked for every
// primitive whose waits take a context, on the system runtime (one waiting thread, which counts
// its own allocations, and the test's thread, which cancels once the waiter is queued).
//
// A program of its own, because counting_new.cpp replaces the global operator new to count
// allocations.

#include <bubble/channel.hpp>
#include <bubble/cond_var.hpp>
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/mutex.hpp>
#include <bubble/notification.hpp>
#include <bubble/semaphore.hpp>
#include <bubble/weighted_semaphore.hpp>

#include <gtest/gtest.h>

#include "counting_new.hpp"

#include <atomic>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace {

using bubble::CancelFunc;
using bubble::Context;
using bubble::test::allocations_of;
using bubble::test::AllocationScope;

struct Outcome {
  std::size_t allocations = ~std::size_t{0};
  std::error_code result;
};

// Runs `wait(ctx)` twice on one new thread, cancelling ctx each time once `queued()` says the
// thread waits. The first round is a warm-up (the thread's first park sets up its parker); the
// second is counted.
template <class Wait, class Queued>
Outcome cancelled_wait(Wait wait, Queued queued) {
  std::vector<std::pair<Context, CancelFunc>> contexts;
  for (int i = 0; i < 2; ++i) contexts.push_back(Context::with_cancel(Context::background()));
  std::atomic<int> rounds_done{0};
  Outcome out;
  std::thread waiter([&] {
    for (int round = 0; round < 2; ++round) {
      const Context& ctx = contexts[round].first;
      std::error_code ec;
      const std::size_t allocations =
          allocations_of(AllocationScope::this_thread, [&] { ec = wait(ctx); });
      if (round == 1) out = {allocations, ec};
      rounds_done.store(round + 1, std::memory_order_release);
    }
  });
  for (int round = 0; round < 2; ++round) {
    while (!queued()) std::this_thread::yield();
    contexts[round].second();
    while (rounds_done.load(std::memory_order_acquire) <= round) std::this_thread::yield();
  }
  waiter.join();
  return out;
}

void expect_canceled_without_allocating(const Outcome& out) {
  EXPECT_EQ(out.result, bubble::errc::canceled);
  EXPECT_EQ(out.allocations, 0u);
}

TEST(ContextWaitAllocation, ChannelReceive) {
  bubble::Channel<int> ch(0, bubble::system_runtime());
  expect_canceled_without_allocating(cancelled_wait(
      [&](const Context& ctx) {
        bubble::Result<int> r = ch.receive(ctx);
        return r ? std::error_code{} : r.error();
      },
      [&] { return ch.waiting_receivers() == 1; }));
}

TEST(ContextWaitAllocation, ChannelSend) {
  bubble::Channel<int> ch(0, bubble::system_runtime());
  expect_canceled_without_allocating(
      cancelled_wait([&](const Context& ctx) { return ch.send(1, ctx); },
                     [&] { return ch.waiting_senders() == 1; }));
}

TEST(ContextWaitAllocation, SemaphoreAcquire) {
  bubble::Semaphore sem(0, bubble::system_runtime());
  expect_canceled_without_allocating(cancelled_wait(
      [&](const Context& ctx) { return sem.acquire(ctx); }, [&] { return sem.waiters() == 1; }));
}

TEST(ContextWaitAllocation, WeightedSemaphoreAcquire) {
  bubble::WeightedSemaphore sem(1, bubble::system_runtime());
  ASSERT_TRUE(sem.try_acquire(1));
  expect_canceled_without_allocating(cancelled_wait(
      [&](const Context& ctx) { return sem.acquire(ctx, 1); }, [&] { return sem.waiters() == 1; }));
  sem.release(1);
}

TEST(ContextWaitAllocation, NotificationWait) {
  bubble::Notification n(bubble::system_runtime());
  expect_canceled_without_allocating(cancelled_wait([&](const Context& ctx) { return n.wait(ctx); },
                                                    [&] { return n.waiters() == 1; }));
}

TEST(ContextWaitAllocation, CondVarWait) {
  bubble::Mutex mu(bubble::system_runtime());
  bubble::CondVar cv(bubble::system_runtime());
  expect_canceled_without_allocating(cancelled_wait(
      [&](const Context& ctx) {
        std::unique_lock lock(mu);
        return cv.wait(lock, ctx);
      },
      [&] { return cv.waiters() == 1; }));
}

}  // namespace

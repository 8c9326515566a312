// bubble::Semaphore on the system runtime, with real threads. Threads are sequenced with the
// test-only waiters() accessor; nothing sleeps, and timeouts are checked as lower bounds only.

#include <bubble/context.hpp>
#include <bubble/latch.hpp>
#include <bubble/semaphore.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../../support/spin_until.hpp"

namespace {

using namespace std::chrono_literals;
using bubble::test_support::spin_until;

TEST(Semaphore, NegativeInitialCountThrowsNamingTheValue) {
  try {
    bubble::Semaphore sem(-3);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "bubble::Semaphore: initial count must be >= 0, got -3");
  }
}

TEST(Semaphore, NeverAdmitsMoreThanItsPermits) {
  bubble::Semaphore sem(2);
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  bubble::Latch start(1);
  {
    std::vector<bubble::Thread> threads;
    for (int t = 0; t < 6; ++t) {
      threads.emplace_back("user", [&] {
        start.wait();
        for (int i = 0; i < 300; ++i) {
          sem.acquire();
          const int now = ++inside;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          --inside;
          sem.release();
        }
      });
    }
    start.count_down();
  }
  EXPECT_LE(most.load(), 2);
  EXPECT_GE(most.load(), 1);
  EXPECT_EQ(sem.available(), 2);
}

TEST(Semaphore, TryAcquireTakesOnlyAvailablePermits) {
  bubble::Semaphore sem(1);
  EXPECT_TRUE(sem.try_acquire());
  EXPECT_FALSE(sem.try_acquire());
  EXPECT_EQ(sem.available(), 0);
  sem.release();
  EXPECT_EQ(sem.available(), 1);
  EXPECT_TRUE(sem.try_acquire());
}

TEST(Semaphore, ReleasesHandPermitsToWaitersInFifoOrder) {
  bubble::Semaphore sem(0);
  std::mutex mu;
  std::vector<int> order;
  std::vector<bubble::Thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back("waiter-" + std::to_string(i), [&, i] {
      sem.acquire();
      std::lock_guard lock(mu);
      order.push_back(i);
    });
    spin_until([&] { return sem.waiters() == static_cast<std::size_t>(i + 1); });
  }
  for (std::size_t n = 1; n <= 3; ++n) {
    sem.release();
    spin_until([&] {
      std::lock_guard lock(mu);
      return order.size() == n;
    });
  }
  threads.clear();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

TEST(Semaphore, APermitReleasedToAWaiterCannotBeTakenByANewcomer) {
  bubble::Semaphore sem(0);
  bubble::Thread waiter("waiter", [&] { sem.acquire(); });
  spin_until([&] { return sem.waiters() == 1; });
  sem.release();
  // Handed to the waiter, whether or not it has run yet.
  EXPECT_FALSE(sem.try_acquire());
  EXPECT_EQ(sem.available(), 0);
  waiter.join();
}

TEST(Semaphore, ReleaseOfSeveralPermitsWakesSeveralWaiters) {
  bubble::Semaphore sem(0);
  {
    std::vector<bubble::Thread> threads;
    for (int i = 0; i < 3; ++i) threads.emplace_back("waiter", [&] { sem.acquire(); });
    spin_until([&] { return sem.waiters() == 3; });
    sem.release(5);
    EXPECT_EQ(sem.waiters(), 0u);
    EXPECT_EQ(sem.available(), 2);
    // A release that woke too few leaves waiters behind: free them one permit at a time, so that
    // the failure above is reported instead of the joins below waiting forever.
    while (sem.waiters() > 0) sem.release();
  }
  EXPECT_EQ(sem.available(), 2);
}

TEST(Semaphore, TryAcquireForTimesOutNoEarlierThanTheTimeout) {
  bubble::Runtime& rt = bubble::system_runtime();
  bubble::Semaphore sem(0);
  const bubble::TimePoint start = rt.now();
  EXPECT_FALSE(sem.try_acquire_for(20ms));
  EXPECT_GE(rt.now() - start, 20ms);
  EXPECT_EQ(sem.waiters(), 0u);
  EXPECT_EQ(sem.available(), 0);
}

TEST(Semaphore, TryAcquireUntilAPastDeadlineStillTakesAnAvailablePermit) {
  bubble::Runtime& rt = bubble::system_runtime();
  bubble::Semaphore sem(1);
  EXPECT_TRUE(sem.try_acquire_until(rt.now() - 1s));
  EXPECT_FALSE(sem.try_acquire_until(rt.now() - 1s));
}

TEST(Semaphore, TimedAcquireSucceedsWhenReleasedInTime) {
  bubble::Semaphore sem(0);
  bool got = false;
  bubble::Thread waiter("waiter", [&] { got = sem.try_acquire_for(1h); });
  spin_until([&] { return sem.waiters() == 1; });
  sem.release();
  waiter.join();
  EXPECT_TRUE(got);
  EXPECT_EQ(sem.available(), 0);
}

TEST(Semaphore, ContextCancelWakesTheWaiterWithCanceledAndTakesNothing) {
  bubble::Semaphore sem(0);
  auto [ctx, cancel] = bubble::Context::with_cancel(bubble::Context::background());
  std::error_code ec;
  bubble::Thread waiter("waiter", [&, ctx = ctx] { ec = sem.acquire(ctx); });
  spin_until([&] { return sem.waiters() == 1; });
  cancel();
  waiter.join();
  EXPECT_EQ(ec, bubble::errc::canceled);
  EXPECT_EQ(sem.waiters(), 0u);
  sem.release();
  EXPECT_EQ(sem.available(), 1) << "the cancelled waiter must not have taken the permit";
}

TEST(Semaphore, ContextDeadlineEndsTheWaitWithDeadlineExceeded) {
  bubble::Semaphore sem(0);
  auto [ctx, cancel] = bubble::Context::with_timeout(bubble::Context::background(), 10ms);
  EXPECT_EQ(sem.acquire(ctx), bubble::errc::deadline_exceeded);
}

TEST(Semaphore, AlreadyCancelledContextFailsEvenWithAPermitAvailable) {
  bubble::Semaphore sem(1);
  auto [ctx, cancel] = bubble::Context::with_cancel(bubble::Context::background());
  cancel();
  EXPECT_EQ(sem.acquire(ctx), bubble::errc::canceled);
  EXPECT_EQ(sem.available(), 1);
  EXPECT_FALSE(sem.acquire(bubble::Context::background()));
  EXPECT_EQ(sem.available(), 0);
}

TEST(Semaphore, NegativeReleaseThrowsNamingTheValue) {
  bubble::Semaphore sem(0);
  try {
    sem.release(-2);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("-2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sem.available(), 0);
}

}  // namespace

// bubble::WeightedSemaphore on the system runtime, with real threads: the semantics of
// golang.org/x/sync/semaphore (and its tests, adapted). Threads are sequenced with the test-only
// waiters() accessor; nothing sleeps.

#include <bubble/context.hpp>
#include <bubble/latch.hpp>
#include <bubble/thread.hpp>
#include <bubble/weighted_semaphore.hpp>

#include <gtest/gtest.h>

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
using bubble::Context;
using bubble::test_support::spin_until;

TEST(WeightedSemaphore, NegativeSizeThrowsNamingTheValue) {
  try {
    bubble::WeightedSemaphore sem(-1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "bubble::WeightedSemaphore: size must be >= 0, got -1");
  }
}

TEST(WeightedSemaphore, AcquireBiggerThanTheSizeThrowsNamingBoth) {
  bubble::WeightedSemaphore sem(3);
  try {
    (void)sem.acquire(Context::background(), 5);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "bubble::WeightedSemaphore::acquire: weight 5 exceeds the size 3 and could never "
                 "be acquired");
  }
  EXPECT_THROW((void)sem.try_acquire(4), std::invalid_argument);
  EXPECT_THROW((void)sem.acquire(Context::background(), -1), std::invalid_argument);
  EXPECT_EQ(sem.in_use(), 0);
}

TEST(WeightedSemaphore, ReleasingMoreThanHeldThrowsNamingBothAndChangesNothing) {
  bubble::WeightedSemaphore sem(10);
  ASSERT_FALSE(sem.acquire(Context::background(), 3));
  try {
    sem.release(5);
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(),
                 "bubble::WeightedSemaphore::release: released more than held: release(5) with 3 "
                 "in use");
  }
  EXPECT_EQ(sem.in_use(), 3);
  EXPECT_THROW(sem.release(-1), std::invalid_argument);
  sem.release(3);
  EXPECT_EQ(sem.in_use(), 0);
}

// Go's TestWeightedTryAcquire.
TEST(WeightedSemaphore, TryAcquireSucceedsOnlyWhenTheWeightFits) {
  bubble::WeightedSemaphore sem(2);
  std::vector<bool> tries;
  ASSERT_FALSE(sem.acquire(Context::background(), 1));
  tries.push_back(sem.try_acquire(1));
  tries.push_back(sem.try_acquire(1));
  sem.release(2);
  tries.push_back(sem.try_acquire(1));
  ASSERT_FALSE(sem.acquire(Context::background(), 1));
  tries.push_back(sem.try_acquire(1));
  EXPECT_EQ(tries, (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(sem.in_use(), 2);
}

TEST(WeightedSemaphore, ALargeWaiterIsNotOvertakenBySmallerOnes) {
  bubble::WeightedSemaphore sem(4);
  ASSERT_FALSE(sem.acquire(Context::background(), 3));  // 1 unit free.
  std::mutex mu;
  std::vector<std::string> order;
  bubble::Thread large("large", [&] {
    ASSERT_FALSE(sem.acquire(Context::background(), 4));
    {
      std::lock_guard lock(mu);
      order.push_back("large");
    }
    sem.release(4);
  });
  spin_until([&] { return sem.waiters() == 1; });
  // One unit is free, but the large waiter is first in line.
  EXPECT_FALSE(sem.try_acquire(1));
  bubble::Thread small("small", [&] {
    ASSERT_FALSE(sem.acquire(Context::background(), 1));
    {
      std::lock_guard lock(mu);
      order.push_back("small");
    }
    sem.release(1);
  });
  spin_until([&] { return sem.waiters() == 2; });
  EXPECT_EQ(sem.in_use(), 3);
  sem.release(3);
  large.join();
  small.join();
  EXPECT_EQ(order, (std::vector<std::string>{"large", "small"}));
  EXPECT_EQ(sem.in_use(), 0);
}

// Go's TestAllocCancelDoesntStarve: a large waiter that gives up at the head of the queue lets
// the smaller waiters behind it proceed.
TEST(WeightedSemaphore, AHeadWaiterGivingUpLetsTheWaitersBehindItThrough) {
  bubble::WeightedSemaphore sem(10);
  ASSERT_FALSE(sem.acquire(Context::background(), 1));
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  std::error_code large_result;
  bubble::Thread large("large", [&, ctx = ctx] { large_result = sem.acquire(ctx, 10); });
  spin_until([&] { return sem.waiters() == 1; });
  std::error_code small_result = bubble::errc::closed;
  bubble::Thread small("small", [&] { small_result = sem.acquire(Context::background(), 1); });
  spin_until([&] { return sem.waiters() == 2; });
  cancel();
  large.join();
  small.join();  // Would hang if the cancellation did not wake the small waiter.
  EXPECT_EQ(large_result, bubble::errc::canceled);
  EXPECT_FALSE(small_result) << small_result.message();
  EXPECT_EQ(sem.in_use(), 2);
  EXPECT_EQ(sem.waiters(), 0u);
}

TEST(WeightedSemaphore, ContextDeadlineEndsTheWaitWithDeadlineExceeded) {
  bubble::WeightedSemaphore sem(2);
  ASSERT_FALSE(sem.acquire(Context::background(), 2));
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 10ms);
  EXPECT_EQ(sem.acquire(ctx, 1), bubble::errc::deadline_exceeded);
  EXPECT_EQ(sem.in_use(), 2);
  EXPECT_EQ(sem.waiters(), 0u);
}

TEST(WeightedSemaphore, AnEndedContextFailsEvenWhenTheUnitsAreFree) {
  bubble::WeightedSemaphore sem(2);
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  cancel();
  EXPECT_EQ(sem.acquire(ctx, 1), bubble::errc::canceled);
  EXPECT_EQ(sem.in_use(), 0);
}

TEST(WeightedSemaphore, ZeroWeightSucceedsAtOnceWithoutWaiters) {
  bubble::WeightedSemaphore sem(1);
  ASSERT_FALSE(sem.acquire(Context::background(), 1));
  EXPECT_FALSE(sem.acquire(Context::background(), 0));
  EXPECT_TRUE(sem.try_acquire(0));
  EXPECT_EQ(sem.in_use(), 1);
}

// Property (Go's TestWeighted, adapted): threads acquiring weights 1..n concurrently never hold
// more than the size in total, and everything is given back at the end.
TEST(WeightedSemaphore, NeverHandsOutMoreThanItsSize) {
  constexpr std::int64_t kSize = 4;
  bubble::WeightedSemaphore sem(kSize);
  std::atomic<std::int64_t> held{0};
  std::atomic<bool> over{false};
  bubble::Latch start(1);
  {
    std::vector<bubble::Thread> threads;
    for (std::int64_t weight = 1; weight <= kSize; ++weight) {
      threads.emplace_back("weight-" + std::to_string(weight), [&, weight] {
        start.wait();
        for (int i = 0; i < 200; ++i) {
          ASSERT_FALSE(sem.acquire(Context::background(), weight));
          if (held.fetch_add(weight) + weight > kSize) over = true;
          held.fetch_sub(weight);
          sem.release(weight);
        }
      });
    }
    start.count_down();
  }
  EXPECT_FALSE(over.load());
  EXPECT_EQ(sem.in_use(), 0);
}

}  // namespace

// bubble::Mutex on the system runtime, with real threads. Threads are sequenced with the
// primitives' own signals and the test-only waiters() accessor; nothing sleeps.

#include <bubble/latch.hpp>
#include <bubble/mutex.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../../support/spin_until.hpp"

namespace {

using bubble::test_support::spin_until;

TEST(Mutex, ExcludesMutuallyUnderContention) {
  bubble::Mutex mu;
  long counter = 0;  // Not atomic: only the mutex protects it (ThreadSanitizer checks).
  constexpr int kThreads = 4;
  constexpr int kIterations = 5000;
  bubble::Latch start(1);
  {
    std::vector<bubble::Thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back("incrementer-" + std::to_string(t), [&] {
        start.wait();
        for (int i = 0; i < kIterations; ++i) {
          std::lock_guard lock(mu);
          ++counter;
        }
      });
    }
    start.count_down();
  }
  EXPECT_EQ(counter, long{kThreads} * kIterations);
  EXPECT_EQ(mu.waiters(), 0u);
}

TEST(Mutex, TryLockFailsWhileHeldAndSucceedsWhenFree) {
  bubble::Mutex mu;
  mu.lock();
  bool while_held = true;
  bubble::Thread("trier", [&] { while_held = mu.try_lock(); }).join();
  EXPECT_FALSE(while_held);
  mu.unlock();
  bool when_free = false;
  bubble::Thread("trier", [&] {
    when_free = mu.try_lock();
    if (when_free) mu.unlock();
  }).join();
  EXPECT_TRUE(when_free);
}

TEST(Mutex, UnlockByAThreadThatDoesNotHoldItThrows) {
  bubble::Mutex mu;
  mu.lock();
  std::string message;
  bubble::Thread("intruder", [&] {
    try {
      mu.unlock();
    } catch (const std::logic_error& e) {
      message = e.what();
    }
  }).join();
  EXPECT_NE(message.find("does not hold it"), std::string::npos) << message;
  // Still held by this thread: the failed unlock changed nothing.
  bool stolen = true;
  bubble::Thread("trier", [&] { stolen = mu.try_lock(); }).join();
  EXPECT_FALSE(stolen);
  mu.unlock();
}

TEST(Mutex, UnlockOfAnUnlockedMutexThrows) {
  bubble::Mutex mu;
  try {
    mu.unlock();
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("not locked"), std::string::npos) << e.what();
  }
}

TEST(Mutex, WakesWaitersInFifoOrder) {
  bubble::Mutex mu;
  std::vector<int> order;  // Guarded by mu.
  mu.lock();
  std::vector<bubble::Thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back("waiter-" + std::to_string(i), [&, i] {
      std::lock_guard lock(mu);
      order.push_back(i);
    });
    // Thread i is queued before thread i + 1 starts.
    spin_until([&] { return mu.waiters() == static_cast<std::size_t>(i + 1); });
  }
  mu.unlock();
  threads.clear();  // Joins.
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

// Property: a thread that relocks in a tight loop cannot starve a waiter (Go's
// TestMutexFairness). Without starvation mode the looping thread would win every race against the
// woken waiter, which needs a context switch; with it, the waiter gets the mutex once it has
// waited 10 ms. Merely finishing is success (a starved waiter would hang the test).
TEST(Mutex, AWaiterIsNotStarvedByAThreadThatRelocksInALoop) {
  bubble::Mutex mu;
  std::atomic<bool> waiter_got_it{false};
  mu.lock();
  bubble::Thread waiter("waiter", [&] {
    std::lock_guard lock(mu);
    waiter_got_it = true;
  });
  spin_until([&] { return mu.waiters() == 1; });
  mu.unlock();
  while (!waiter_got_it.load()) {
    std::lock_guard lock(mu);
  }
  waiter.join();
  EXPECT_TRUE(waiter_got_it.load());
}

TEST(Mutex, WorksWithStdScopedLock) {
  bubble::Mutex a;
  bubble::Mutex b;
  int shared = 0;
  {
    std::vector<bubble::Thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back("locker", [&, t] {
        for (int i = 0; i < 500; ++i) {
          if (t == 0) {
            std::scoped_lock lock(a, b);
            ++shared;
          } else {
            std::scoped_lock lock(b, a);
            ++shared;
          }
        }
      });
    }
  }
  EXPECT_EQ(shared, 1000);
}

TEST(Mutex, ObjectIdsAreDistinct) {
  bubble::Mutex a;
  bubble::Mutex b;
  EXPECT_NE(a.id(), b.id());
  EXPECT_EQ(&a.runtime(), &bubble::system_runtime());
}

}  // namespace

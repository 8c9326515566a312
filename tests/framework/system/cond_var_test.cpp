// bubble::CondVar on the system runtime, with real threads. Threads are sequenced with the
// test-only waiters() accessors; nothing sleeps, and timeouts are checked as lower bounds only.

#include <bubble/cond_var.hpp>
#include <bubble/context.hpp>
#include <bubble/mutex.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

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

TEST(CondVar, WaitReturnsOnlyAfterANotify) {
  // Property: wait(lock) never returns before a notify (no spurious wakeups). The flag is set
  // under the mutex just before the notify, so a waiter that returned without one would see it
  // false.
  for (int round = 0; round < 100; ++round) {
    bubble::Mutex mu;
    bubble::CondVar cv;
    bool notified = false;
    bool seen = false;
    bubble::Thread waiter("waiter", [&] {
      std::unique_lock lock(mu);
      cv.wait(lock);
      seen = notified;
      EXPECT_TRUE(lock.owns_lock());
    });
    spin_until([&] { return cv.waiters() == 1; });
    {
      std::lock_guard lock(mu);
      notified = true;
    }
    cv.notify_one();
    waiter.join();
    ASSERT_TRUE(seen) << "round " << round;
  }
}

TEST(CondVar, NotifyOneWakesWaitersInFifoOrder) {
  bubble::Mutex mu;
  bubble::CondVar cv;
  std::vector<int> woken;  // Guarded by mu.
  std::vector<bubble::Thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back("waiter-" + std::to_string(i), [&, i] {
      std::unique_lock lock(mu);
      cv.wait(lock);
      woken.push_back(i);
    });
    spin_until([&] { return cv.waiters() == static_cast<std::size_t>(i + 1); });
  }
  for (std::size_t n = 1; n <= 3; ++n) {
    cv.notify_one();
    // At least n: a notify_one that woke more than one fails the check below instead of
    // spinning forever.
    spin_until([&] {
      std::lock_guard lock(mu);
      return woken.size() >= n;
    });
    std::lock_guard lock(mu);
    EXPECT_EQ(woken.size(), n) << "notify_one woke more than one waiter";
  }
  threads.clear();
  EXPECT_EQ(woken, (std::vector<int>{0, 1, 2}));
}

TEST(CondVar, NotifyAllWakesEveryWaiter) {
  bubble::Mutex mu;
  bubble::CondVar cv;
  int woken = 0;
  {
    std::vector<bubble::Thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back("waiter", [&] {
        std::unique_lock lock(mu);
        cv.wait(lock);
        ++woken;
      });
    }
    spin_until([&] { return cv.waiters() == 4; });
    cv.notify_all();
    EXPECT_EQ(cv.waiters(), 0u);
  }
  EXPECT_EQ(woken, 4);
}

TEST(CondVar, NotifyWithoutWaitersIsNotRemembered) {
  bubble::Mutex mu;
  bubble::CondVar cv;
  cv.notify_one();
  cv.notify_all();
  std::unique_lock lock(mu);
  EXPECT_EQ(cv.wait_for(lock, 1ms), std::cv_status::timeout);
}

TEST(CondVar, WaitUntilTimesOutNoEarlierThanTheDeadlineAndRelocks) {
  bubble::Runtime& rt = bubble::system_runtime();
  bubble::Mutex mu;
  bubble::CondVar cv;
  std::unique_lock lock(mu);
  const bubble::TimePoint deadline = rt.now() + 20ms;
  EXPECT_EQ(cv.wait_until(lock, deadline), std::cv_status::timeout);
  EXPECT_GE(rt.now(), deadline);
  EXPECT_TRUE(lock.owns_lock());
  bool stolen = true;
  bubble::Thread("trier", [&] { stolen = mu.try_lock(); }).join();
  EXPECT_FALSE(stolen) << "wait_until must re-acquire the mutex before returning";
  EXPECT_EQ(cv.waiters(), 0u);
}

TEST(CondVar, WaitForWithAPredicateReportsItsValue) {
  bubble::Runtime& rt = bubble::system_runtime();
  bubble::Mutex mu;
  bubble::CondVar cv;
  bool ready = false;
  std::unique_lock lock(mu);
  const bubble::TimePoint start = rt.now();
  EXPECT_FALSE(cv.wait_for(lock, 10ms, [&] { return ready; }));
  EXPECT_GE(rt.now() - start, 10ms);

  bubble::Thread setter("setter", [&] {
    std::lock_guard inner(mu);
    ready = true;
    cv.notify_all();
  });
  EXPECT_TRUE(cv.wait_for(lock, 1h, [&] { return ready; }));
  lock.unlock();
  setter.join();
}

TEST(CondVar, ContextCancelWakesTheWaiterWithCanceled) {
  bubble::Mutex mu;
  bubble::CondVar cv;
  auto [ctx, cancel] = bubble::Context::with_cancel(bubble::Context::background());
  std::error_code ec;
  bool relocked = false;
  bubble::Thread waiter("waiter", [&, ctx = ctx] {
    std::unique_lock lock(mu);
    ec = cv.wait(lock, ctx);
    relocked = lock.owns_lock();
  });
  spin_until([&] { return cv.waiters() == 1; });
  cancel();
  waiter.join();
  EXPECT_EQ(ec, bubble::errc::canceled);
  EXPECT_TRUE(relocked);
  EXPECT_EQ(cv.waiters(), 0u);
}

TEST(CondVar, ContextWaitReturnsEmptyWhenNotified) {
  bubble::Mutex mu;
  bubble::CondVar cv;
  auto [ctx, cancel] = bubble::Context::with_cancel(bubble::Context::background());
  std::error_code ec = bubble::errc::closed;
  bubble::Thread waiter("waiter", [&, ctx = ctx] {
    std::unique_lock lock(mu);
    ec = cv.wait(lock, ctx);
  });
  spin_until([&] { return cv.waiters() == 1; });
  cv.notify_one();
  waiter.join();
  cancel();  // After the wait: changes nothing.
  EXPECT_FALSE(ec) << ec.message();
}

TEST(CondVar, ContextDeadlineEndsTheWaitWithDeadlineExceeded) {
  bubble::Mutex mu;
  bubble::CondVar cv;
  auto [ctx, cancel] = bubble::Context::with_timeout(bubble::Context::background(), 10ms);
  std::unique_lock lock(mu);
  EXPECT_EQ(cv.wait(lock, ctx), bubble::errc::deadline_exceeded);
  EXPECT_TRUE(lock.owns_lock());
}

TEST(CondVar, AlreadyCancelledContextReturnsAtOnce) {
  bubble::Mutex mu;
  bubble::CondVar cv;
  auto [ctx, cancel] = bubble::Context::with_cancel(bubble::Context::background());
  cancel();
  std::unique_lock lock(mu);
  EXPECT_EQ(cv.wait(lock, ctx), bubble::errc::canceled);
  EXPECT_TRUE(lock.owns_lock());
}

TEST(CondVar, WaitWithoutOwningTheLockThrows) {
  bubble::Mutex mu;
  bubble::CondVar cv;
  std::unique_lock lock(mu, std::defer_lock);
  EXPECT_THROW(cv.wait(lock), std::logic_error);
  EXPECT_EQ(cv.waiters(), 0u);
}

}  // namespace

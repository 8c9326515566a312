// bubble::Notification on the system runtime, with real threads. Threads are sequenced with the
// test-only waiters() accessor; nothing sleeps, and timeouts are checked as lower bounds only.

#include <bubble/context.hpp>
#include <bubble/notification.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "../../support/spin_until.hpp"

namespace {

using namespace std::chrono_literals;
using bubble::test_support::spin_until;

TEST(Notification, StartsUnnotifiedAndNotifyIsIdempotent) {
  bubble::Notification n;
  EXPECT_FALSE(n.has_been_notified());
  n.notify();
  EXPECT_TRUE(n.has_been_notified());
  n.notify();
  EXPECT_TRUE(n.has_been_notified());
  n.wait();  // Returns at once.
  EXPECT_TRUE(n.wait_for(0ms));
}

TEST(Notification, NotifyWakesEveryWaiterAndPublishesPriorWrites) {
  bubble::Notification n;
  int payload = 0;  // Written before notify, read after wait: ThreadSanitizer checks the order.
  int sum = 0;
  std::vector<int> seen(3, -1);
  {
    std::vector<bubble::Thread> threads;
    for (int i = 0; i < 3; ++i) {
      threads.emplace_back("waiter", [&, i] {
        n.wait();
        seen[static_cast<std::size_t>(i)] = payload;
      });
    }
    spin_until([&] { return n.waiters() == 3; });
    payload = 7;
    n.notify();
  }
  for (int v : seen) sum += v;
  EXPECT_EQ(sum, 21);
  EXPECT_EQ(n.waiters(), 0u);
}

TEST(Notification, WaitForTimesOutNoEarlierThanTheTimeout) {
  bubble::Runtime& rt = bubble::system_runtime();
  bubble::Notification n;
  const bubble::TimePoint start = rt.now();
  EXPECT_FALSE(n.wait_for(15ms));
  EXPECT_GE(rt.now() - start, 15ms);
  EXPECT_FALSE(n.wait_until(rt.now() - 1s));
  EXPECT_EQ(n.waiters(), 0u);
}

TEST(Notification, TimedWaitReturnsTrueWhenNotifiedInTime) {
  bubble::Notification n;
  bool result = false;
  bubble::Thread waiter("waiter", [&] { result = n.wait_for(1h); });
  spin_until([&] { return n.waiters() == 1; });
  n.notify();
  waiter.join();
  EXPECT_TRUE(result);
}

TEST(Notification, ContextCancelWakesTheWaiterWithCanceled) {
  bubble::Notification n;
  auto [ctx, cancel] = bubble::Context::with_cancel(bubble::Context::background());
  std::error_code ec;
  bubble::Thread waiter("waiter", [&, ctx = ctx] { ec = n.wait(ctx); });
  spin_until([&] { return n.waiters() == 1; });
  cancel();
  waiter.join();
  EXPECT_EQ(ec, bubble::errc::canceled);
  EXPECT_FALSE(n.has_been_notified());
}

TEST(Notification, ContextWaitPrefersAnEarlierNotification) {
  bubble::Notification n;
  auto [ctx, cancel] = bubble::Context::with_cancel(bubble::Context::background());
  n.notify();
  cancel();
  EXPECT_FALSE(n.wait(ctx));
  bubble::Notification other;
  EXPECT_EQ(other.wait(ctx), bubble::errc::canceled);
}

TEST(Notification, ContextDeadlineEndsTheWaitWithDeadlineExceeded) {
  bubble::Notification n;
  auto [ctx, cancel] = bubble::Context::with_timeout(bubble::Context::background(), 10ms);
  EXPECT_EQ(n.wait(ctx), bubble::errc::deadline_exceeded);
}

}  // namespace

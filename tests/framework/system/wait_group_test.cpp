// bubble::WaitGroup on the system runtime, with real threads. Threads are sequenced with the
// test-only waiters() accessor; nothing sleeps.

#include <bubble/thread.hpp>
#include <bubble/wait_group.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../../support/spin_until.hpp"

namespace {

using bubble::test_support::spin_until;

TEST(WaitGroup, WaitReturnsAtOnceWhenTheCounterIsZero) {
  bubble::WaitGroup wg;
  EXPECT_EQ(wg.count(), 0);
  wg.wait();
}

TEST(WaitGroup, WaitReturnsAfterEveryTaskIsDoneAndSeesTheirWrites) {
  bubble::WaitGroup wg;
  std::vector<int> results(4, 0);  // Plain ints: ThreadSanitizer checks the happens-before.
  std::vector<bubble::Thread> threads;
  wg.add(4);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back("task", [&, i] {
      results[static_cast<std::size_t>(i)] = i + 1;
      wg.done();
    });
  }
  wg.wait();
  EXPECT_EQ(results, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(wg.count(), 0);
}

TEST(WaitGroup, WaiterStaysBlockedUntilTheLastDone) {
  bubble::WaitGroup wg;
  wg.add(3);
  std::atomic<bool> returned{false};
  bubble::Thread waiter("waiter", [&] {
    wg.wait();
    returned = true;
  });
  spin_until([&] { return wg.waiters() == 1; });
  wg.done();
  wg.done();
  EXPECT_EQ(wg.count(), 1);
  EXPECT_EQ(wg.waiters(), 1u);  // Still blocked: it can only leave the queue when woken.
  EXPECT_FALSE(returned.load());
  wg.done();
  waiter.join();
  EXPECT_TRUE(returned.load());
}

TEST(WaitGroup, NegativeCounterThrowsNamingTheValuesAndChangesNothing) {
  bubble::WaitGroup wg;
  wg.add(1);
  try {
    wg.add(-2);
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "bubble::WaitGroup: negative counter: add(-2) with counter 1");
  }
  EXPECT_EQ(wg.count(), 1);
  wg.done();
  EXPECT_THROW(wg.done(), std::logic_error);
  EXPECT_EQ(wg.count(), 0);
}

TEST(WaitGroup, CanBeReusedAfterReachingZero) {
  bubble::WaitGroup wg;
  for (int round = 0; round < 3; ++round) {
    int value = 0;
    wg.add(1);
    bubble::Thread task("task", [&] {
      value = round + 1;
      wg.done();
    });
    wg.wait();
    EXPECT_EQ(value, round + 1);
  }
}

}  // namespace

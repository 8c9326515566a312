// bubble::Latch on the system runtime, with real threads. Threads are sequenced with the
// test-only waiters() accessor; nothing sleeps.

#include <bubble/latch.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../../support/spin_until.hpp"

namespace {

using bubble::test_support::spin_until;

TEST(Latch, NegativeCountThrowsNamingTheValue) {
  try {
    bubble::Latch latch(-4);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "bubble::Latch: count must be >= 0, got -4");
  }
}

TEST(Latch, ZeroCountIsOpenAtOnce) {
  bubble::Latch latch(0);
  EXPECT_TRUE(latch.try_wait());
  latch.wait();
}

TEST(Latch, WaitersStayBlockedUntilTheCountReachesZero) {
  bubble::Latch latch(2);
  std::atomic<int> returned{0};
  std::vector<bubble::Thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back("waiter", [&] {
      latch.wait();
      ++returned;
    });
  }
  spin_until([&] { return latch.waiters() == 2; });
  latch.count_down();
  EXPECT_FALSE(latch.try_wait());
  EXPECT_EQ(latch.count(), 1);
  EXPECT_EQ(latch.waiters(), 2u);
  EXPECT_EQ(returned.load(), 0);
  latch.count_down();
  threads.clear();
  EXPECT_EQ(returned.load(), 2);
  EXPECT_TRUE(latch.try_wait());
}

TEST(Latch, CountingDownMoreThanRemainsThrowsNamingTheValues) {
  bubble::Latch latch(2);
  try {
    latch.count_down(3);
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "bubble::Latch::count_down: n = 3 exceeds the remaining count 2");
  }
  EXPECT_EQ(latch.count(), 2);
  EXPECT_THROW(latch.count_down(-1), std::invalid_argument);
  latch.count_down(2);
  EXPECT_TRUE(latch.try_wait());
}

TEST(Latch, ArriveAndWaitReleasesEveryoneTogether) {
  // Property: no thread passes arrive_and_wait before all have arrived.
  constexpr int kThreads = 4;
  bubble::Latch latch(kThreads);
  std::atomic<int> arrived{0};
  std::atomic<bool> early{false};
  {
    std::vector<bubble::Thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back("party", [&] {
        ++arrived;
        latch.arrive_and_wait();
        if (arrived.load() != kThreads) early = true;
      });
    }
  }
  EXPECT_FALSE(early.load());
  EXPECT_EQ(latch.count(), 0);
}

}  // namespace

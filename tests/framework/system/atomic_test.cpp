// bubble::Atomic on real threads: the operations of std::atomic with the same results, and
// concurrent read-modify-writes that lose nothing (label `system`: ThreadSanitizer runs it in CI).

#include <bubble/atomic.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

using bubble::Atomic;

TEST(AtomicSystem, OperationsReturnWhatStdAtomicReturns) {
  Atomic<int> a(5);
  std::atomic<int> s(5);
  EXPECT_EQ(a.load(), s.load());
  EXPECT_EQ(a.exchange(7), s.exchange(7));
  EXPECT_EQ(a.fetch_add(3), s.fetch_add(3));
  EXPECT_EQ(a.fetch_sub(1, std::memory_order_relaxed), s.fetch_sub(1, std::memory_order_relaxed));
  EXPECT_EQ(a.fetch_and(12), s.fetch_and(12));
  EXPECT_EQ(a.fetch_or(3), s.fetch_or(3));
  EXPECT_EQ(a.fetch_xor(5), s.fetch_xor(5));
  EXPECT_EQ(++a, ++s);
  EXPECT_EQ(a++, s++);
  EXPECT_EQ(--a, --s);
  EXPECT_EQ(a += 10, s += 10);
  EXPECT_EQ(a -= 4, s -= 4);
  EXPECT_EQ(a &= 6, s &= 6);
  EXPECT_EQ(a |= 9, s |= 9);
  EXPECT_EQ(a ^= 1, s ^= 1);
  int expected_a = 0;
  int expected_s = 0;
  EXPECT_EQ(a.compare_exchange_strong(expected_a, 1), s.compare_exchange_strong(expected_s, 1));
  EXPECT_EQ(expected_a, expected_s);  // The failed exchange reported the value it found.
  EXPECT_TRUE(a.compare_exchange_strong(expected_a, 42, std::memory_order_acq_rel,
                                        std::memory_order_acquire));
  EXPECT_EQ(a.unsync_load(), 42);
  a = 3;
  EXPECT_EQ(static_cast<int>(a), 3);
  EXPECT_EQ(sizeof(Atomic<std::uint64_t>), sizeof(std::atomic<std::uint64_t>));
}

TEST(AtomicSystem, PointersAndFloatingPointHaveTheirArithmetic) {
  int values[4] = {10, 20, 30, 40};
  Atomic<int*> p(values);
  EXPECT_EQ(p.fetch_add(2), values);
  EXPECT_EQ(*p.load(), 30);
  EXPECT_EQ(--p, values + 1);
  Atomic<double> d(1.5);
  EXPECT_EQ(d.fetch_add(2.0), 1.5);
  EXPECT_EQ(d.load(), 3.5);
  Atomic<bool> b(false);
  EXPECT_FALSE(b.exchange(true));
  EXPECT_TRUE(b.load());
}

// Property: concurrent fetch_adds of four threads lose no increment.
TEST(AtomicSystem, ConcurrentFetchAddsLoseNothing) {
  Atomic<long> counter(0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20'000; ++i) counter.fetch_add(1, std::memory_order_relaxed);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter.load(), 80'000);
}

// wait() returns once another thread has changed the value and notified.
TEST(AtomicSystem, WaitReturnsAfterAStoreAndANotify) {
  Atomic<int> flag(0);
  std::thread setter([&] {
    flag.store(1, std::memory_order_release);
    flag.notify_one();
  });
  flag.wait(0, std::memory_order_acquire);
  EXPECT_EQ(flag.load(), 1);
  setter.join();
}

}  // namespace

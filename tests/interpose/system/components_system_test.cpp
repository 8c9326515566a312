// The standard-library components on real threads, with bubble::interpose linked but inactive
// (no bubble): every call is the real one. Label `system`: run under ThreadSanitizer in CI.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/interpose.hpp>

#include "components/bounded_queue.hpp"
#include "components/timer_service.hpp"

namespace {

using namespace std::chrono_literals;

TEST(InterposeInactive, BoundedQueueMovesEveryItemBetweenRealThreadsInOrderPerProducer) {
  EXPECT_FALSE(bubble::interpose::active());
  constexpr int kPerProducer = 20'000;
  components::BoundedQueue<std::uint64_t> queue(4);
  std::vector<std::thread> producers;
  for (std::uint64_t p = 0; p < 2; ++p) {
    producers.emplace_back([&queue, p] {
      for (std::uint64_t i = 0; i < kPerProducer; ++i) queue.push(p << 32 | i);
    });
  }
  std::vector<std::uint64_t> next(2, 0);
  for (int n = 0; n < 2 * kPerProducer; ++n) {
    const std::uint64_t v = queue.pop();
    const std::uint64_t p = v >> 32;
    ASSERT_LT(p, 2u);
    ASSERT_EQ(v & 0xffffffff, next[p]) << "producer " << p;  // FIFO per producer.
    ++next[p];
  }
  for (auto& t : producers) t.join();
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_EQ(queue.pop_for(0ns), std::nullopt);
}

TEST(InterposeInactive, TimerServiceRunsDueTasksInDeadlineOrderOnItsRealThread) {
  std::mutex mutex;
  std::condition_variable done;
  std::vector<int> ran;
  std::thread::id worker;
  {
    components::TimerService timers;
    // Deadlines already due (no real waiting): they run in scheduling order.
    for (int i = 0; i < 5; ++i) {
      timers.schedule(0ns, [&, i] {
        std::lock_guard lock(mutex);
        ran.push_back(i);
        worker = std::this_thread::get_id();
        done.notify_one();
      });
    }
    std::unique_lock lock(mutex);
    done.wait(lock, [&] { return ran.size() == 5; });
  }
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_NE(worker, std::this_thread::get_id());
}

// With a zero interval every slot is already due, so sleep_for gets a non-positive duration and
// returns at once: nothing sleeps for real. Every acquire of every thread returns, and the
// limiter's slots (taken under its std::mutex) are handed out without a race (ThreadSanitizer).
TEST(InterposeInactive, IntervalLimiterWithAZeroIntervalLetsEveryRealThreadThroughAtOnce) {
  components::IntervalLimiter limiter(0ns);
  std::atomic<int> through{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int n = 0; n < 1'000; ++n) {
        limiter.acquire();
        through.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(through.load(), 4'000);
}

TEST(InterposeInactive, MutexesAndRecursiveMutexesExcludeRealThreads) {
  std::mutex m;
  std::recursive_mutex rm;
  std::int64_t counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10'000; ++i) {
        std::lock_guard outer(rm);
        std::lock_guard inner(rm);
        std::lock_guard lock(m);
        ++counter;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, 40'000);
}

}  // namespace

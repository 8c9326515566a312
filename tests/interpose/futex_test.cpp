// The standard library's futex-based waits in an intercepting bubble: std::atomic wait/notify,
// std::counting_semaphore, std::latch, std::barrier, std::future (libstdc++ 12 blocks in
// syscall(SYS_futex) for all of them).

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <future>
#include <latch>
#include <mutex>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>

#include "intercepted_run.hpp"

#if defined(BUBBLE_ASAN)
#include <sanitizer/lsan_interface.h>
#endif

namespace {

using namespace std::chrono_literals;
using std::chrono::nanoseconds;
using std::chrono::steady_clock;

TEST(InterposeFutex, AtomicWaitBlocksUntilANotifyInVirtualTime) {
  run_std([] {
    std::atomic<int> value{0};
    const auto t0 = steady_clock::now();
    std::thread setter([&] {
      std::this_thread::sleep_for(30ms);
      value.store(1);
      value.notify_one();
    });
    value.wait(0);
    EXPECT_EQ(steady_clock::now() - t0, 30ms);
    EXPECT_EQ(value.load(), 1);
    setter.join();
  });
}

TEST(InterposeFutex, AWaitThatNobodyNotifiesIsReportedAsADeadlockOnAFutexWord) {
#if defined(BUBBLE_ASAN)
  // The teardown abandons the thread blocked in the futex wait (a noexcept system call): what
  // its stack owns leaks, by design.
  __lsan::ScopedDisabler abandoned_threads_leak;
#endif
  try {
    run_std([] {
      std::atomic<int> value{0};
      std::thread waiter([&] { value.wait(0); });
      waiter.join();
    });
    FAIL() << "run() returned";
  } catch (const bubble::DeadlockError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("\"std::thread\": blocked on CondVar::wait \"futex word\" (object #"),
              std::string::npos)
        << message;
  }
}

// Property: under every schedule, a notify that follows the store is never lost, however the
// waiter's check and its futex wait interleave with the setter (random schedules preempt at the
// scheduling points inside the futex wait).
TEST(InterposeFutex, AtomicWaitNeverMissesANotifyUnderRandomSchedules) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    bubble::Options options;
    options.strategy = bubble::Strategy::random(seed);
    EXPECT_NO_THROW(run_std(
        [] {
          std::atomic<int> value{0};
          std::thread setter([&] {
            value.store(1);
            value.notify_all();
          });
          value.wait(0);
          setter.join();
        },
        options))
        << "seed " << seed;
  }
}

TEST(InterposeFutex, CountingSemaphoreAcquiresAndTimesOutAtExactInstants) {
  std::vector<nanoseconds> acquired;
  std::mutex acquired_lock;  // The takers append.
  run_std([&] {
    std::counting_semaphore<4> slots(0);
    const auto t0 = steady_clock::now();
    EXPECT_FALSE(slots.try_acquire_for(25ms));
    EXPECT_EQ(steady_clock::now() - t0, 25ms);
    std::vector<std::thread> takers;
    for (int i = 0; i < 2; ++i) {
      takers.emplace_back([&] {
        slots.acquire();
        std::lock_guard lock(acquired_lock);
        acquired.push_back(steady_clock::now() - t0);
      });
    }
    std::this_thread::sleep_for(75ms);  // 100 ms after the start
    slots.release();
    std::this_thread::sleep_for(100ms);
    slots.release();
    for (auto& t : takers) t.join();
  });
  EXPECT_EQ(acquired, (std::vector<nanoseconds>{100ms, 200ms}));
}

TEST(InterposeFutex, LatchAndBarrierReleaseTheirThreadsWhenTheLastArrives) {
  run_std([] {
    const auto t0 = steady_clock::now();
    std::latch done(3);
    std::barrier sync(3);
    std::vector<nanoseconds> past_barrier(3);
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i) {
      threads.emplace_back([&, i] {
        std::this_thread::sleep_for((i + 1) * 10ms);
        sync.arrive_and_wait();
        past_barrier[i] = steady_clock::now() - t0;
        done.count_down();
      });
    }
    done.wait();
    EXPECT_EQ(steady_clock::now() - t0, 30ms);
    EXPECT_EQ(past_barrier, (std::vector<nanoseconds>{30ms, 30ms, 30ms}));
    for (auto& t : threads) t.join();
  });
}

TEST(InterposeFutex, AsyncFutureWaitsForItsResultInVirtualTime) {
  run_std([] {
    const auto t0 = steady_clock::now();
    auto answer = std::async(std::launch::async, [] {
      std::this_thread::sleep_for(2s);
      return 42;
    });
    EXPECT_EQ(answer.wait_for(500ms), std::future_status::timeout);
    EXPECT_EQ(steady_clock::now() - t0, 500ms);
    EXPECT_EQ(answer.get(), 42);
    EXPECT_EQ(steady_clock::now() - t0, 2s);
  });
}

}  // namespace

// std::mutex, std::recursive_mutex, std::timed_mutex and std::condition_variable in an
// intercepting bubble are bubble primitives: blocked is durably blocked, time jumps, deadlocks
// are reported.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <stdexcept>
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
using std::chrono::steady_clock;

TEST(InterposeSync, AMutexHeldAcrossASleepSerializesThreadsInVirtualTime) {
  std::vector<std::chrono::nanoseconds> done;
  const auto result = run_std([&] {
    const auto t0 = steady_clock::now();
    std::mutex m;
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i) {
      threads.emplace_back([&] {
        std::lock_guard lock(m);
        std::this_thread::sleep_for(10ms);
        done.push_back(steady_clock::now() - t0);
      });
    }
    for (auto& t : threads) t.join();
  });
  EXPECT_EQ(done, (std::vector<std::chrono::nanoseconds>{10ms, 20ms, 30ms}));
  EXPECT_EQ(result.elapsed, 30ms);
}

// The teardown unwinds the two threads although pthread_mutex_lock is noexcept: the lock they
// wait for fails with EDEADLK, std::mutex::lock throws std::system_error, and their frames unwind
// (under AddressSanitizer, LeakSanitizer checks that nothing they owned is left).
TEST(InterposeSync, TwoMutexesTakenInOppositeOrdersAreReportedAsADeadlock) {
  try {
    run_std([] {
      std::mutex a;
      std::mutex b;
      std::thread t1([&] {
        std::lock_guard la(a);
        std::this_thread::sleep_for(1ms);
        std::lock_guard lb(b);
      });
      std::thread t2([&] {
        std::lock_guard lb(b);
        std::this_thread::sleep_for(1ms);
        std::lock_guard la(a);
      });
      t1.join();
      t2.join();
    });
    FAIL() << "run() returned";
  } catch (const bubble::DeadlockError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("at 2000-01-01T00:00:00.001Z"), std::string::npos) << message;
    EXPECT_NE(message.find("\"std::thread\": blocked on Mutex::lock"), std::string::npos)
        << message;
    // Two different mutexes, one per thread: the std::mutex objects of the test, named for what
    // the interposer stands in for.
    EXPECT_NE(
        message.find("\"std::thread\": blocked on Mutex::lock \"pthread_mutex_t\" (object #4)"),
        std::string::npos)
        << message;
    EXPECT_NE(
        message.find("\"std::thread\": blocked on Mutex::lock \"pthread_mutex_t\" (object #1)"),
        std::string::npos)
        << message;
    EXPECT_EQ(message.find("abandoned"), std::string::npos) << message;
  }
}

// A timed locker waits on the condition variable of the mutex's timed waiters, and a failure
// report names it so.
TEST(InterposeSync, ATimedLockerIsReportedWaitingForTheMutexsTimedRelease) {
#if defined(BUBBLE_ASAN)
  // The teardown abandons the threads blocked in noexcept pthread calls: their stacks leak.
  __lsan::ScopedDisabler abandoned_threads_leak;
#endif
  try {
    run_std([] {
      std::timed_mutex m;
      m.lock();
      std::thread locker([&] {
        if (m.try_lock_for(1h)) m.unlock();
      });
      std::thread failing([] {
        std::this_thread::sleep_for(1ms);
        throw std::runtime_error("gave up");
      });
      failing.join();
      locker.join();
      m.unlock();
    });
    FAIL() << "run() returned";
  } catch (const bubble::RunFailure& e) {
    const std::string message = e.what();
    EXPECT_NE(
        message.find("\"std::thread\": blocked on CondVar::wait_until \"pthread_mutex_t timed\""),
        std::string::npos)
        << message;
  }
}

TEST(InterposeSync, ConditionVariableWaitsTimeOutAtExactVirtualInstants) {
  run_std([] {
    std::mutex m;
    std::condition_variable cv;
    std::unique_lock lock(m);
    const auto t0 = steady_clock::now();
    EXPECT_EQ(cv.wait_for(lock, 250ms), std::cv_status::timeout);
    EXPECT_EQ(steady_clock::now() - t0, 250ms);
    EXPECT_EQ(cv.wait_until(lock, t0 + 1s), std::cv_status::timeout);
    EXPECT_EQ(steady_clock::now() - t0, 1s);
    const auto wall0 = std::chrono::system_clock::now();
    EXPECT_EQ(cv.wait_until(lock, wall0 + 2s), std::cv_status::timeout);  // timedwait, realtime
    EXPECT_EQ(steady_clock::now() - t0, 3s);
    EXPECT_TRUE(lock.owns_lock());
  });
}

TEST(InterposeSync, ANotifyWakesAWaiterAtTheNotifiersInstant) {
  run_std([] {
    std::mutex m;
    std::condition_variable cv;
    bool ready = false;
    const auto t0 = steady_clock::now();
    std::thread notifier([&] {
      std::this_thread::sleep_for(70ms);
      {
        std::lock_guard lock(m);
        ready = true;
      }
      cv.notify_one();
    });
    std::unique_lock lock(m);
    EXPECT_TRUE(cv.wait_for(lock, 1h, [&] { return ready; }));
    EXPECT_EQ(steady_clock::now() - t0, 70ms);
    lock.unlock();
    notifier.join();
  });
}

TEST(InterposeSync, NotifyAllWakesEveryWaiter) {
  run_std([] {
    std::mutex m;
    std::condition_variable cv;
    bool go = false;
    int woken = 0;
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&] {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return go; });
        ++woken;
      });
    }
    std::this_thread::sleep_for(1ms);
    {
      std::lock_guard lock(m);
      go = true;
    }
    cv.notify_all();
    for (auto& t : threads) t.join();
    EXPECT_EQ(woken, 4);
  });
}

// condition_variable_any is built in libstdc++ on an internal std::mutex and
// std::condition_variable, so it is intercepted through them.
TEST(InterposeSync, ConditionVariableAnyWaitsAndTimesOutInVirtualTime) {
  run_std([] {
    std::recursive_mutex m;
    std::condition_variable_any cv;
    bool ready = false;
    std::unique_lock lock(m);
    const auto t0 = steady_clock::now();
    EXPECT_FALSE(cv.wait_for(lock, 40ms, [&] { return ready; }));
    EXPECT_EQ(steady_clock::now() - t0, 40ms);
    std::thread notifier([&] {
      std::this_thread::sleep_for(5ms);
      std::lock_guard inner(m);
      ready = true;
      cv.notify_all();
    });
    cv.wait(lock, [&] { return ready; });
    EXPECT_EQ(steady_clock::now() - t0, 45ms);
    lock.unlock();
    notifier.join();
  });
}

TEST(InterposeSync, RecursiveMutexCountsItsOwnersLocks) {
  run_std([] {
    std::recursive_mutex m;
    m.lock();
    m.lock();
    EXPECT_TRUE(m.try_lock());
    bool other_got_it = true;
    std::thread t([&] { other_got_it = m.try_lock(); });
    t.join();
    EXPECT_FALSE(other_got_it);
    m.unlock();
    m.unlock();
    m.unlock();
    std::thread t2([&] {
      other_got_it = m.try_lock();
      if (other_got_it) m.unlock();
    });
    t2.join();
    EXPECT_TRUE(other_got_it);
  });
}

TEST(InterposeSync, TimedMutexTryLockForGivesUpAtTheDeadlineOrTakesItOnRelease) {
  run_std([] {
    std::timed_mutex m;
    const auto t0 = steady_clock::now();
    std::thread holder([&] {
      std::lock_guard lock(m);
      std::this_thread::sleep_for(100ms);
    });
    std::this_thread::sleep_for(1ms);
    EXPECT_FALSE(m.try_lock_for(30ms));  // clocklock on steady_clock
    EXPECT_EQ(steady_clock::now() - t0, 31ms);
    EXPECT_TRUE(m.try_lock_until(std::chrono::system_clock::now() + 1s));  // timedlock
    EXPECT_EQ(steady_clock::now() - t0, 100ms);                            // the holder's unlock
    m.unlock();
    holder.join();
  });
}

TEST(InterposeSync, ErrorCheckingMutexReportsRelockAndForeignUnlock) {
  run_std([] {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_t m;
    pthread_mutex_init(&m, &attr);
    EXPECT_EQ(pthread_mutex_lock(&m), 0);
    EXPECT_EQ(pthread_mutex_lock(&m), EDEADLK);
    int foreign = 0;
    std::thread t([&] { foreign = pthread_mutex_unlock(&m); });
    t.join();
    EXPECT_EQ(foreign, EPERM);
    EXPECT_EQ(pthread_mutex_unlock(&m), 0);
    EXPECT_EQ(pthread_mutex_destroy(&m), 0);
    pthread_mutexattr_destroy(&attr);
  });
}

TEST(InterposeSync, ACondVarWithAMonotonicClockAttributeTimesOutOnTheSteadyClock) {
  run_std([] {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_t c;
    pthread_cond_init(&c, &attr);
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&m);
    timespec abs{};
    clock_gettime(CLOCK_MONOTONIC, &abs);
    abs.tv_sec += 5;
    EXPECT_EQ(pthread_cond_timedwait(&c, &m, &abs), ETIMEDOUT);
    EXPECT_EQ(steady_clock::now().time_since_epoch(), bubble::kStart.time_since_epoch() + 5s);
    pthread_mutex_unlock(&m);
    pthread_cond_destroy(&c);
    pthread_condattr_destroy(&attr);
  });
}

// POSIX leaves it undefined; glibc would unlock. Here the unlock is refused and the owner keeps
// the mutex, so the bubble's own Mutex never sees a foreign unlock.
TEST(InterposeSync, UnlockingANormalMutexOneDoesNotHoldReturnsEpermAndChangesNothing) {
  run_std([] {
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    ASSERT_EQ(pthread_mutex_lock(&m), 0);
    int foreign = 0;
    int foreign_try = 0;
    std::thread t([&] {
      foreign = pthread_mutex_unlock(&m);
      foreign_try = pthread_mutex_trylock(&m);
    });
    t.join();
    EXPECT_EQ(foreign, EPERM);
    EXPECT_EQ(foreign_try, EBUSY);
    EXPECT_EQ(pthread_mutex_unlock(&m), 0);
  });
}

// A std::mutex is never destroyed through pthread, so a side-table entry can outlive it; a
// recursive mutex constructed later at the same address must behave as one.
TEST(InterposeSync, AMutexMadeWhereAnotherOnceWasTakesTheNewKind) {
  run_std([] {
    alignas(std::recursive_mutex) unsigned char storage[sizeof(std::recursive_mutex)];
    auto* plain = new (storage) std::mutex;
    plain->lock();
    plain->unlock();
    plain->~mutex();
    auto* recursive = new (storage) std::recursive_mutex;
    recursive->lock();
    EXPECT_TRUE(recursive->try_lock());
    recursive->unlock();
    recursive->unlock();
    recursive->~recursive_mutex();
  });
}

}  // namespace

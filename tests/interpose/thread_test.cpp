// std::thread and std::jthread in an intercepting bubble are bubble threads.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/interpose.hpp>

#include "intercepted_run.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::steady_clock;

TEST(InterposeThread, StdThreadsAreBubbleThreadsThatSleepInVirtualTime) {
  std::vector<std::chrono::nanoseconds> woke(3);
  std::atomic<bool> active_inside{false};  // Written by three threads.
  const auto result = run_std([&] {
    const auto t0 = steady_clock::now();
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i) {
      threads.emplace_back([&, i] {
        active_inside = bubble::interpose::active();
        std::this_thread::sleep_for((3 - i) * 100ms);
        woke[i] = steady_clock::now() - t0;
      });
    }
    for (auto& t : threads) t.join();
  });
  EXPECT_TRUE(active_inside);
  EXPECT_EQ(woke, (std::vector<std::chrono::nanoseconds>{300ms, 200ms, 100ms}));
  EXPECT_EQ(result.threads, 4u);  // the root and the three std::threads
  EXPECT_EQ(result.elapsed, 300ms);
}

TEST(InterposeThread, ThreadIdsAreDistinctAndStable) {
  run_std([] {
    std::thread::id inside;
    std::thread t([&] { inside = std::this_thread::get_id(); });
    const std::thread::id handle_id = t.get_id();
    t.join();
    EXPECT_EQ(inside, handle_id);
    EXPECT_NE(inside, std::this_thread::get_id());
    EXPECT_EQ(std::this_thread::get_id(), std::this_thread::get_id());
    EXPECT_NE(std::this_thread::get_id(), std::thread::id{});
  });
}

TEST(InterposeThread, JoiningTwiceOrJoiningItselfFailsAsPosixSays) {
  run_std([] {
    pthread_t self = pthread_self();
    EXPECT_EQ(pthread_join(self, nullptr), EDEADLK);
    std::thread t([] {});
    pthread_t handle = t.native_handle();
    t.join();
    EXPECT_EQ(pthread_join(handle, nullptr), EINVAL);
    EXPECT_EQ(pthread_detach(handle), EINVAL);
  });
}

TEST(InterposeThread, PthreadJoinReturnsTheStartRoutinesResult) {
  run_std([] {
    static int value = 7;
    pthread_t t{};
    ASSERT_EQ(pthread_create(
                  &t, nullptr, [](void*) -> void* { return &value; }, nullptr),
              0);
    void* result = nullptr;
    ASSERT_EQ(pthread_join(t, &result), 0);
    EXPECT_EQ(result, &value);
  });
}

// A detached thread is still a thread of the run: run() returns only once it has exited. Like
// every bubble thread, it must be done (or still runnable) when the root returns, since time stops
// then.
TEST(InterposeThread, ADetachedThreadStillCountsTowardTheEndOfTheRun) {
  bool finished = false;
  const auto result = run_std([&] {
    std::mutex m;
    std::condition_variable cv;
    bool started = false;
    std::thread([&] {
      {
        std::lock_guard lock(m);
        started = true;
      }
      cv.notify_one();
      std::this_thread::yield();
      finished = true;  // after the root has returned (fifo runs the root first)
    }).detach();
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return started; });
  });
  EXPECT_TRUE(finished);
  EXPECT_EQ(result.threads, 2u);
}

TEST(InterposeThread, ADetachedThreadSleepingWhenTheRootReturnsIsReported) {
  try {
    run_std([] { std::thread([] { std::this_thread::sleep_for(1s); }).detach(); });
    FAIL() << "run() returned";
  } catch (const bubble::DeadlockError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("root has returned but blocked threads remain"), std::string::npos)
        << message;
    EXPECT_NE(message.find("\"std::thread\": blocked on sleep"), std::string::npos) << message;
  }
}

TEST(InterposeThread, AThreadCreatedDetachedCannotBeJoinedAndStillRunsToItsEnd) {
  bool ran = false;
  run_std([&] {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t{};
    ASSERT_EQ(pthread_create(
                  &t, &attr,
                  [](void* flag) -> void* {
                    *static_cast<bool*>(flag) = true;
                    return nullptr;
                  },
                  &ran),
              0);
    pthread_attr_destroy(&attr);
    EXPECT_EQ(pthread_join(t, nullptr), EINVAL);
  });
  EXPECT_TRUE(ran);
}

TEST(InterposeThread, JthreadStopsAndJoinsOnDestruction) {
  int ticks = 0;
  const auto result = run_std([&] {
    std::jthread worker([&](std::stop_token stop) {
      while (!stop.stop_requested()) {
        std::this_thread::sleep_for(10ms);
        ++ticks;
      }
    });
    std::this_thread::sleep_for(35ms);
  });  // ~jthread: request_stop, join (the worker ends its 40 ms sleep first)
  EXPECT_EQ(ticks, 4);
  EXPECT_EQ(result.elapsed, 40ms);
}

TEST(InterposeThread, AnExceptionEscapingAStdThreadFailsTheRun) {
  EXPECT_THROW(run_std([] {
                 std::thread t([] { throw std::out_of_range("worker gave up"); });
                 t.join();
               }),
               bubble::RunFailure);
}

}  // namespace

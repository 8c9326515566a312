// Threads from before the bubble: a library's global thread pool, started by a static initializer
// (so before main and before any bubble), shares its std::mutex and std::condition_variable with
// code that runs in a bubble. Those threads are real and outside the bubble, which can neither
// order its threads with them nor wake them: a bubble thread that notifies a condition variable
// they wait on, or locks a mutex one of them holds, fails the run with a report that names the
// object and both threads (before, the notification was lost and the run passed).

#include <pthread.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>

namespace {

// The library's pool: one worker that runs submitted jobs, as real code writes it.
class GlobalPool {
 public:
  GlobalPool() : worker_([this] { loop(); }) {}
  ~GlobalPool() {
    {
      std::lock_guard lock(m_);
      stop_ = true;
    }
    work_.notify_all();
    worker_.join();
  }
  void submit(std::function<void()> job) {
    {
      std::lock_guard lock(m_);
      jobs_.push_back(std::move(job));
    }
    work_.notify_one();
  }
  // Returns once the worker waits for work on `work_` (a real wait: outside any bubble).
  void wait_until_idle() {
    std::unique_lock lock(m_);
    idle_changed_.wait(lock, [&] { return idle_ && jobs_.empty(); });
  }

 private:
  void loop() {
    pthread_setname_np(pthread_self(), "global-pool");
    std::unique_lock lock(m_);
    for (;;) {
      idle_ = true;
      idle_changed_.notify_all();  // Received once `work_.wait` has released m_.
      work_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      idle_ = false;
      if (stop_) return;
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  std::mutex m_;
  std::condition_variable work_;
  std::condition_variable idle_changed_;
  std::deque<std::function<void()>> jobs_;
  bool idle_ = false;
  bool stop_ = false;
  std::thread worker_;
};

GlobalPool g_pool;  // Started by the static initializer.
std::mutex g_config;
int g_jobs_run = 0;

std::string failure_of(std::function<void()> body) {
  try {
    bubble::run({.intercept_std = true}, [&](bubble::Runtime&) { body(); });
  } catch (const bubble::RunFailure& failure) {
    return failure.what();
  }
  return "";
}

TEST(OutsideThreads, ABubbleThreadNotifyingAStaticPoolsWorkerFailsTheRun) {
  g_pool.wait_until_idle();
  const std::string m = failure_of([] { g_pool.submit([] { ++g_jobs_run; }); });
  EXPECT_NE(m.find("bubble: thread #1 \"root\" notifies pthread_cond_t (object #"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(") while 1 OS thread(s) wait on it, not a thread of this bubble (one that "
                   "existed before the run, such as a thread a static initializer started)"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.substr(m.rfind('\n') + 1), "replay: BUBBLE_STRATEGY=fifo") << m;
  // The bubble's notification never reached the worker: the job waits in the queue until a
  // real one (here, outside the bubble) wakes it.
  g_pool.submit([] {});
  g_pool.wait_until_idle();
  EXPECT_EQ(g_jobs_run, 1);
}

TEST(OutsideThreads, ABubbleThreadLockingAMutexAStaticPoolHoldsFailsTheRun) {
  std::promise<void> held;
  std::promise<void> release;
  g_pool.submit([&, done = release.get_future().share()] {
    std::lock_guard lock(g_config);
    held.set_value();
    done.wait();
  });
  held.get_future().wait();
  const std::string m = failure_of([] { std::lock_guard lock(g_config); });
  release.set_value();
  g_pool.wait_until_idle();
  EXPECT_NE(m.find("bubble: thread #1 \"root\" locks pthread_mutex_t (object #"), std::string::npos)
      << m;
  EXPECT_NE(m.find(" holds it, not a thread of this bubble"), std::string::npos) << m;
  EXPECT_NE(m.find("\"global-pool\""), std::string::npos) << m;
}

// Property: a pool that is idle and untouched by the bubble does not disturb it.
TEST(OutsideThreads, AnIdleStaticPoolIsNoConcernOfTheBubble) {
  g_pool.wait_until_idle();
  EXPECT_EQ(failure_of([] {
              std::mutex m;
              std::condition_variable cv;
              bool ready = false;
              std::thread t([&] {
                std::lock_guard lock(m);
                ready = true;
                cv.notify_one();
              });
              std::unique_lock lock(m);
              cv.wait(lock, [&] { return ready; });
              lock.unlock();
              t.join();
            }),
            "");
}

}  // namespace

// Failing runs of code written with the standard library only, in the shapes real code and real
// test code have: a component holding a std::thread member joined in its destructor, a test body
// with joinable threads on its stack at a deadlock, threads blocked in std::mutex::lock (noexcept
// beneath: pthread_mutex_lock) when the run fails. Each ends in one report with its replay line:
// no std::terminate, no abort, and nothing the program did after the failure was decided shown as
// a failure of its own.

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/testing/explore.hpp>
#include <bubble/testing/test_plan.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "intercepted_run.hpp"

namespace {

using namespace std::chrono_literals;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The message of the failure of an intercepting run of `body`; "" if it passed.
std::string failure_of(std::function<void()> body, bubble::Options options = {}) {
  try {
    run_std(std::move(body), std::move(options));
    return "";
  } catch (const bubble::RunFailure& failure) {
    return failure.what();
  }
}

// A component as real code writes it: a worker std::thread, member of the object, that takes jobs
// under a std::mutex and is joined by the destructor.
class Worker {
 public:
  explicit Worker(std::mutex& shared) : shared_(shared), thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard lock(m_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void poke() {
    {
      std::lock_guard lock(m_);
      ++pokes_;
    }
    cv_.notify_all();
  }

 private:
  void loop() {
    std::unique_lock lock(m_);
    for (;;) {
      cv_.wait(lock, [&] { return stopping_ || pokes_ > 0; });
      if (stopping_) return;
      --pokes_;
      lock.unlock();
      std::lock_guard use(shared_);  // Needs the mutex its owner may hold.
      lock.lock();
    }
  }

  std::mutex& shared_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stopping_ = false;
  int pokes_ = 0;
  std::thread thread_;
};

// The component's worker blocks on a mutex its owner holds while the owner waits for a reply that
// never comes: a deadlock, with the worker in pthread_mutex_lock (noexcept) and the component's
// destructor, which joins the worker, on the test body's stack.
TEST(FailingRuns, AComponentWithAStdThreadMemberDeadlocksIntoOneReport) {
  const std::string m = failure_of([] {
    std::mutex shared;
    std::mutex replies;
    std::condition_variable reply;
    Worker worker(shared);
    std::unique_lock hold(shared);
    worker.poke();
    std::unique_lock wait_reply(replies);
    reply.wait(wait_reply);  // Nobody replies.
  });
  EXPECT_NE(m.find("deadlock: all threads are blocked"), std::string::npos) << m;
  EXPECT_EQ(count(m, "\nreplay: BUBBLE_STRATEGY=fifo"), 1u) << m;
  // The worker's lock fails with EDEADLK in the teardown and its frames unwind; the destructor
  // joins it; nothing is abandoned.
  EXPECT_EQ(m.find("abandoned"), std::string::npos) << m;
}

// A joinable std::thread on the stack of a test body that deadlocks: unwinding the body would
// destroy the joinable thread, which calls std::terminate; the teardown abandons the body's thread
// instead, and the run still ends in its report.
TEST(FailingRuns, AJoinableStdThreadOnTheStackOfADeadlockIsAbandonedNotTerminated) {
  const std::string m = failure_of([] {
    std::mutex m1;
    std::mutex m2;
    std::condition_variable never;
    std::unique_lock hold(m1);
    std::thread t([&] { std::lock_guard lock(m1); });  // Blocks on m1 for good.
    std::unique_lock wait(m2);
    never.wait(wait);  // The body blocks with t joinable on its stack.
    t.join();
  });
  EXPECT_NE(m.find("deadlock: all threads are blocked"), std::string::npos) << m;
  EXPECT_NE(m.find("(1 thread(s) could not be unwound and were abandoned"), std::string::npos) << m;
  EXPECT_EQ(m.substr(m.rfind('\n') + 1), "replay: BUBBLE_STRATEGY=fifo");
}

// A joinable std::thread destroyed in the program's normal flow (a real bug: std::terminate on real
// threads) fails the run with a report that says what happened, instead of ending the process.
TEST(FailingRuns, StdTerminateOnABubbleThreadFailsTheRunWithAReport) {
  const std::string m = failure_of([] {
    std::thread forgotten([] { std::this_thread::sleep_for(1s); });
    // Leaves the scope with `forgotten` joinable.
  });
  EXPECT_NE(m.find("thread #1 \"root\" called std::terminate"), std::string::npos) << m;
  EXPECT_EQ(m.substr(m.rfind('\n') + 1), "replay: BUBBLE_STRATEGY=fifo");
}

// The test body is blocked in a join when the run deadlocks; the teardown ends the joined thread,
// so the join returns and the body runs on to its next blocking call, where it is unwound. A check
// it makes meanwhile sees a half-done state: that failure is not reported, only the deadlock is.
TEST(FailingRuns, ChecksFailingAfterTheFailureAreNotReported) {
  ::testing::TestPartResultArray parts;
  bubble::testing::ExploreOutcome outcome;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    bubble::testing::ExploreOptions options;
    options.options = intercepting();
    options.stacks = false;
    outcome = bubble::testing::explore(
        bubble::testing::TestPlan{},
        [](bubble::Runtime&) {
          std::mutex m;
          std::condition_variable never;
          int done = 0;
          std::thread t([&] {
            std::unique_lock lock(m);
            never.wait(lock);  // Nobody notifies: a deadlock.
            done = 1;
          });
          t.join();
          EXPECT_EQ(done, 1) << "the thread's work";  // Reached only in the teardown.
        },
        options);
  }
  ASSERT_TRUE(outcome.failed);
  EXPECT_NE(outcome.message.find("deadlock"), std::string::npos) << outcome.message;
  EXPECT_EQ(outcome.assertion_failures, "") << outcome.assertion_failures;
  EXPECT_NE(outcome.message.find("(1 GoogleTest failure(s) raised after the run had failed"),
            std::string::npos)
      << outcome.message;
  ASSERT_EQ(parts.size(), 1);  // The deadlock's failure alone.
  EXPECT_EQ(std::string(parts.GetTestPartResult(0).message()).find("the thread's work"),
            std::string::npos)
      << parts.GetTestPartResult(0).message();
}

// Two threads in std::mutex::lock at a deadlock, explored over many schedules: every failing run
// ends in a report and the process goes on (before, each torn-down lock was retried 1,000 times
// and the threads abandoned).
TEST(FailingRuns, DeadlocksInStdMutexLockEndInReportsOverManySchedules) {
  int deadlocks = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const std::string m = failure_of(
        [] {
          std::mutex a;
          std::mutex b;
          std::thread t1([&] {
            std::lock_guard la(a);
            std::lock_guard lb(b);
          });
          std::thread t2([&] {
            std::lock_guard lb(b);
            std::lock_guard la(a);
          });
          t1.join();
          t2.join();
        },
        {.strategy = bubble::Strategy::random(seed)});
    if (m.empty()) continue;
    ++deadlocks;
    EXPECT_NE(m.find("cycle: thread #"), std::string::npos) << m;
    EXPECT_EQ(m.find("abandoned"), std::string::npos) << m;
  }
  EXPECT_GT(deadlocks, 0);
}

// The same failing runs with every bubble thread on an OS thread of its own
// (ThreadModel::os_threads): each still ends in its report, and the process goes on.
TEST(FailingRuns, OsThreadsEndEveryFailingRunInItsReport) {
  const bubble::Options os_threads{.thread_model = bubble::ThreadModel::os_threads};
  std::string m = failure_of(
      [] {
        std::mutex m1;
        std::mutex m2;
        std::condition_variable never;
        std::unique_lock hold(m1);
        std::thread t([&] { std::lock_guard lock(m1); });
        std::unique_lock wait(m2);
        never.wait(wait);
        t.join();
      },
      os_threads);
  EXPECT_NE(m.find("deadlock: all threads are blocked"), std::string::npos) << m;
  EXPECT_EQ(m.substr(m.rfind('\n') + 1), "replay: BUBBLE_STRATEGY=fifo") << m;
  m = failure_of([] { std::thread forgotten([] { std::this_thread::sleep_for(1s); }); },
                 os_threads);
  EXPECT_NE(m.find("thread #1 \"root\" called std::terminate"), std::string::npos) << m;
  m = failure_of(
      [] {
        std::mutex shared;
        std::mutex replies;
        std::condition_variable reply;
        Worker worker(shared);
        std::unique_lock hold(shared);
        worker.poke();
        std::unique_lock wait_reply(replies);
        reply.wait(wait_reply);
      },
      os_threads);
  EXPECT_NE(m.find("deadlock: all threads are blocked"), std::string::npos) << m;
}

}  // namespace

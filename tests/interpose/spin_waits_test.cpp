// Spin-waits in standard-library code: a thread that waits for another without blocking (locking
// and unlocking a std::mutex in a loop, try_lock, yield) is correct under any fair scheduler, and
// a bubble's schedules are fair (Options::fair_bound): such a program passes under fifo, random and
// PCT, waits for virtual time as for another thread, takes a bounded number of steps and replays.
// A real livelock ends in a livelock report with its replay line.

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "intercepted_run.hpp"

namespace {

using namespace std::chrono_literals;
using bubble::Strategy;

// A component as real code writes it: its constructor starts a worker, and its destructor must
// not stop the worker before the worker has started, which it waits for by locking and unlocking
// the component's mutex in a loop (no condition variable). Correct on real threads under any fair
// scheduler.
class Service {
 public:
  Service() : worker_([this] { work(); }) {}
  ~Service() {
    for (;;) {  // The spin-wait.
      std::lock_guard lock(m_);
      if (started_) break;
    }
    {
      std::lock_guard lock(m_);
      stopping_ = true;
    }
    stop_.notify_all();
    worker_.join();
  }

 private:
  void work() {
    std::unique_lock lock(m_);
    started_ = true;
    stop_.wait(lock, [&] { return stopping_; });
  }

  std::mutex m_;
  std::condition_variable stop_;
  bool started_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

std::vector<Strategy> strategies() {
  std::vector<Strategy> all{Strategy::fifo()};
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    all.push_back(Strategy::random(seed));
    all.push_back(Strategy::pct(seed, 3));
  }
  return all;
}

// Property: a destructor spinning on a std::mutex until its worker has started ends under every
// strategy (fifo and PCT never preempt it on their own: fairness does), within a bounded number of
// steps, and the recorded schedule replays the same run.
TEST(SpinWaits, ADestructorSpinningOnAStdMutexEndsUnderEveryStrategy) {
  for (const Strategy& strategy : strategies()) {
    SCOPED_TRACE(strategy.to_string());
    const bubble::RunResult r = run_std([] { Service service; }, {.strategy = strategy});
    EXPECT_LT(r.steps, 10'000u);  // Two fair bounds and the component's own steps.
    bubble::Options replay{.replay = r.schedule};
    EXPECT_EQ(run_std([] { Service service; }, replay).steps, r.steps);
  }
}

// Property: a spin-wait on a std::mutex for a thread that sleeps lets virtual time move on (as if
// the spinning thread were blocked), so it ends exactly when the sleeper sets the flag.
TEST(SpinWaits, SpinningOnAStdMutexForASleepingThreadLetsTimeMove) {
  for (const Strategy& strategy : strategies()) {
    SCOPED_TRACE(strategy.to_string());
    std::chrono::steady_clock::duration waited{};
    const bubble::RunResult r = run_std(
        [&] {
          std::mutex m;
          bool ready = false;
          std::thread setter([&] {
            std::this_thread::sleep_for(10ms);
            std::lock_guard lock(m);
            ready = true;
          });
          const auto start = std::chrono::steady_clock::now();
          for (;;) {
            std::lock_guard lock(m);
            if (ready) break;
          }
          waited = std::chrono::steady_clock::now() - start;
          setter.join();
        },
        {.strategy = strategy});
    EXPECT_EQ(waited, 10ms);
    EXPECT_EQ(r.elapsed, 10ms);
  }
}

// Property: a try_lock loop for a mutex held by a thread that sleeps before it unlocks ends once
// the holder wakes, at exactly the holder's time.
TEST(SpinWaits, ATryLockLoopWaitsForTheHolderToWake) {
  for (const Strategy& strategy : strategies()) {
    SCOPED_TRACE(strategy.to_string());
    const bubble::RunResult r = run_std(
        [] {
          std::mutex m;
          std::atomic<bool> held{false};
          std::thread holder([&] {
            std::lock_guard lock(m);
            held = true;
            std::this_thread::sleep_for(5ms);
          });
          while (!held) std::this_thread::yield();
          while (!m.try_lock()) {
          }
          m.unlock();
          holder.join();
        },
        {.strategy = strategy});
    EXPECT_EQ(r.elapsed, 5ms);
  }
}

// Two threads each yield until the other has set a flag that neither sets: a livelock, reported
// as one, with the replay line that reproduces it.
void yield_livelock() {
  std::atomic<bool> a_done{false};
  std::atomic<bool> b_done{false};
  std::thread a([&] {
    while (!b_done) std::this_thread::yield();
    a_done = true;
  });
  std::thread b([&] {
    while (!a_done) std::this_thread::yield();
    b_done = true;
  });
  a.join();
  b.join();
}

std::string failure_of(void (*program)(), bubble::Options options) {
  try {
    run_std(program, std::move(options));
    return "";
  } catch (const bubble::RunFailure& failure) {
    return failure.what();
  }
}

TEST(SpinWaits, ALivelockIsReportedAsOneWithItsReplayLine) {
  for (const Strategy& strategy : {Strategy::fifo(), Strategy::random(7), Strategy::pct(7, 3)}) {
    SCOPED_TRACE(strategy.to_string());
    const std::string m = failure_of(yield_livelock, {.strategy = strategy});
    EXPECT_NE(m.find("bubble: livelock: thread #"), std::string::npos) << m;
    EXPECT_NE(m.find(" spun 1000000 steps without progress at "), std::string::npos) << m;
    EXPECT_NE(m.find(" (yield): since step "), std::string::npos) << m;
    EXPECT_NE(m.find("Options::livelock_steps = 1000000"), std::string::npos) << m;
    const std::string replay = m.substr(m.rfind('\n') + 1);
    ASSERT_EQ(replay.rfind("replay: BUBBLE_STRATEGY=", 0), 0u) << m;
    bubble::Options again{.strategy = Strategy::parse(replay.substr(24))};
    EXPECT_EQ(failure_of(yield_livelock, again), m);
  }
}

// Without fairness (fair_bound = 0) the destructor's spin-wait never ends under fifo; the step
// budget ends the run, with the spinning thread inside pthread_mutex_unlock (noexcept): the run
// still ends in its report.
TEST(SpinWaits, WithoutFairnessASpinWaitEndsInTheStepBudgetsReport) {
  bubble::Options options{.max_steps = 100'000, .fair_bound = 0};
  std::string m;
  try {
    run_std([] { Service service; }, options);
  } catch (const bubble::RunFailure& failure) {
    m = failure.what();
  }
  EXPECT_NE(m.find("step budget exhausted: Options::max_steps = 100000"), std::string::npos) << m;
  EXPECT_EQ(m.substr(m.rfind('\n') + 1), "replay: BUBBLE_STRATEGY=fifo") << m;
}

}  // namespace

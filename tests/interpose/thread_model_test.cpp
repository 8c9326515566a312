// Unmodified standard-library code under Options::thread_model = os_threads: every std::thread of
// an intercepting run is a bubble thread on an OS thread of its own, so thread_local variables and
// errno are per thread as on real threads, while locks, condition variables, clocks and sleeps are
// still the bubble's, at exact virtual times and with the same schedules as with fibers.

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "intercepted_run.hpp"
#include "lost_wakeup_program.hpp"

namespace {

using namespace std::chrono_literals;

bubble::Options os_threads(bubble::Options options = {}) {
  options.thread_model = bubble::ThreadModel::os_threads;
  return options;
}

thread_local int tl_counter = 0;

// The counterpart of InterposeLimits.ThreadLocalVariablesAreSharedByTheBubbleThreadsOfARun: with
// an OS thread per bubble thread, each std::thread increments its own counter.
TEST(InterposeThreadModel, ThreadLocalVariablesArePerThreadWithOsThreads) {
  int seen_first = 0;
  int seen_second = 0;
  tl_counter = 0;
  run_std(
      [&] {
        std::thread a([&] { seen_first = ++tl_counter; });
        std::thread b([&] { seen_second = ++tl_counter; });
        a.join();
        b.join();
      },
      os_threads());
  EXPECT_EQ(seen_first, 1);
  EXPECT_EQ(seen_second, 1);
  EXPECT_EQ(tl_counter, 0);  // The test's own OS thread's variable: nobody touched it.
}

TEST(InterposeThreadModel, ErrnoIsPerThreadAcrossVirtualSleeps) {
  int seen_a = -1;
  int seen_b = -1;
  run_std(
      [&] {
        std::thread a([&] {
          errno = ERANGE;
          std::this_thread::sleep_for(1h);
          seen_a = errno;
        });
        std::thread b([&] {
          errno = EDOM;
          std::this_thread::sleep_for(2h);
          seen_b = errno;
        });
        a.join();
        b.join();
      },
      os_threads());
  EXPECT_EQ(seen_a, ERANGE);
  EXPECT_EQ(seen_b, EDOM);
}

// A std::mutex and std::condition_variable hand-off between OS-thread-backed bubble threads, at
// exact virtual times: the consumer wakes at the producer's instant, an hour in.
TEST(InterposeThreadModel, StdConditionVariableWakesAtTheNotifiersVirtualInstant) {
  std::chrono::steady_clock::duration woke_after{};
  const bubble::RunResult r = run_std(
      [&] {
        std::mutex m;
        std::condition_variable cv;
        bool ready = false;
        const auto start = std::chrono::steady_clock::now();
        std::thread consumer([&] {
          std::unique_lock lock(m);
          cv.wait(lock, [&] { return ready; });
          woke_after = std::chrono::steady_clock::now() - start;
        });
        std::this_thread::sleep_for(1h);
        {
          std::lock_guard lock(m);
          ready = true;
        }
        cv.notify_one();
        consumer.join();
      },
      os_threads());
  EXPECT_EQ(woke_after, 1h);
  EXPECT_EQ(r.elapsed, 1h);
}

// What a run of `body` under `options` shows: its schedule's picks and its failure message ("" if
// it passed), the message without its replay line.
std::pair<std::vector<std::uint32_t>, std::string> outcome(void (*body)(),
                                                           const bubble::Options& options) {
  try {
    const bubble::RunResult r = run_std(body, options);
    return {r.schedule.picks, ""};
  } catch (const bubble::RunFailure& e) {
    const std::string message = e.what();
    return {e.schedule().picks, message.substr(0, message.find("replay:"))};
  }
}

// Property: for every seed, the intercepted program takes the same decisions and fails (or not)
// with the same report under both thread models.
TEST(InterposeThreadModel, OsThreadsExploreTheSameSchedulesAsFibers) {
  int failures = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE(seed);
    bubble::Options fibers;
    fibers.strategy = bubble::Strategy::random(seed);
    const auto expected = outcome(two_consumers_two_items, fibers);
    const auto got = outcome(two_consumers_two_items, os_threads(fibers));
    EXPECT_EQ(got.first, expected.first);
    EXPECT_EQ(got.second, expected.second);
    if (!expected.second.empty()) ++failures;
  }
  EXPECT_GT(failures, 0);  // The lost wakeup is among the schedules compared.
}

}  // namespace

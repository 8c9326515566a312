// The watchdog keeps working in intercepting runs: it measures real time, although the bubble's
// threads read virtual time through the same clock functions.

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "intercepted_run.hpp"

namespace {

// A std::thread that spins on an atomic without ever yielding never reaches a scheduling point:
// the watchdog aborts the process after its limit of real time, naming the thread.
TEST(InterposeWatchdogDeathTest, NamesAStdThreadSpinningWithoutAYield) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  bubble::Options options;
  options.watchdog = std::chrono::milliseconds{50};
  EXPECT_DEATH(run_std(
                   [] {
                     std::atomic<bool> flag{false};
                     std::thread spinner([&] {
                       while (!flag.load()) {
                       }
                     });
                     std::this_thread::sleep_for(std::chrono::seconds{1});
                     flag.store(true);
                     spinner.join();
                   },
                   options),
               "watchdog: thread #2 \"std::thread\" of bubble has run for more than 50 ms");
}

// The message says what the bubble can and cannot see, where the thread last was, and how to
// replay the run up to there.
TEST(InterposeWatchdogDeathTest, SaysWhatTheBubbleCannotSeeAndHowToReplay) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  bubble::Options options;
  options.watchdog = std::chrono::milliseconds{50};
  options.strategy = bubble::Strategy::random(4);
  EXPECT_DEATH(run_std(
                   [] {
                     std::atomic<bool> flag{false};
                     std::thread spinner([&] {
                       std::this_thread::yield();
                       while (!flag.load()) {
                       }
                     });
                     spinner.join();
                   },
                   options),
               "without reaching a scheduling point, so the bubble can neither switch threads nor "
               "move time.*"
               "a loop that makes none of them \\(a spin on an atomic without a yield.*"
               "real I/O.*"
               "a lock it does not intercept.*"
               "Its last scheduling point was yield at sched_yield called from .*"
               "replay: BUBBLE_STRATEGY=random:4");
}

}  // namespace

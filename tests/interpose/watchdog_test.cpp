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

}  // namespace

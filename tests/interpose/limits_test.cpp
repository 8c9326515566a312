// What bubble::interpose does not do with the default thread model, shown so that a change of
// behaviour is seen.

#include <thread>

#include <gtest/gtest.h>

#include "intercepted_run.hpp"

namespace {

thread_local int tl_counter = 0;

// With fibers (the default thread model) bubble threads run on the bubble's one OS thread, so they
// share its thread_local variables: each of two std::threads incrementing "its own" counter once
// sees the other's increment. On real threads, and with ThreadModel::os_threads, both see 1.
TEST(InterposeLimits, ThreadLocalVariablesAreSharedByTheBubbleThreadsOfARun) {
  int seen_first = 0;
  int seen_second = 0;
  tl_counter = 0;
  run_std([&] {
    std::thread a([&] { seen_first = ++tl_counter; });
    a.join();
    std::thread b([&] { seen_second = ++tl_counter; });
    b.join();
  });
  EXPECT_EQ(seen_first, 1);
  EXPECT_EQ(seen_second, 2);
  EXPECT_EQ(tl_counter, 2);  // the test's own OS thread's variable
}

}  // namespace

// A test program with one BUBBLE_TEST that fails under every schedule: two threads increment a
// counter without a lock, with a scheduling point between the read and the write, so one update
// is lost. Not a test of its own: cli.bubble_test_failure_file runs it with BUBBLE_FAILURE_FILE
// set and checks the failure file and what `bubble replay` prints for it.
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

BUBBLE_TEST(KnownBad, UnlockedIncrementsLoseAnUpdate) {
  bubble::Runtime& rt = bubble::current_runtime();
  int counter = 0;
  auto add = [&] {
    const int read = counter;
    rt.yield();
    counter = read + 1;
  };
  {
    bubble::Thread a("adder-a", add, rt);
    bubble::Thread b("adder-b", add, rt);
  }
  EXPECT_EQ(counter, 2);
}

// A test program with a BUBBLE_TEST that fails under every schedule: two threads increment a
// counter without a lock, with a scheduling point between the read and the write, so one update
// is lost. Not a test of its own: cli.replay_bubble_test_failure runs it with BUBBLE_FAILURE_FILE
// set and checks the failure file and what `bubble replay` prints for it, and
// cli.replay_disabled_test_failure runs its disabled twin with --gtest_also_run_disabled_tests
// and checks that the replay line runs it too.
#include <bubble/testing.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

namespace {

void lose_an_update() {
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

}  // namespace

BUBBLE_TEST(KnownBad, UnlockedIncrementsLoseAnUpdate) {
  lose_an_update();
}

BUBBLE_TEST(KnownBad, DISABLED_UnlockedIncrementsLoseAnUpdate) {
  lose_an_update();
}

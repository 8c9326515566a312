// Tests of getting an exception that escaped a bubble thread back with its own type:
// RunFailure::rethrow_original() and Options::rethrow_original.

#include <bubble/bubble.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using bubble::Runtime;

// A worker thread reads past the end of a vector after a second of virtual time.
void out_of_range_in_a_thread(Runtime& rt) {
  bubble::Thread worker(
      "worker",
      [&rt] {
        rt.sleep_for(1s);
        const std::vector<int> v{1, 2, 3};
        (void)v.at(3);
      },
      rt);
}

TEST(RunFailureRethrowOriginal, RethrowsTheThreadsExceptionWithItsType) {
  try {
    bubble::run(out_of_range_in_a_thread);
    FAIL() << "run() did not throw";
  } catch (const bubble::RunFailure& e) {
    EXPECT_NE(std::string(e.what()).find("replay: BUBBLE_STRATEGY=fifo"), std::string::npos)
        << e.what();
    EXPECT_THROW(e.rethrow_original(), std::out_of_range);
  }
}

TEST(RunFailureRethrowOriginal, TheOneLineFormCatchesTheOriginalByType) {
  bool caught = false;
  try {
    try {
      bubble::run(out_of_range_in_a_thread);
    } catch (const bubble::RunFailure& e) {
      e.rethrow_original();
      throw;
    }
  } catch (const std::out_of_range& e) {
    caught = true;
    EXPECT_NE(std::string(e.what()).find("vector"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(caught);
}

TEST(RunFailureRethrowOriginal, ReturnsForAFailureWithoutAnException) {
  try {
    bubble::run([](Runtime& rt) {
      bubble::Thread stuck(
          "stuck", [&rt] { rt.sleep_for(bubble::Duration::max()); }, rt);
    });
    FAIL() << "run() did not throw";
  } catch (const bubble::DeadlockError& e) {
    EXPECT_NO_THROW(e.rethrow_original());
  }
}

TEST(OptionsRethrowOriginal, RunThrowsTheOriginalTypeAndPrintsTheReplayLine) {
  testing::internal::CaptureStderr();
  EXPECT_THROW(bubble::run({.rethrow_original = true}, out_of_range_in_a_thread),
               std::out_of_range);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("thread #2 \"worker\" threw std::out_of_range"), std::string::npos) << err;
  EXPECT_NE(err.find("replay: BUBBLE_STRATEGY=fifo"), std::string::npos) << err;
}

TEST(OptionsRethrowOriginal, OtherFailuresStayRunFailures) {
  testing::internal::CaptureStderr();
  EXPECT_THROW(bubble::run({.rethrow_original = true},
                           [](Runtime& rt) {
                             bubble::Thread stuck(
                                 "stuck", [&rt] { rt.sleep_for(bubble::Duration::max()); }, rt);
                           }),
               bubble::DeadlockError);
  // Only a rethrown original is announced on stderr; a RunFailure carries its own message.
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace

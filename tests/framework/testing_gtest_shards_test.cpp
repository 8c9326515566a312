// BUBBLE_SCHEDULE_SHARDS_FROM_GTEST end to end: this test program runs itself in child processes
// with GoogleTest's shard variables, and the two BUBBLE_TEST suite tests it names (in
// testing_bubble_test_test.cpp) explore their share of the schedules on every shard.
#include <gtest/gtest.h>

#include <string>

#include "../support/child_process.hpp"

namespace {

// Runs this test program in a child process with `env` prefixed to the command line, and returns
// its standard output.
std::string run_child(const std::string& env, const std::string& filter) {
  return bubble::test_support::output_of(env + " " + bubble::test_support::self_command() +
                                         " --gtest_filter=" + filter + " 2>&1");
}

// With BUBBLE_SCHEDULE_SHARDS_FROM_GTEST=1, GoogleTest stops sharding tests (both tests run on
// every shard) and each BUBBLE_TEST explores its share of the schedules instead.
TEST(TestingGtestShards, FromGtestRunsEveryTestOnItsShareOfTheSchedules) {
  const std::string filter =
      "TestingBubbleTest.BodyRunsAsTheRootOfABubbleInVirtualTime:"
      "TestingBubbleTest.PlainTestInTheSameSuiteIsNotInABubble";
  const std::string shared =
      "env -u BUBBLE_STRATEGY -u BUBBLE_SEED -u BUBBLE_SCHEDULE_SHARD_INDEX "
      "-u BUBBLE_SCHEDULE_TOTAL_SHARDS -u BUBBLE_SCHEDULE_SHARDS_FROM_GTEST -u GTEST_OUTPUT "
      "-u GTEST_SHARD_STATUS_FILE -u BUBBLE_TRACE -u BUBBLE_EXHAUSTIVE -u BUBBLE_CHECKPOINT "
      "GTEST_TOTAL_SHARDS=2 BUBBLE_SCHEDULES=5";
  for (const char* index : {"0", "1"}) {
    const std::string out = run_child(
        shared + " GTEST_SHARD_INDEX=" + index + " BUBBLE_SCHEDULE_SHARDS_FROM_GTEST=1", filter);
    EXPECT_NE(out.find("[  PASSED  ] 2 tests."), std::string::npos) << out;
    const std::string share = std::string(index) == "0" ? "3 of 5" : "2 of 5";
    EXPECT_NE(out.find("bubble: explored " + share + " schedules (shard " + index + "/2)"),
              std::string::npos)
        << out;
  }
  // Without it, GoogleTest shards the tests (one test per shard here) and the test that runs
  // explores all of its schedules.
  std::string both;
  for (const char* index : {"0", "1"}) {
    const std::string out = run_child(shared + " GTEST_SHARD_INDEX=" + index, filter);
    EXPECT_NE(out.find("[  PASSED  ] 1 test."), std::string::npos) << out;
    both += out;
  }
  EXPECT_NE(both.find("bubble: explored 5 schedules"), std::string::npos) << both;
}

}  // namespace

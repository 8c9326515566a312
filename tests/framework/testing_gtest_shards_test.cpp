// BUBBLE_SCHEDULE_SHARDS_FROM_GTEST end to end: this test program runs itself in child processes
// with GoogleTest's shard variables, and the two BUBBLE_TEST suite tests it names (in
// testing_bubble_test_test.cpp) explore their share of the schedules on every shard.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <string>

namespace {

// Runs this test program in a child process with `env` prefixed to the command line, and returns
// its standard output.
std::string run_child(const std::string& env, const std::string& filter) {
  std::string self(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) return "readlink failed";
  self.resize(static_cast<std::size_t>(n));
  const std::string command = env + " '" + self + "' --gtest_filter=" + filter + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  ::pclose(pipe);
  return out;
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

// Tests of bubble::testing::run_test(), what BUBBLE_TEST calls: the environment variables it
// reads (BUBBLE_SCHEDULES, the schedule shard, BUBBLE_STRATEGY), malformed values reported by
// name, and a failure that replays through BUBBLE_STRATEGY.
//
// Failures are provoked only under a gtest-spi ScopedFakeTestPartResultReporter, which captures
// them, so no test here has to fail.
#include <bubble/testing.hpp>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../support/environment_lookup.hpp"
#include "racy_counter.hpp"

namespace bubble::testing {
namespace {

using test_programs::interleave;  // The programs of racy_counter.hpp.
using test_programs::racy_counter;
using test_support::lookup;  // An environment of our own (environment_lookup.hpp).

// --- run_test(): the environment as BUBBLE_TEST reads it ---------------------------------------

struct RunTestResult {
  ExploreOutcome outcome;
  int bodies = 0;
  std::vector<::testing::TestPartResult> parts;
};

// run_test() with a fake environment, its GoogleTest results captured.
RunTestResult run_test_with(std::map<std::string, std::string> env,
                            const std::function<void(Runtime&)>& body) {
  RunTestResult r;
  ::testing::TestPartResultArray parts;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    r.outcome = run_test(
        [&](Runtime& rt) {
          ++r.bodies;
          body(rt);
        },
        lookup(std::move(env)));
  }
  for (int i = 0; i < parts.size(); ++i) r.parts.push_back(parts.GetTestPartResult(i));
  return r;
}

TEST(TestingRunTest, WithoutVariablesRunsTheBodyOnce) {
  const RunTestResult r = run_test_with({}, [](Runtime& rt) { EXPECT_TRUE(rt.controlled()); });
  EXPECT_EQ(r.bodies, 1);
  EXPECT_EQ(r.outcome.runs, 1u);
  EXPECT_TRUE(r.parts.empty());
}

TEST(TestingRunTest, SchedulesVariableRunsTheBodyThatManyTimes) {
  const RunTestResult r = run_test_with({{"BUBBLE_SCHEDULES", "7"}, {"BUBBLE_SEED", "3"}},
                                        [](Runtime& rt) { (void)interleave(rt); });
  EXPECT_EQ(r.bodies, 7);
  EXPECT_EQ(r.outcome.runs, 7u);
  EXPECT_FALSE(r.outcome.failed);
  EXPECT_TRUE(r.parts.empty());
}

TEST(TestingRunTest, ScheduleShardRunsItsShareOnly) {
  const RunTestResult r = run_test_with({{"BUBBLE_SCHEDULES", "10"},
                                         {"BUBBLE_SCHEDULE_SHARD_INDEX", "1"},
                                         {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "4"}},
                                        [](Runtime& rt) { (void)interleave(rt); });
  EXPECT_EQ(r.bodies, 3);  // Schedules 1, 5, 9.
}

TEST(TestingRunTest, AShardWithNoScheduleSkipsTheTestVisibly) {
  const RunTestResult r = run_test_with({{"BUBBLE_SCHEDULES", "2"},
                                         {"BUBBLE_SCHEDULE_SHARD_INDEX", "2"},
                                         {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "3"}},
                                        [](Runtime&) {});
  EXPECT_EQ(r.bodies, 0);
  ASSERT_EQ(r.parts.size(), 1u);
  EXPECT_TRUE(r.parts[0].skipped());
  EXPECT_NE(std::string(r.parts[0].message()).find("shard 2/3 has none of the 2 schedules"),
            std::string::npos)
      << r.parts[0].message();
}

TEST(TestingRunTest, AMalformedVariableFailsTheTestNamingItAndRunsNothing) {
  const RunTestResult r = run_test_with({{"BUBBLE_SCHEDULES", "lots"}}, [](Runtime&) {});
  EXPECT_EQ(r.bodies, 0);
  ASSERT_EQ(r.parts.size(), 1u);
  EXPECT_TRUE(r.parts[0].nonfatally_failed());
  EXPECT_NE(std::string(r.parts[0].message()).find("BUBBLE_SCHEDULES"), std::string::npos);
  EXPECT_NE(std::string(r.parts[0].message()).find("lots"), std::string::npos);
}

// The replay line names this very test, and running it with that strategy reproduces the
// failure (here in-process, through the same environment variable).
TEST(TestingRunTest, AFailureReplaysThroughBubbleStrategy) {
  const RunTestResult found = run_test_with({{"BUBBLE_SCHEDULES", "500"}}, [](Runtime& rt) {
    EXPECT_EQ(racy_counter(rt), 2) << "lost update";
  });
  ASSERT_TRUE(found.outcome.failed);
  const std::string line = found.outcome.replay_line;
  EXPECT_NE(line.find(" --gtest_filter=TestingRunTest.AFailureReplaysThroughBubbleStrategy"),
            std::string::npos)
      << line;
  EXPECT_EQ(found.parts.back().message(), found.outcome.message);
  const std::string prefix = "replay: BUBBLE_STRATEGY=";
  ASSERT_EQ(line.rfind(prefix, 0), 0u) << line;
  const std::string strategy =
      line.substr(prefix.size(), line.find(' ', prefix.size()) - prefix.size());
  for (int i = 0; i < 3; ++i) {
    const RunTestResult replay =
        run_test_with({{"BUBBLE_STRATEGY", strategy}, {"BUBBLE_SCHEDULES", "500"}},
                      [](Runtime& rt) { EXPECT_EQ(racy_counter(rt), 2) << "lost update"; });
    EXPECT_EQ(replay.bodies, 1);
    EXPECT_TRUE(replay.outcome.failed);
    EXPECT_EQ(replay.outcome.replay_line, line);
  }
}

}  // namespace
}  // namespace bubble::testing

// Tests of bubble::testing::run_test(), what BUBBLE_TEST calls: the environment variables it
// reads (BUBBLE_SCHEDULES, the schedule shard, BUBBLE_STRATEGY), malformed values reported by
// name, and a failure that replays through BUBBLE_STRATEGY.
//
// Failures are provoked only under a gtest-spi ScopedFakeTestPartResultReporter, which captures
// them, so no test here has to fail.
#include <bubble/schedule_tree.hpp>
#include <bubble/testing.hpp>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdio>
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

// BUBBLE_EXHAUSTIVE: the lost update needs one preemption, so a search with none passes with
// its certificate, and a search with one fails with a choices replay line that reproduces it.
TEST(TestingRunTest, ExhaustiveSearchPrintsACertificateOrAReplayableFailure) {
  const auto body = [](Runtime& rt) { EXPECT_EQ(racy_counter(rt), 2) << "lost update"; };
  const RunTestResult none = run_test_with({{"BUBBLE_EXHAUSTIVE", "0"}}, body);
  EXPECT_FALSE(none.outcome.failed);
  EXPECT_TRUE(none.parts.empty());
  EXPECT_EQ(none.outcome.certificate, "bubble: complete: " + std::to_string(none.outcome.runs) +
                                          (none.outcome.runs == 1 ? " schedule" : " schedules") +
                                          " with at most 0 preemptions, 0 failed");

  const RunTestResult one = run_test_with({{"BUBBLE_EXHAUSTIVE", "1"}}, body);
  ASSERT_TRUE(one.outcome.failed);
  EXPECT_TRUE(one.outcome.certificate.empty());
  EXPECT_NE(one.outcome.message.find("of the exhaustive search of every schedule with at most 1 "
                                     "preemption"),
            std::string::npos)
      << one.outcome.message;
  const std::string prefix = "replay: BUBBLE_STRATEGY=choices:";
  ASSERT_EQ(one.outcome.replay_line.rfind(prefix, 0), 0u) << one.outcome.replay_line;
  const std::string strategy = one.outcome.replay_line.substr(
      8 + std::string("BUBBLE_STRATEGY=").size(),
      one.outcome.replay_line.find(' ', 8) - 8 - std::string("BUBBLE_STRATEGY=").size());
  const RunTestResult replay = run_test_with({{"BUBBLE_STRATEGY", strategy}}, body);
  EXPECT_EQ(replay.bodies, 1);
  EXPECT_TRUE(replay.outcome.failed);
  EXPECT_EQ(replay.outcome.replay_line, one.outcome.replay_line);
}

// The shards of a search, each run as a CI job would run it, prove together what the whole
// search proves: their certificates merge into its certificate. A bug is found by the shards
// that own its failing schedules, each with a replay line of its own.
TEST(TestingRunTest, ShardsOfAnExhaustiveSearchMergeIntoTheWholeSearch) {
  const auto passing = [](Runtime& rt) { (void)racy_counter(rt); };
  const RunTestResult whole = run_test_with({{"BUBBLE_EXHAUSTIVE", "2"}}, passing);
  std::vector<std::string> certificates;
  int failing_shards = 0;
  for (int index = 0; index < 3; ++index) {
    const std::map<std::string, std::string> env = {
        {"BUBBLE_EXHAUSTIVE", "2"},
        {"BUBBLE_SCHEDULE_SHARD_INDEX", std::to_string(index)},
        {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "3"}};
    certificates.push_back(run_test_with(env, passing).outcome.certificate);
    const RunTestResult buggy =
        run_test_with(env, [](Runtime& rt) { EXPECT_EQ(racy_counter(rt), 2) << "lost update"; });
    if (!buggy.outcome.failed) continue;
    ++failing_shards;
    EXPECT_EQ(buggy.outcome.replay_line.rfind("replay: BUBBLE_STRATEGY=choices:", 0), 0u);
  }
  EXPECT_EQ(bubble::merge_certificates(certificates), whole.outcome.certificate);
  EXPECT_GE(failing_shards, 1);
}

// BUBBLE_CHECKPOINT: a search that failed keeps its state; once the bug is gone, the search
// resumes from the failing schedule instead of starting over, and its certificate counts every
// schedule of both processes.
TEST(TestingRunTest, ExhaustiveSearchResumesFromItsCheckpointFile) {
  const std::string file = ::testing::TempDir() + "bubble_checkpoint_test.txt";
  std::remove(file.c_str());
  const RunTestResult whole =
      run_test_with({{"BUBBLE_EXHAUSTIVE", "1"}}, [](Runtime& rt) { (void)racy_counter(rt); });
  ASSERT_FALSE(whole.outcome.certificate.empty());

  bool buggy = true;
  const auto body = [&buggy](Runtime& rt) {
    const int counted = racy_counter(rt);
    if (buggy) {
      EXPECT_EQ(counted, 2) << "lost update";
    }
  };
  const std::map<std::string, std::string> env = {{"BUBBLE_EXHAUSTIVE", "1"},
                                                  {"BUBBLE_CHECKPOINT", file}};
  const RunTestResult failed = run_test_with(env, body);
  ASSERT_TRUE(failed.outcome.failed);
  buggy = false;
  const RunTestResult resumed = run_test_with(env, body);
  EXPECT_FALSE(resumed.outcome.failed);
  EXPECT_EQ(resumed.outcome.certificate, whole.outcome.certificate);
  EXPECT_EQ(failed.outcome.runs + resumed.outcome.runs, whole.outcome.runs + 1)
      << "the failing schedule runs again, nothing else does";
  std::remove(file.c_str());
}

}  // namespace
}  // namespace bubble::testing

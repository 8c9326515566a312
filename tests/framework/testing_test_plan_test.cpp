// Tests of bubble::testing::TestPlan: how BUBBLE_TEST reads its environment variables, and how an
// exploration's schedules are split over shards. The parser takes an EnvLookup, so these tests
// never touch the process environment.
#include <bubble/testing/test_plan.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/environment_lookup.hpp"

namespace bubble::testing {
namespace {

using Env = std::map<std::string, std::string>;
using bubble::test_support::lookup;

TestPlan plan_of(const Env& env) {
  return TestPlan::from_environment(lookup(env));
}

// Expects from_environment to throw std::invalid_argument whose message contains every one of
// `parts` (the variable's name and its value).
void expect_rejected(const Env& env, const std::vector<std::string>& parts) {
  try {
    (void)plan_of(env);
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "message \"" << e.what() << "\" lacks \"" << part << "\"";
    }
  }
}

bool notes_mention(const TestPlan& plan, const std::string& text) {
  for (const std::string& note : plan.notes()) {
    if (note.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(TestingTestPlan, NoVariablesMeansOneFifoRun) {
  const TestPlan plan = plan_of({});
  EXPECT_FALSE(plan.exploring());
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan.strategy(0), Strategy::fifo());
  EXPECT_EQ(plan.schedule_index(0), 0u);
  EXPECT_TRUE(plan.notes().empty());
  EXPECT_EQ(plan.describe(), "fifo");
}

TEST(TestingTestPlan, EmptyValuesCountAsUnset) {
  const TestPlan plan = plan_of({{"BUBBLE_STRATEGY", ""}, {"BUBBLE_SCHEDULES", " "}});
  EXPECT_FALSE(plan.exploring());
  EXPECT_EQ(plan.strategy(0), Strategy::fifo());
}

TEST(TestingTestPlan, StrategyVariableGivesOneRunWithThatStrategy) {
  EXPECT_EQ(plan_of({{"BUBBLE_STRATEGY", "fifo"}}).strategy(0), Strategy::fifo());
  EXPECT_EQ(plan_of({{"BUBBLE_STRATEGY", "random:42"}}).strategy(0), Strategy::random(42));
  EXPECT_EQ(plan_of({{"BUBBLE_STRATEGY", "pct:7:3"}}).strategy(0), Strategy::pct(7, 3));
  EXPECT_EQ(plan_of({{"BUBBLE_STRATEGY", "pct:7:3:50"}}).strategy(0), Strategy::pct(7, 3, 50));
  const TestPlan choices = plan_of({{"BUBBLE_STRATEGY", "choices:0,2,1"}});
  EXPECT_EQ(choices.strategy(0), Strategy::choices({0, 2, 1}));
  EXPECT_FALSE(choices.exploring());
  EXPECT_EQ(choices.size(), 1u);
}

TEST(TestingTestPlan, MalformedStrategyIsRejectedNamingTheVariableAndValue) {
  expect_rejected({{"BUBBLE_STRATEGY", "roundrobin"}}, {"BUBBLE_STRATEGY", "roundrobin"});
  expect_rejected({{"BUBBLE_STRATEGY", "random:x"}}, {"BUBBLE_STRATEGY", "random:x"});
}

TEST(TestingTestPlan, StrategyWinsOverTheOtherVariablesWithANote) {
  const TestPlan plan = plan_of({{"BUBBLE_STRATEGY", "random:5"},
                                 {"BUBBLE_SEED", "9"},
                                 {"BUBBLE_SCHEDULES", "100"},
                                 {"BUBBLE_SCHEDULE_SHARD_INDEX", "1"},
                                 {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "2"}});
  EXPECT_FALSE(plan.exploring());
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan.strategy(0), Strategy::random(5));
  EXPECT_TRUE(notes_mention(plan, "ignoring BUBBLE_SEED=9"));
  EXPECT_TRUE(notes_mention(plan, "ignoring BUBBLE_SCHEDULES=100"));
  EXPECT_TRUE(notes_mention(plan, "ignoring BUBBLE_SCHEDULE_SHARD_INDEX=1"));
}

TEST(TestingTestPlan, ExhaustiveVariableGivesASearchWithThatBound) {
  const TestPlan plan = plan_of({{"BUBBLE_EXHAUSTIVE", " 2 "}});
  EXPECT_TRUE(plan.exploring());
  ASSERT_TRUE(plan.exhaustive_bound().has_value());
  EXPECT_EQ(*plan.exhaustive_bound(), 2u);
  EXPECT_EQ(plan.describe(), "every schedule with at most 2 preemptions");
  EXPECT_EQ(plan_of({{"BUBBLE_EXHAUSTIVE", "1"}}).describe(),
            "every schedule with at most 1 preemption");
  EXPECT_FALSE(plan_of({{"BUBBLE_SCHEDULES", "3"}}).exhaustive_bound().has_value());
}

TEST(TestingTestPlan, ExhaustiveWinsOverSchedulesAndSeedWithANote) {
  const TestPlan plan =
      plan_of({{"BUBBLE_EXHAUSTIVE", "0"}, {"BUBBLE_SCHEDULES", "100"}, {"BUBBLE_SEED", "4"}});
  ASSERT_TRUE(plan.exhaustive_bound().has_value());
  EXPECT_EQ(*plan.exhaustive_bound(), 0u);
  EXPECT_TRUE(notes_mention(plan, "ignoring BUBBLE_SCHEDULES=100 because BUBBLE_EXHAUSTIVE=0"));
  EXPECT_TRUE(notes_mention(plan, "ignoring BUBBLE_SEED=4"));
}

TEST(TestingTestPlan, StrategyWinsOverExhaustiveSoThatReplayLinesReplay) {
  const TestPlan plan = plan_of({{"BUBBLE_STRATEGY", "choices:0,1"}, {"BUBBLE_EXHAUSTIVE", "2"}});
  EXPECT_FALSE(plan.exploring());
  EXPECT_FALSE(plan.exhaustive_bound().has_value());
  EXPECT_EQ(plan.strategy(0), Strategy::choices({0, 1}));
  EXPECT_TRUE(notes_mention(plan, "ignoring BUBBLE_EXHAUSTIVE=2"));
}

TEST(TestingTestPlan, BadExhaustiveRequestsAreRejectedNamingTheVariableAndValue) {
  expect_rejected({{"BUBBLE_EXHAUSTIVE", "two"}}, {"BUBBLE_EXHAUSTIVE", "two"});
  expect_rejected({{"BUBBLE_EXHAUSTIVE", "-1"}}, {"BUBBLE_EXHAUSTIVE", "-1"});
  expect_rejected({{"BUBBLE_EXHAUSTIVE", "4294967296"}}, {"BUBBLE_EXHAUSTIVE", "4294967296"});
  expect_rejected({{"BUBBLE_EXHAUSTIVE", "1"},
                   {"BUBBLE_SCHEDULE_SHARD_INDEX", "2"},
                   {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "2"}},
                  {"BUBBLE_SCHEDULE_SHARD_INDEX", "2"});
}

TEST(TestingTestPlan, AnExhaustiveSearchIsReducedUnlessBubbleReductionIsNone) {
  EXPECT_EQ(plan_of({{"BUBBLE_EXHAUSTIVE", "2"}}).reduction(), bubble::Reduction::dpor);
  EXPECT_EQ(plan_of({{"BUBBLE_EXHAUSTIVE", "2"}, {"BUBBLE_REDUCTION", "dpor"}}).reduction(),
            bubble::Reduction::dpor);
  EXPECT_EQ(plan_of({{"BUBBLE_EXHAUSTIVE", "2"}, {"BUBBLE_REDUCTION", " none "}}).reduction(),
            bubble::Reduction::none);
  expect_rejected({{"BUBBLE_EXHAUSTIVE", "2"}, {"BUBBLE_REDUCTION", "sleep-sets"}},
                  {"BUBBLE_REDUCTION", "sleep-sets"});
  const TestPlan sampled = plan_of({{"BUBBLE_SCHEDULES", "3"}, {"BUBBLE_REDUCTION", "none"}});
  EXPECT_TRUE(notes_mention(sampled, "ignoring BUBBLE_REDUCTION=none because BUBBLE_EXHAUSTIVE"));
}

TEST(TestingTestPlan, ShardVariablesSplitAnExhaustiveSearch) {
  const TestPlan plan = plan_of({{"BUBBLE_EXHAUSTIVE", "2"},
                                 {"BUBBLE_SCHEDULE_SHARD_INDEX", "1"},
                                 {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "3"}});
  ASSERT_TRUE(plan.exhaustive_bound().has_value());
  EXPECT_EQ(plan.shard(), (ScheduleShard{1, 3}));
  EXPECT_EQ(plan.describe(), "every schedule with at most 2 preemptions (shard 1/3)");
  const TestPlan from_gtest = plan_of({{"BUBBLE_EXHAUSTIVE", "1"},
                                       {"BUBBLE_SCHEDULE_SHARDS_FROM_GTEST", "1"},
                                       {"GTEST_SHARD_INDEX", "3"},
                                       {"GTEST_TOTAL_SHARDS", "4"}});
  EXPECT_EQ(from_gtest.shard(), (ScheduleShard{3, 4}));
}

TEST(TestingTestPlan, SeedAloneGivesOneRandomRun) {
  const TestPlan plan = plan_of({{"BUBBLE_SEED", "1234"}});
  EXPECT_FALSE(plan.exploring());
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan.strategy(0), Strategy::random(1234));
}

TEST(TestingTestPlan, SchedulesExploresConsecutiveSeedsAlternatingRandomAndPct) {
  const TestPlan plan = plan_of({{"BUBBLE_SCHEDULES", "6"}, {"BUBBLE_SEED", "100"}});
  EXPECT_TRUE(plan.exploring());
  EXPECT_EQ(plan.schedules(), 6u);
  EXPECT_EQ(plan.base_seed(), 100u);
  ASSERT_EQ(plan.size(), 6u);
  EXPECT_EQ(plan.strategy(0), Strategy::random(100));
  EXPECT_EQ(plan.strategy(1), Strategy::pct(101, 3));
  EXPECT_EQ(plan.strategy(2), Strategy::random(102));
  EXPECT_EQ(plan.strategy(5), Strategy::pct(105, 3));
  EXPECT_THROW((void)plan.strategy(6), std::out_of_range);
  EXPECT_EQ(plan.describe(), "6 schedules, random/pct seeds 100..105");
}

TEST(TestingTestPlan, SchedulesStartAtSeedZeroByDefault) {
  const TestPlan plan = plan_of({{"BUBBLE_SCHEDULES", "3"}});
  EXPECT_EQ(plan.base_seed(), 0u);
  EXPECT_EQ(plan.strategy(0), Strategy::random(0));
  EXPECT_EQ(plan.strategy(1), Strategy::pct(1, 3));
}

TEST(TestingTestPlan, ExplorationStrategiesAreAllDistinct) {
  const TestPlan plan = plan_of({{"BUBBLE_SCHEDULES", "1000"}});
  std::set<std::string> seen;
  for (std::uint64_t i = 0; i < plan.size(); ++i) seen.insert(plan.strategy(i).to_string());
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(TestingTestPlan, SeedsWrapAroundInsteadOfOverflowing) {
  EXPECT_EQ(exploration_strategy(UINT64_MAX, 2), Strategy::random(1));
}

TEST(TestingTestPlan, BadCountsAreRejectedNamingTheVariableAndValue) {
  expect_rejected({{"BUBBLE_SCHEDULES", "0"}}, {"BUBBLE_SCHEDULES", "\"0\""});
  expect_rejected({{"BUBBLE_SCHEDULES", "-3"}}, {"BUBBLE_SCHEDULES", "-3"});
  expect_rejected({{"BUBBLE_SCHEDULES", "ten"}}, {"BUBBLE_SCHEDULES", "ten"});
  expect_rejected({{"BUBBLE_SCHEDULES", "10x"}}, {"BUBBLE_SCHEDULES", "10x"});
  expect_rejected({{"BUBBLE_SEED", "1.5"}}, {"BUBBLE_SEED", "1.5"});
  expect_rejected({{"BUBBLE_SEED", "18446744073709551616"}},
                  {"BUBBLE_SEED", "18446744073709551616"});
}

TEST(TestingTestPlan, ParseEnvUintAcceptsDecimalsWithBlanksOnly) {
  EXPECT_EQ(parse_env_uint("X", "0"), 0u);
  EXPECT_EQ(parse_env_uint("X", " 42\n"), 42u);
  EXPECT_EQ(parse_env_uint("X", "18446744073709551615"), UINT64_MAX);
  EXPECT_THROW((void)parse_env_uint("X", ""), std::invalid_argument);
  EXPECT_THROW((void)parse_env_uint("X", "+1"), std::invalid_argument);
  EXPECT_THROW((void)parse_env_uint("X", "0x10"), std::invalid_argument);
  EXPECT_THROW((void)parse_env_uint("X", "1 2"), std::invalid_argument);
}

TEST(TestingTestPlan, ScheduleShardVariablesSplitTheSchedules) {
  const TestPlan plan = plan_of({{"BUBBLE_SCHEDULES", "10"},
                                 {"BUBBLE_SCHEDULE_SHARD_INDEX", "1"},
                                 {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "4"}});
  EXPECT_EQ(plan.shard(), (ScheduleShard{1, 4}));
  ASSERT_EQ(plan.size(), 3u);  // Schedules 1, 5 and 9.
  EXPECT_EQ(plan.schedule_index(0), 1u);
  EXPECT_EQ(plan.schedule_index(1), 5u);
  EXPECT_EQ(plan.schedule_index(2), 9u);
  EXPECT_EQ(plan.strategy(1), exploration_strategy(0, 5));
  EXPECT_EQ(plan.describe(), "3 of 10 schedules (shard 1/4), random/pct seeds 0..9");
}

// Property: for every number of schedules N and of shards T, the shards' schedules together are
// exactly 0..N-1, each once (no gap, no overlap), shard sizes differ by at most one, and each
// schedule has the same strategy as without sharding.
TEST(TestingTestPlan, ShardsCoverEveryScheduleExactlyOnce) {
  for (std::uint64_t n : {1u, 2u, 3u, 7u, 10u, 64u, 101u}) {
    for (std::uint64_t total : {1u, 2u, 3u, 4u, 7u, 16u, 200u}) {
      const TestPlan whole = TestPlan::explore(n, 77);
      std::vector<int> seen(n, 0);
      std::uint64_t smallest = UINT64_MAX;
      std::uint64_t largest = 0;
      for (std::uint64_t index = 0; index < total; ++index) {
        const TestPlan part = TestPlan::explore(n, 77, {index, total});
        smallest = std::min(smallest, part.size());
        largest = std::max(largest, part.size());
        for (std::uint64_t i = 0; i < part.size(); ++i) {
          const std::uint64_t k = part.schedule_index(i);
          ASSERT_LT(k, n);
          ++seen[k];
          EXPECT_EQ(part.strategy(i), whole.strategy(k));
        }
      }
      for (std::uint64_t k = 0; k < n; ++k) {
        EXPECT_EQ(seen[k], 1) << "schedule " << k << " of " << n << " with " << total << " shards";
      }
      EXPECT_LE(largest - smallest, 1u);
    }
  }
}

TEST(TestingTestPlan, AShardWithoutSchedulesHasSizeZero) {
  const TestPlan plan = plan_of({{"BUBBLE_SCHEDULES", "2"},
                                 {"BUBBLE_SCHEDULE_SHARD_INDEX", "3"},
                                 {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "4"}});
  EXPECT_TRUE(plan.exploring());
  EXPECT_EQ(plan.size(), 0u);
}

// Found by tests/fuzz/test_plan_fuzzer.cpp: size() rounded up by adding total - 1 to the count,
// which wrapped around 2^64 for counts and totals near it, and a shard with schedules had none.
TEST(TestingTestPlan, HugeCountsAndShardsGiveEachShardItsSchedules) {
  const std::string max = "18446744073709551615";  // 2^64 - 1
  const auto size = [](const std::string& schedules, const std::string& index,
                       const std::string& total) {
    return plan_of({{"BUBBLE_SCHEDULES", schedules},
                    {"BUBBLE_SCHEDULE_SHARD_INDEX", index},
                    {"BUBBLE_SCHEDULE_TOTAL_SHARDS", total}})
        .size();
  };
  EXPECT_EQ(size(max, "0", max), 1u);                                      // schedule 0
  EXPECT_EQ(size(max, "0", "9223372036854775808"), 2u);                    // schedules 0 and 2^63
  EXPECT_EQ(size(max, "9223372036854775806", "9223372036854775808"), 2u);  // 2^63 - 2, 2^64 - 2
  EXPECT_EQ(size(max, "9223372036854775807", "9223372036854775808"), 1u);  // 2^64 - 1 is past N
  EXPECT_EQ(size(max, "18446744073709551614", max), 1u);  // the last schedule, 2^64 - 2
  EXPECT_EQ(size(max, "0", "1"), 18446744073709551615u);
  EXPECT_EQ(size("18446744073709551614", "18446744073709551614", max), 0u);
  const TestPlan plan = plan_of({{"BUBBLE_SCHEDULES", max},
                                 {"BUBBLE_SCHEDULE_SHARD_INDEX", "9223372036854775806"},
                                 {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "9223372036854775808"}});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan.schedule_index(1), 18446744073709551614u);
}

TEST(TestingTestPlan, BadShardVariablesAreRejected) {
  expect_rejected({{"BUBBLE_SCHEDULES", "5"}, {"BUBBLE_SCHEDULE_SHARD_INDEX", "1"}},
                  {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "BUBBLE_SCHEDULE_SHARD_INDEX=1"});
  expect_rejected({{"BUBBLE_SCHEDULES", "5"}, {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "2"}},
                  {"BUBBLE_SCHEDULE_SHARD_INDEX", "BUBBLE_SCHEDULE_TOTAL_SHARDS=2"});
  expect_rejected({{"BUBBLE_SCHEDULES", "5"},
                   {"BUBBLE_SCHEDULE_SHARD_INDEX", "2"},
                   {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "2"}},
                  {"BUBBLE_SCHEDULE_SHARD_INDEX", "\"2\""});
  expect_rejected({{"BUBBLE_SCHEDULES", "5"},
                   {"BUBBLE_SCHEDULE_SHARD_INDEX", "0"},
                   {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "0"}},
                  {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "\"0\""});
  EXPECT_THROW((void)TestPlan::explore(0, 0), std::invalid_argument);
  EXPECT_THROW((void)TestPlan::explore(5, 0, {0, 0}), std::invalid_argument);
  EXPECT_THROW((void)TestPlan::explore(5, 0, {3, 3}), std::invalid_argument);
}

TEST(TestingTestPlan, ShardVariablesWithoutSchedulesAreIgnoredWithANote) {
  const TestPlan plan =
      plan_of({{"BUBBLE_SCHEDULE_SHARD_INDEX", "1"}, {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "2"}});
  EXPECT_EQ(plan.size(), 1u);
  EXPECT_TRUE(notes_mention(plan, "BUBBLE_SCHEDULES is not set"));
}

// GoogleTest's shard variables shard tests: by default they never split a test's schedules (that
// would lose the schedules of the shards that do not run the test).
TEST(TestingTestPlan, GtestShardVariablesDoNotSplitSchedulesByDefault) {
  const TestPlan plan = plan_of(
      {{"BUBBLE_SCHEDULES", "10"}, {"GTEST_SHARD_INDEX", "1"}, {"GTEST_TOTAL_SHARDS", "3"}});
  EXPECT_EQ(plan.shard(), (ScheduleShard{0, 1}));
  EXPECT_EQ(plan.size(), 10u);
  EXPECT_TRUE(notes_mention(plan, "each test explores all of its 10 schedules"));
}

TEST(TestingTestPlan, GtestShardVariablesSplitSchedulesWhenAskedTo) {
  const TestPlan plan = plan_of({{"BUBBLE_SCHEDULES", "10"},
                                 {"BUBBLE_SCHEDULE_SHARDS_FROM_GTEST", "1"},
                                 {"GTEST_SHARD_INDEX", "1"},
                                 {"GTEST_TOTAL_SHARDS", "3"}});
  EXPECT_EQ(plan.shard(), (ScheduleShard{1, 3}));
  EXPECT_EQ(plan.size(), 3u);  // Schedules 1, 4, 7.
  EXPECT_EQ(plan.schedule_index(2), 7u);
}

TEST(TestingTestPlan, ExplicitScheduleShardsWinOverGtestShards) {
  const TestPlan plan = plan_of({{"BUBBLE_SCHEDULES", "10"},
                                 {"BUBBLE_SCHEDULE_SHARDS_FROM_GTEST", "1"},
                                 {"BUBBLE_SCHEDULE_SHARD_INDEX", "0"},
                                 {"BUBBLE_SCHEDULE_TOTAL_SHARDS", "2"},
                                 {"GTEST_SHARD_INDEX", "1"},
                                 {"GTEST_TOTAL_SHARDS", "3"}});
  EXPECT_EQ(plan.shard(), (ScheduleShard{0, 2}));
}

TEST(TestingTestPlan, BadGtestShardingRequestsAreRejected) {
  expect_rejected({{"BUBBLE_SCHEDULES", "10"}, {"BUBBLE_SCHEDULE_SHARDS_FROM_GTEST", "yes"}},
                  {"BUBBLE_SCHEDULE_SHARDS_FROM_GTEST", "yes"});
  expect_rejected({{"BUBBLE_SCHEDULES", "10"},
                   {"BUBBLE_SCHEDULE_SHARDS_FROM_GTEST", "1"},
                   {"GTEST_SHARD_INDEX", "3"},
                   {"GTEST_TOTAL_SHARDS", "3"}},
                  {"GTEST_SHARD_INDEX", "\"3\""});
}

TEST(TestingTestPlan, TraceVariableNamesTheTraceFile) {
  EXPECT_EQ(plan_of({}).trace_path(), std::nullopt);
  EXPECT_EQ(plan_of({{"BUBBLE_TRACE", ""}}).trace_path(), std::nullopt);
  EXPECT_EQ(plan_of({{"BUBBLE_TRACE", "/tmp/t.txt"}}).trace_path(),
            std::optional<std::string>("/tmp/t.txt"));
  const TestPlan explore = plan_of({{"BUBBLE_TRACE", "t"}, {"BUBBLE_SCHEDULES", "3"}});
  EXPECT_EQ(explore.trace_path(), std::optional<std::string>("t"));
  EXPECT_EQ(explore.size(), 3u);
}

TEST(TestingTestPlan, ProcessEnvironmentReadsTheRealEnvironment) {
  const EnvLookup env = process_environment();
  const char* path = std::getenv("PATH");
  if (path != nullptr) {
    EXPECT_EQ(env("PATH"), std::optional<std::string>(path));
  }
  EXPECT_EQ(env("BUBBLE_TESTING_SURELY_NOT_SET_ANYWHERE_42"), std::nullopt);
}

}  // namespace
}  // namespace bubble::testing

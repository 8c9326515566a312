// Tests of BUBBLE_TEST and of bubble::testing::explore(), the engine behind it: the body runs in
// a bubble, exploration runs N distinct schedules and stops at the first failure, shards split
// the schedules, and a failure is reported with one line that replays it.
//
// Failures are provoked only under a gtest-spi ScopedFakeTestPartResultReporter, which captures
// them, so no test here has to fail.
#include <bubble/testing.hpp>
#include <bubble/testing/case.hpp>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "racy_counter.hpp"

using namespace std::chrono_literals;

namespace bubble::testing {
namespace {

// --- BUBBLE_TEST itself ------------------------------------------------------------------------

BUBBLE_TEST(TestingBubbleTest, BodyRunsAsTheRootOfABubbleInVirtualTime) {
  ASSERT_TRUE(in_bubble());
  Runtime& rt = current_runtime();
  EXPECT_TRUE(rt.controlled());
  const TimePoint start = rt.now();
  EXPECT_EQ(rt.wall_now(), kDefaultStart);
  rt.sleep_for(1h);
  EXPECT_EQ(rt.now() - start, 1h);
  EXPECT_EQ(rt.wall_now(), kDefaultStart + 1h);
}

BUBBLE_TEST(TestingBubbleTest, ThreadsStartedByTheBodyBelongToTheBubble) {
  Runtime& rt = current_runtime();
  const TimePoint start = rt.now();
  bool child_in_bubble = false;
  Duration child_woke_at{};
  std::unique_ptr<ThreadHandle> child = rt.spawn("child", [&] {
    child_in_bubble = in_bubble() && &current_runtime() == &rt;
    rt.sleep_for(2s);
    child_woke_at = rt.now() - start;
  });
  rt.sleep_for(1s);
  EXPECT_EQ(rt.now() - start, 1s);
  child->join();
  EXPECT_TRUE(child_in_bubble);
  EXPECT_EQ(child_woke_at, 2s);
  EXPECT_EQ(rt.now() - start, 2s);
}

BUBBLE_TEST(TestingBubbleTest, BodySeesTheMembersOfTestingTest) {
  EXPECT_FALSE(HasFatalFailure());
  RecordProperty("bubble", "yes");
}

// A plain TEST in the same suite as BUBBLE_TESTs: both kinds mix, and a plain test is not in a
// bubble.
TEST(TestingBubbleTest, PlainTestInTheSameSuiteIsNotInABubble) {
  EXPECT_FALSE(in_bubble());
}

TEST(TestingBubbleTest, TestIsRegisteredUnderItsSuiteAndName) {
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  int found = 0;
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    if (std::string(suite.name()) != "TestingBubbleTest") continue;
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const std::string name = suite.GetTestInfo(j)->name();
      found += name == "BodyRunsAsTheRootOfABubbleInVirtualTime" ? 1 : 0;
    }
  }
  EXPECT_EQ(found, 1);
}

TEST(TestingBubbleTest, CurrentTestCommandRunsOnlyThisTest) {
  const std::string command = current_test_command();
  const std::vector<std::string> argv = ::testing::internal::GetArgvs();
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(command.rfind(argv[0], 0), 0u) << command;  // Starts with the program as run.
  EXPECT_NE(command.find(" --gtest_filter=TestingBubbleTest.CurrentTestCommandRunsOnlyThisTest"),
            std::string::npos)
      << command;
}

// BUBBLE_TEST_F: a fixture's members are visible in the body; SetUp runs outside the bubble.
class TestingBubbleFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    set_up_in_bubble_ = in_bubble();
    value_ = 41;
  }
  bool set_up_in_bubble_ = true;
  int value_ = 0;
};

BUBBLE_TEST_F(TestingBubbleFixture, BodySeesTheFixtureAndRunsInABubble) {
  EXPECT_FALSE(set_up_in_bubble_);
  EXPECT_EQ(value_, 41);
  ASSERT_TRUE(in_bubble());
  const TimePoint start = current_runtime().now();
  sleep_for(5ms);
  EXPECT_EQ(current_runtime().now() - start, 5ms);
}

TEST_F(TestingBubbleFixture, PlainTestFInTheSameFixtureIsNotInABubble) {
  EXPECT_FALSE(in_bubble());
  EXPECT_EQ(value_, 41);
}

// --- explore(): exploration ---------------------------------------------------------------------

using test_programs::interleave;  // The interleaving program (racy_counter.hpp).

TEST(TestingExplore, RunsEveryScheduleOfThePlanWithItsOwnStrategy) {
  const std::uint64_t n = 40;
  const TestPlan plan = TestPlan::explore(n, 1000);
  int bodies = 0;
  std::set<std::string> orders;
  std::vector<std::uint64_t> indices;
  std::set<std::string> strategies;
  std::set<std::vector<std::uint32_t>> schedules;
  ExploreOptions options;
  options.on_success = [&](std::uint64_t k, const RunResult& r) {
    indices.push_back(k);
    strategies.insert(r.strategy.to_string());
    schedules.insert(r.schedule.picks);
    // Schedule k ran with the plan's seed for k (pct's step estimate is filled in by explore).
    EXPECT_EQ(r.strategy.seed(), 1000 + k);
    EXPECT_EQ(r.strategy.kind(), k % 2 == 0 ? Strategy::Kind::random : Strategy::Kind::pct);
  };
  const ExploreOutcome outcome = explore(
      plan,
      [&](Runtime& rt) {
        ++bodies;
        orders.insert(interleave(rt));
      },
      options);
  EXPECT_FALSE(outcome.failed);
  EXPECT_EQ(outcome.runs, n);
  EXPECT_EQ(bodies, static_cast<int>(n));
  ASSERT_EQ(indices.size(), n);
  for (std::uint64_t k = 0; k < n; ++k) EXPECT_EQ(indices[k], k);
  EXPECT_EQ(strategies.size(), n);
  // The strategies differ; so do the interleavings they produce (15 steps of 3 threads have
  // 756756 orders: a handful of repeats at most).
  EXPECT_GE(schedules.size(), n * 3 / 4);
  EXPECT_GE(orders.size(), n * 3 / 4);
}

TEST(TestingExplore, ShardsTogetherRunEveryScheduleOnce) {
  const std::uint64_t n = 11;
  const std::uint64_t total = 3;
  std::vector<int> ran(n, 0);
  for (std::uint64_t index = 0; index < total; ++index) {
    ExploreOptions options;
    options.on_success = [&](std::uint64_t k, const RunResult&) { ++ran.at(k); };
    const ExploreOutcome outcome = explore(
        TestPlan::explore(n, 5, {index, total}), [](Runtime& rt) { (void)interleave(rt); },
        options);
    EXPECT_EQ(outcome.runs, TestPlan::explore(n, 5, {index, total}).size());
  }
  for (std::uint64_t k = 0; k < n; ++k) EXPECT_EQ(ran[k], 1) << "schedule " << k;
}

using test_programs::racy_counter;  // The lost-update program (racy_counter.hpp).

TEST(TestingExplore, FifoNeverPreemptsSoTheRaceIsInvisibleToAPlainRun) {
  ::testing::TestPartResultArray parts;
  ExploreOutcome outcome;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    outcome = explore(TestPlan{}, [](Runtime& rt) { EXPECT_EQ(racy_counter(rt), 2); });
  }
  EXPECT_FALSE(outcome.failed);
  EXPECT_EQ(parts.size(), 0);
}

TEST(TestingExplore, StopsAtTheFirstFailingScheduleAndPrintsOneReplayLine) {
  const std::string command = "./framework_tests --gtest_filter=Suite.Name";
  ExploreOptions options;
  options.replay_command = command;
  int bodies = 0;
  ::testing::TestPartResultArray parts;
  ExploreOutcome outcome;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    outcome = explore(
        TestPlan::explore(500, 0),
        [&](Runtime& rt) {
          ++bodies;
          EXPECT_EQ(racy_counter(rt), 2) << "lost update";
        },
        options);
  }
  ASSERT_TRUE(outcome.failed) << "no schedule of 500 preempted between the read and the write";
  EXPECT_EQ(outcome.runs, outcome.failed_schedule + 1);
  // The failing schedule was shrunk: its search ran the body too, and found the one preemption
  // the lost update needs.
  ASSERT_TRUE(outcome.shrunk.has_value());
  EXPECT_EQ(outcome.shrunk->preemptions, 1u);
  EXPECT_EQ(bodies, static_cast<int>(outcome.runs + outcome.shrunk->runs));
  EXPECT_EQ(outcome.replay_line,
            "replay: BUBBLE_STRATEGY=" + outcome.failed_strategy.to_string() + " " + command);

  // Reported: the assertion's own failure, then one failure that names the schedule and ends
  // with the replay line and the shrunk schedule's line; one replay line and one shrunk line in
  // all (the search's runs report nothing).
  ASSERT_EQ(parts.size(), 2);
  EXPECT_NE(std::string(parts.GetTestPartResult(0).message()).find("lost update"),
            std::string::npos);
  const std::string last = parts.GetTestPartResult(1).message();
  EXPECT_NE(last.find("schedule " + std::to_string(outcome.failed_schedule) + " of 500"),
            std::string::npos)
      << last;
  const std::string shrunk_strategy = outcome.shrunk->schedule.to_strategy().to_string();
  const std::string tail = outcome.replay_line + "\nshrunk to 1 preemption (the failing run had ";
  ASSERT_NE(last.find(tail), std::string::npos) << last;
  const std::string ending = " runs): BUBBLE_STRATEGY=" + shrunk_strategy + " " + command;
  EXPECT_EQ(last.substr(last.size() - ending.size()), ending) << last;
  int replay_lines = 0;
  int shrunk_lines = 0;
  for (int i = 0; i < parts.size(); ++i) {
    const std::string m = parts.GetTestPartResult(i).message();
    for (std::size_t at = m.find("replay: BUBBLE_STRATEGY="); at != std::string::npos;
         at = m.find("replay: BUBBLE_STRATEGY=", at + 1)) {
      ++replay_lines;
    }
    for (std::size_t at = m.find("shrunk to "); at != std::string::npos;
         at = m.find("shrunk to ", at + 1)) {
      ++shrunk_lines;
    }
  }
  EXPECT_EQ(replay_lines, 1);
  EXPECT_EQ(shrunk_lines, 1);

  // The shrunk strategy reproduces the failure too.
  int shrunk_replayed = 0;
  (void)explore(TestPlan::single(Strategy::parse(shrunk_strategy)),
                [&shrunk_replayed](Runtime& rt) { shrunk_replayed = racy_counter(rt); });
  EXPECT_EQ(shrunk_replayed, 1) << "replay of " << shrunk_strategy;

  // Replaying the printed strategy (what BUBBLE_STRATEGY=... does) reproduces the failure.
  const std::string prefix = "replay: BUBBLE_STRATEGY=";
  const std::string text = outcome.replay_line.substr(
      prefix.size(), outcome.replay_line.find(' ', prefix.size()) - prefix.size());
  int replayed = 0;
  const ExploreOutcome again = explore(TestPlan::single(Strategy::parse(text)),
                                       [&replayed](Runtime& rt) { replayed = racy_counter(rt); });
  EXPECT_FALSE(again.failed);                      // The body asserts nothing this time...
  EXPECT_EQ(replayed, 1) << "replay of " << text;  // ...but the update is lost again.
}

TEST(TestingExplore, ShrinkingCanBeSwitchedOff) {
  ExploreOptions options;
  options.shrink.reset();
  ::testing::TestPartResultArray parts;
  ExploreOutcome outcome;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    outcome = explore(
        TestPlan::explore(500, 0), [](Runtime& rt) { EXPECT_EQ(racy_counter(rt), 2); }, options);
  }
  ASSERT_TRUE(outcome.failed);
  EXPECT_FALSE(outcome.shrunk.has_value());
  EXPECT_EQ(outcome.message.find("shrunk to"), std::string::npos) << outcome.message;
}

// With ThreadModel::os_threads every bubble thread reports its GoogleTest failures on an OS
// thread of its own: the exploration still sees the one a spawned thread reports, fails, and
// replays it, and the test's own capture (on this thread) receives the report.
TEST(TestingExplore, FailuresOfSpawnedThreadsOnOwnOsThreadsAreFound) {
  ExploreOptions options;
  options.options.thread_model = bubble::ThreadModel::os_threads;
  ::testing::TestPartResultArray parts;
  ExploreOutcome outcome;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    outcome = explore(
        TestPlan::explore(200, 0),
        [](Runtime& rt) {
          const int total = racy_counter(rt);
          auto checker = rt.spawn("checker", [total] { EXPECT_EQ(total, 2) << "lost update"; });
          checker->join();
        },
        options);
  }
  ASSERT_TRUE(outcome.failed);
  EXPECT_NE(outcome.message.find("replay: BUBBLE_STRATEGY="), std::string::npos) << outcome.message;
  bool reported = false;
  for (int i = 0; i < parts.size(); ++i) {
    reported = reported || std::string(parts.GetTestPartResult(i).message()).find("lost update") !=
                               std::string::npos;
  }
  EXPECT_TRUE(reported);
}

TEST(TestingExplore, ReplayingTheFailingStrategyReproducesTheSameRun) {
  ExploreOutcome outcome;
  {
    ::testing::TestPartResultArray parts;
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    outcome =
        explore(TestPlan::explore(500, 0), [](Runtime& rt) { EXPECT_EQ(racy_counter(rt), 2); });
  }
  ASSERT_TRUE(outcome.failed);
  for (int attempt = 0; attempt < 3; ++attempt) {
    int result = 0;
    Options by_strategy;
    by_strategy.strategy = outcome.failed_strategy;
    const RunResult r = run(by_strategy, [&result](Runtime& rt) { result = racy_counter(rt); });
    EXPECT_EQ(result, 1) << "replay of " << outcome.failed_strategy.to_string();
    // The recorded schedule replays it too.
    int again = 0;
    Options by_schedule;
    by_schedule.replay = r.schedule;
    (void)run(by_schedule, [&again](Runtime& rt) { again = racy_counter(rt); });
    EXPECT_EQ(again, 1) << "replay of choices:" << r.schedule.to_string();
  }
}

// --- explore(): BUBBLE_TRACE ------------------------------------------------------------------

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(TestingExplore, TraceOfTheFailingRunIsWrittenAsTextAndJson) {
  const std::string path = ::testing::TempDir() + "bubble_testing_failing_trace.txt";
  std::remove(path.c_str());
  std::remove((path + ".json").c_str());
  ExploreOptions options;
  options.trace_path = path;
  ExploreOutcome outcome;
  {
    ::testing::TestPartResultArray parts;
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    outcome = explore(
        TestPlan::explore(500, 0), [](Runtime& rt) { EXPECT_EQ(racy_counter(rt), 2); }, options);
  }
  ASSERT_TRUE(outcome.failed);
  const std::string text = read_file(path);
  const std::string json = read_file(path + ".json");
  EXPECT_NE(text.find("counter.read"), std::string::npos) << text;
  EXPECT_NE(json.find("counter.read"), std::string::npos) << json;
  EXPECT_NE(json.find('{'), std::string::npos);

  // It is the failing run's trace: replaying its strategy with a trace gives the same text.
  Options replay;
  replay.strategy = outcome.failed_strategy;
  replay.trace = true;
  const RunResult again = run(replay, [](Runtime& rt) { (void)racy_counter(rt); });
  EXPECT_EQ(again.trace_text(), text);
}

TEST(TestingExplore, WithoutFailureTheLastRunsTraceIsWritten) {
  const std::string path = ::testing::TempDir() + "bubble_testing_last_trace.txt";
  std::remove(path.c_str());
  ExploreOptions options;
  options.trace_path = path;
  const ExploreOutcome outcome = explore(
      TestPlan::single(Strategy::random(3)), [](Runtime& rt) { rt.sleep_for(2s); }, options);
  EXPECT_FALSE(outcome.failed);
  const std::string text = read_file(path);
  EXPECT_NE(text.find("2s"), std::string::npos) << text;
}

TEST(TestingExplore, AnUnwritableTracePathIsReported) {
  ExploreOptions options;
  options.trace_path = "/nonexistent-directory-of-bubble/trace.txt";
  ::testing::TestPartResultArray parts;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    (void)explore(
        TestPlan{}, [](Runtime&) {}, options);
  }
  ASSERT_EQ(parts.size(), 1);
  EXPECT_NE(std::string(parts.GetTestPartResult(0).message()).find(*options.trace_path),
            std::string::npos);
}

// --- explore(): failures of every kind are reported with the replay line --------------------

// Runs `body` once under fifo with a known replay command; returns the captured gtest results.
struct Captured {
  ExploreOutcome outcome;
  std::vector<std::string> messages;
  std::vector<bool> fatal;
};

Captured run_capturing(const std::function<void(Runtime&)>& body) {
  Captured c;
  ::testing::TestPartResultArray parts;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    ExploreOptions options;
    options.replay_command = "./prog --gtest_filter=S.N";
    c.outcome = explore(TestPlan{}, body, options);
  }
  for (int i = 0; i < parts.size(); ++i) {
    c.messages.push_back(parts.GetTestPartResult(i).message());
    c.fatal.push_back(parts.GetTestPartResult(i).fatally_failed());
  }
  return c;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const std::string kFifoReplay = "replay: BUBBLE_STRATEGY=fifo ./prog --gtest_filter=S.N";

TEST(TestingExplore, AssertReturnsFromTheBodyOnlyAndTheRunIsReported) {
  bool after_assert = false;
  bool bubble_went_on = false;
  const Captured c = run_capturing([&](Runtime& rt) {
    std::unique_ptr<ThreadHandle> t = rt.spawn("t", [&] {
      [&] {
        ASSERT_EQ(1, 2) << "in a bubble thread";
        after_assert = true;
      }();
      bubble_went_on = true;
    });
    t->join();
  });
  EXPECT_FALSE(after_assert);
  EXPECT_TRUE(bubble_went_on);
  ASSERT_TRUE(c.outcome.failed);
  ASSERT_EQ(c.messages.size(), 2u);
  EXPECT_TRUE(c.fatal[0]);
  EXPECT_NE(c.messages[0].find("in a bubble thread"), std::string::npos);
  EXPECT_NE(c.messages[1].find("bubble: the run (fifo) failed"), std::string::npos);
  EXPECT_TRUE(ends_with(c.messages[1], kFifoReplay)) << c.messages[1];
  EXPECT_EQ(c.outcome.replay_line, kFifoReplay);
}

TEST(TestingExplore, AssertNoFatalFailureSeesAHelpersFailureDuringTheRun) {
  bool after_helper = false;
  const Captured c = run_capturing([&](Runtime&) {
    ASSERT_NO_FATAL_FAILURE([] { ASSERT_TRUE(false) << "in the helper"; }());
    after_helper = true;
  });
  EXPECT_FALSE(after_helper);
  ASSERT_TRUE(c.outcome.failed);
  ASSERT_GE(c.messages.size(), 2u);
  EXPECT_NE(c.messages[0].find("in the helper"), std::string::npos) << c.messages[0];
  EXPECT_TRUE(ends_with(c.messages.back(), kFifoReplay)) << c.messages.back();
}

TEST(TestingExplore, AnExceptionFailsTheRunWithTheReplayLine) {
  const Captured c = run_capturing([](Runtime&) { throw std::runtime_error("boom in the body"); });
  ASSERT_TRUE(c.outcome.failed);
  ASSERT_EQ(c.messages.size(), 1u);
  EXPECT_NE(c.messages[0].find("boom in the body"), std::string::npos) << c.messages[0];
  EXPECT_TRUE(ends_with(c.messages[0], kFifoReplay)) << c.messages[0];
}

TEST(TestingExplore, AnExceptionOfAnyTypeFailsTheRunWithTheReplayLine) {
  const Captured c = run_capturing([](Runtime&) { throw 42; });
  ASSERT_TRUE(c.outcome.failed);
  ASSERT_EQ(c.messages.size(), 1u);
  EXPECT_NE(c.messages[0].find("unknown type"), std::string::npos) << c.messages[0];
  EXPECT_TRUE(ends_with(c.messages[0], kFifoReplay)) << c.messages[0];
}

// RapidCheck's RC_ASSERT throws a type RapidCheck does not publish: the run still fails, and the
// message says what may have escaped.
TEST(TestingExplore, ARapidCheckAssertionFailsTheRunWithTheReplayLine) {
  const Captured c = run_capturing([](Runtime&) { RC_ASSERT(1 == 2); });
  ASSERT_TRUE(c.outcome.failed);
  ASSERT_EQ(c.messages.size(), 1u);
  EXPECT_NE(c.messages[0].find("unknown type"), std::string::npos) << c.messages[0];
  EXPECT_NE(c.messages[0].find("RC_ASSERT"), std::string::npos) << c.messages[0];
  EXPECT_TRUE(ends_with(c.messages[0], kFifoReplay)) << c.messages[0];
}

TEST(TestingExplore, ABubbleAssertFailsTheRunWithItsMessageAndTheReplayLine) {
  const Captured c = run_capturing([](Runtime&) { BUBBLE_ASSERT(1 == 2); });
  ASSERT_TRUE(c.outcome.failed);
  ASSERT_EQ(c.messages.size(), 1u);
  EXPECT_NE(c.messages[0].find("BUBBLE_ASSERT(1 == 2)"), std::string::npos) << c.messages[0];
  EXPECT_NE(c.messages[0].find("testing_bubble_test_test.cpp:"), std::string::npos)
      << c.messages[0];
  EXPECT_TRUE(ends_with(c.messages[0], kFifoReplay)) << c.messages[0];
}

TEST(TestingExplore, ADeadlockFailsTheRunWithTheReplayLine) {
  const Captured c = run_capturing([](Runtime& rt) {
    Waiter w;
    rt.prepare(w);
    (void)rt.park(w, kNoDeadline, {"forever", 7, SourceLocation::current()});
  });
  ASSERT_TRUE(c.outcome.failed);
  ASSERT_EQ(c.messages.size(), 1u);
  EXPECT_NE(c.messages[0].find("forever"), std::string::npos) << c.messages[0];
  EXPECT_TRUE(ends_with(c.messages[0], kFifoReplay)) << c.messages[0];
}

TEST(TestingExplore, ASkipInTheBodySkipsTheTestAndEndsTheExploration) {
  int bodies = 0;
  ::testing::TestPartResultArray parts;
  ExploreOutcome outcome;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    outcome = explore(TestPlan::explore(5, 0), [&bodies](Runtime&) {
      ++bodies;
      GTEST_SKIP() << "not today";
    });
  }
  EXPECT_TRUE(outcome.skipped);
  EXPECT_FALSE(outcome.failed);
  EXPECT_EQ(bodies, 1);
  ASSERT_EQ(parts.size(), 1);
  EXPECT_TRUE(parts.GetTestPartResult(0).skipped());
}

TEST(TestingExplore, SuccessReportsNothing) {
  const Captured c = run_capturing([](Runtime& rt) { rt.sleep_for(1s); });
  EXPECT_FALSE(c.outcome.failed);
  EXPECT_EQ(c.outcome.runs, 1u);
  EXPECT_TRUE(c.messages.empty());
}

}  // namespace
}  // namespace bubble::testing

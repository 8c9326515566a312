#pragma once

#include <functional>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing/explore.hpp>
#include <bubble/testing/test_plan.hpp>

// BUBBLE_TEST(Suite, Name) { body } defines a GoogleTest test whose body runs as the root thread
// of a bubble (see bubble/bubble.hpp): time is virtual, every thread the body starts belongs to
// the bubble, and the schedule is chosen by a strategy.
//
//   BUBBLE_TEST(Timer, FiresAfterExactlyOneSecond) {
//     bubble::Runtime& rt = bubble::current_runtime();   // the bubble (in_bubble() is true)
//     const bubble::TimePoint start = rt.now();
//     rt.sleep_for(1s);                                   // returns at once in real time
//     EXPECT_EQ(rt.now() - start, 1s);                    // exact
//   }
//
// The body may use EXPECT_* and ASSERT_* (ASSERT_* returns from the body, or from the function
// it is in) in any bubble thread, and the members of ::testing::Test. It runs on the test's OS
// thread; every bubble thread does. The failures of a run are held back until it ends and then
// reported together (see explore()), so inside the body HasFailure() does not see them; use
// ASSERT_NO_FATAL_FAILURE(helper()) to stop after a helper's fatal failure.
//
// By default the body runs once under fifo (no preemption). The environment variables
// BUBBLE_STRATEGY, BUBBLE_SEED, BUBBLE_SCHEDULES and BUBBLE_SCHEDULE_SHARD_INDEX /
// BUBBLE_SCHEDULE_TOTAL_SHARDS choose one other strategy or explore many schedules; see
// bubble/testing/test_plan.hpp. A failing run (a failed assertion, an exception, a deadlock, an
// exhausted budget) fails the test with a message that ends with one line reproducing it:
//   replay: BUBBLE_STRATEGY=random:17 ./framework_tests --gtest_filter=Suite.Name
//
// BUBBLE_TEST and TEST may be mixed in one suite. The test is registered with
// ::testing::RegisterTest, so it is listed, filtered and sharded like any TEST.
//
// BUBBLE_TEST_F(Fixture, Name) { body } is the same for a test fixture (a class derived from
// ::testing::Test), like TEST_F: the body is a member of a class derived from Fixture. The
// fixture's constructor, SetUp() and TearDown() run on the test's thread outside the bubble, once
// per test, not once per explored schedule: create bubble objects (threads, primitives, anything
// that takes a Runtime&) in the body, and do not let one schedule's run depend on what an earlier
// one left in the fixture.
namespace bubble::testing {

// Runs `body` as BUBBLE_TEST does: reads the environment (TestPlan::from_environment) through
// `env`, prints each distinct note once per process, and runs explore() with the current test's
// replay command, reporting at the current test's file and line. A malformed variable fails the
// test with a message naming it and runs nothing; a schedule shard with no schedule skips the
// test (as GTEST_SKIP does) with a message saying so. Call it from a GoogleTest test, on the
// test's thread, outside any bubble. Returns what explore() returned (nothing run: runs == 0).
ExploreOutcome run_test(const std::function<void(Runtime&)>& body,
                        const EnvLookup& env = process_environment());

// The same, with `run_options` as the options of every run (ExploreOptions::options: its strategy
// and replay are the plan's).
ExploreOutcome run_test(const std::function<void(Runtime&)>& body, const Options& run_options,
                        const EnvLookup& env = process_environment());

// The base class of BUBBLE_TEST / BUBBLE_TEST_F tests (kInterceptStd false) and of
// BUBBLE_STD_TEST / BUBBLE_STD_TEST_F tests (true): TestBody() runs BubbleBody() through
// run_test(), with Options::intercept_std = kInterceptStd.
template <class Fixture, bool kInterceptStd = false>
class BubbleTestOf : public Fixture {
 protected:
  // The user's body; runs as the root thread of a bubble.
  virtual void BubbleBody() = 0;

 private:
  void TestBody() final {
    Options options;
    options.intercept_std = kInterceptStd;
    run_test([this](Runtime&) { BubbleBody(); }, options);
  }
};

}  // namespace bubble::testing

#define BUBBLE_TEST_CLASS_NAME_(suite, name) suite##_##name##_BubbleTest

#define BUBBLE_TEST_IMPL_(suite, name, fixture, intercept_std)                            \
  static_assert(sizeof(#suite) > 1, "BUBBLE_TEST: the suite name must not be empty");     \
  static_assert(sizeof(#name) > 1, "BUBBLE_TEST: the test name must not be empty");       \
  class BUBBLE_TEST_CLASS_NAME_(suite, name) final                                        \
      : public ::bubble::testing::BubbleTestOf<fixture, intercept_std> {                  \
   protected:                                                                             \
    void BubbleBody() override;                                                           \
  };                                                                                      \
  [[maybe_unused]] static ::testing::TestInfo* const suite##_##name##_bubble_test_info_ = \
      ::testing::RegisterTest(                                                            \
          #suite, #name, nullptr, nullptr, __FILE__, __LINE__,                            \
          []() -> fixture* { return new BUBBLE_TEST_CLASS_NAME_(suite, name); });         \
  void BUBBLE_TEST_CLASS_NAME_(suite, name)::BubbleBody()

#define BUBBLE_TEST(suite, name) BUBBLE_TEST_IMPL_(suite, name, ::testing::Test, false)

#define BUBBLE_TEST_F(fixture, name) BUBBLE_TEST_IMPL_(fixture, name, fixture, false)

// BUBBLE_STD_TEST(Suite, Name) and BUBBLE_STD_TEST_F(Fixture, Name): BUBBLE_TEST and
// BUBBLE_TEST_F whose runs set Options::intercept_std, so that the body's std::thread, std::mutex,
// std::condition_variable, std::chrono clocks and sleeps are the bubble's, in a program that links
// bubble::interpose (docs/unmodified-code.md). Without the interposer linked they are BUBBLE_TEST.
#define BUBBLE_STD_TEST(suite, name) BUBBLE_TEST_IMPL_(suite, name, ::testing::Test, true)

#define BUBBLE_STD_TEST_F(fixture, name) BUBBLE_TEST_IMPL_(fixture, name, fixture, true)

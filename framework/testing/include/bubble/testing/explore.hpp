#pragma once

#include <functional>
#include <string>

#include <bubble/runtime.hpp>
#include <bubble/testing/exploration.hpp>
#include <bubble/testing/test_plan.hpp>

// explore() for GoogleTest: the exploration of exploration.hpp with GoogleTest as its host
// framework.
namespace bubble::testing {

// Runs `body` as the root thread of a fresh bubble (bubble::run) once for each run of `plan`, in
// order, with the plan's strategy, and stops at the first run that fails. An exhaustive plan runs
// the schedules of a ScheduleTree with the plan's bound instead (Options::decisions is then the
// explorer's), depth first, until the tree is done or a run fails. In an exploration, a
// pct strategy with the default step estimate gets the number of steps of the exploration's first
// run as its estimate (pct:<seed>:3:<steps>), so that PCT's change points fall inside the run.
// Must be called from a GoogleTest test, on the test's thread, outside any bubble.
//
// A run fails when bubble::run throws (an exception escaped a bubble thread, a deadlock, an
// exhausted budget) or when a GoogleTest assertion failed on any bubble thread during the run
// (EXPECT_* and ASSERT_*; ASSERT_* returns from the function it is in, nothing more). GoogleTest
// results produced during a run are held back and re-reported, unchanged, when the run ends, so
// the failures of one schedule are reported together; inside the body, ::testing::Test::
// HasFailure() therefore does not see the current run's failures (ASSERT_NO_FATAL_FAILURE does).
//
// A failing run adds exactly one more GoogleTest failure, whose message says which schedule
// failed and why and ends with one line that reproduces the run exactly:
//   replay: BUBBLE_STRATEGY=random:17 ./framework_tests --gtest_filter=Suite.Name
// (for a bubble::RunFailure, the failure's own message, which already ends with that line).
//
// Returns what happened; never throws for a failure of the body.
//
// This is explore(host, plan, body, options) with GoogleTest as the host.
ExploreOutcome explore(const TestPlan& plan, const std::function<void(Runtime&)>& body,
                       const ExploreOptions& options = {});

// The command that runs only the current GoogleTest test of this process, for replay lines:
// the program (argv[0] as given to InitGoogleTest, else /proc/self/exe) followed by
// "--gtest_filter=<Suite>.<Name>", and by "--gtest_also_run_disabled_tests" for a disabled test
// (its suite's or its own name starts with DISABLED_). Only the program when called outside a
// test.
std::string current_test_command();

}  // namespace bubble::testing

#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <bubble/bubble.hpp>
#include <bubble/runtime.hpp>
#include <bubble/shrink.hpp>
#include <bubble/strategy.hpp>
#include <bubble/testing/host.hpp>
#include <bubble/testing/test_plan.hpp>

// The engine behind the bubble test macros of every host framework (BUBBLE_TEST for GoogleTest,
// BUBBLE_CATCH_TEST_CASE for Catch2, BUBBLE_DOCTEST_TEST_CASE for doctest): runs a test body in
// fresh bubbles, once per run of a TestPlan, and reports the outcome to the host framework
// (a TestHost) with one line that replays a failure.
namespace bubble::testing {

struct ExploreOptions {
  // The options of every run. Its `strategy` and `replay` are replaced by the plan's strategy for
  // each run, and `replay_command` by the field below.
  Options options;
  // What follows "BUBBLE_STRATEGY=<strategy>" in the replay line, e.g.
  // "./framework_tests --gtest_filter=Suite.Name" (see current_test_command()).
  std::string replay_command;
  // Where the host framework shows the failure explore() adds for a failing run (the bubble test
  // macros use the test's own file and line); nullptr: "unknown file". Must outlive the call.
  const char* report_file = nullptr;
  int report_line = -1;
  // If set, every run records a trace (Options::trace), and the trace of the failing run (or, if
  // none fails, of the last run) is written to this file as text and to "<file>.json" in
  // Chrome's trace format, with a line on standard output saying so. A file that cannot be
  // written adds a failure of the test naming it.
  std::optional<std::string> trace_path;
  // For an exhaustive plan: a file that keeps the search's state (see BUBBLE_CHECKPOINT in
  // test_plan.hpp), under the name `checkpoint_key` (BUBBLE_TEST uses "Suite.Name"). A file that
  // cannot be read as a checkpoint of the same key and bound is overwritten with a note; one that
  // cannot be written adds a failure of the test naming it.
  std::optional<std::string> checkpoint_path;
  std::string checkpoint_key;
  // Called after each run that did not fail, with the run's index among all the plan's
  // schedules (TestPlan::schedule_index) and its result. Optional.
  std::function<void(std::uint64_t schedule_index, const RunResult&)> on_success;
  // When an exploration (TestPlan::exploring()) finds a failing run with preemptions, its
  // schedule is shrunk within these limits (bubble::shrink_schedule): to the fewest preemptions,
  // then the fewest picks, of the schedules whose runs fail the same way (the same
  // bubble::failure_kind, or for failed assertions of the host framework, the same first failing
  // file and line). The message then ends with one more line, after the replay line:
  //   shrunk to 1 preemption (the failing run had 7; 154 runs): BUBBLE_STRATEGY=choices:0,0,3 ...
  // The runs of the search report nothing to the host framework and do not call on_success.
  // std::nullopt: no shrinking.
  std::optional<ShrinkOptions> shrink = ShrinkOptions{};
  // When a run fails with a RunFailure, its schedule is replayed once more with stack capture on
  // (Options::symbolize_stacks = stack_symbolizer()), and the message reports that replay: each
  // blocked thread's symbolized stack, with the first frame of the user's code marked and given as
  // its location. The run's hot path pays nothing for it; the replay costs one more run and reading
  // the executable's debug information. False: the report of the failing run itself.
  bool stacks = true;
};

// What explore() did.
struct ExploreOutcome {
  // How many runs were started (the failing one included).
  std::uint64_t runs = 0;
  // True if a run failed; the exploration stopped there.
  bool failed = false;
  // True if the body skipped the test (GTEST_SKIP); the exploration stopped there.
  bool skipped = false;
  // For a failed run: its schedule index, its strategy, the replay line
  // ("replay: BUBBLE_STRATEGY=<strategy> <replay_command>") and the failure message reported
  // to the host framework (which ends with the replay line).
  std::uint64_t failed_schedule = 0;
  Strategy failed_strategy;
  std::string replay_line;
  std::string message;
  // For a failed run: the assertion failures it produced, "<file>:<line>: <message>\n" each (the
  // failures `message` calls "the GoogleTest failures above", naming the host framework); empty
  // if there were none.
  std::string assertion_failures;
  // For a failed run that was shrunk (see ExploreOptions::shrink): what the search found. Its
  // runs are not counted in `runs`.
  std::optional<ShrinkResult> shrunk;
  // For an exhaustive search (TestPlan::exhaustive) that ran every schedule within its bound
  // without a failure: its certificate, "bubble: complete: 1,234 schedules with at most 2
  // preemptions, 0 failed". Empty otherwise.
  std::string certificate;
};

// Runs `body` as the root thread of a fresh bubble (bubble::run) once for each run of `plan`, in
// order, with the plan's strategy, and stops at the first run that fails. An exhaustive plan runs
// the schedules of a ScheduleTree with the plan's bound instead (Options::decisions is then the
// explorer's), depth first, until the tree is done or a run fails. In an exploration, a
// pct strategy with the default step estimate gets the number of steps of the exploration's first
// run as its estimate (pct:<seed>:3:<steps>), so that PCT's change points fall inside the run.
// Must be called while a test of `host` runs, on the test's thread, outside any bubble.
//
// A run fails when bubble::run throws (an exception escaped a bubble thread, a deadlock, an
// exhausted budget) or when an assertion of the host framework failed on any bubble thread during
// the run. The assertion results of the runs are captured (TestHost::capture) and re-reported,
// unchanged, when the exploration ends, so the failures of one schedule are reported together;
// those of runs that do not count (the search of a shrink, the replay that captures stacks,
// another shard's schedules, code that ran on while a failed run was torn down) are dropped.
// An exception that TestHost::is_fatal_assertion recognises (REQUIRE's) ends the body as a failed
// assertion, not as an escaped exception.
//
// A failing run adds exactly one more failure, at options.report_file and report_line, whose
// message says which schedule failed and why and ends with one line that reproduces the run:
//   replay: BUBBLE_STRATEGY=random:17 ./framework_tests --gtest_filter=Suite.Name
// (for a bubble::RunFailure, the failure's own message, which already ends with that line),
// followed by the shrunk line when the failing schedule was shrunk.
//
// Returns what happened; never throws for a failure of the body.
ExploreOutcome explore(TestHost& host, const TestPlan& plan,
                       const std::function<void(Runtime&)>& body,
                       const ExploreOptions& options = {});

// The failure file of a failed bubble test `test` ("Suite.Name"), as run_hosted_test() writes it
// when BUBBLE_FAILURE_FILE is set: one JSON object with "format": "bubble-failure-1", "kind":
// "test", "test", "strategy" (the failing run's), "command" (outcome.replay_line without "replay:
// ": the command that reproduces the run) and "message" (outcome.assertion_failures followed by
// outcome.message). `bubble replay` reads it. JSON text is UTF-8: in text that is not, each
// byte of an invalid sequence is written as U+FFFD, the replacement character.
std::string failure_file_json(const std::string& test, const ExploreOutcome& outcome);

}  // namespace bubble::testing

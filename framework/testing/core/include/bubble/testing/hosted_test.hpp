#pragma once

#include <functional>
#include <string>
#include <vector>

#include <bubble/bubble.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing/exploration.hpp>
#include <bubble/testing/host.hpp>
#include <bubble/testing/test_plan.hpp>

// What every bubble test macro does when its test runs, whatever the host framework: read the
// environment, explore, report, and write the files the environment asks for.
namespace bubble::testing {

// Runs `body` as the test that `host` is running: reads the environment
// (TestPlan::from_environment) through `env`, prints each distinct note once per process, and
// runs explore() with the test's replay command (TestHost::replay_command), reporting at the
// test's file and line, with `run_options` as the options of every run (ExploreOptions::options:
// its strategy and replay are the plan's). Then:
//   - a malformed variable fails the test with a message naming it and runs nothing;
//   - a schedule shard with no schedule skips the test (TestHost::report_skip) with a message
//     saying so and runs nothing;
//   - a failing test with BUBBLE_FAILURE_FILE set writes the failure file (failure_file_json,
//     under TestHost::test_key) and prints a line saying so; a file that cannot be written fails
//     the test with a message naming it;
//   - a finished exhaustive search prints its certificate, and a passing exploration prints
//     "bubble: explored <plan>".
// Call it on the test's thread, outside any bubble. Returns what explore() returned (nothing run:
// runs == 0).
ExploreOutcome run_hosted_test(TestHost& host, const std::function<void(Runtime&)>& body,
                               const Options& run_options = {},
                               const EnvLookup& env = process_environment());

// Prints each of `notes` (TestPlan::notes()) that this process has not printed before, one per
// line, on standard output. Safe to call from any thread.
void print_notes(const std::vector<std::string>& notes);

}  // namespace bubble::testing

// Failure reports with call stacks (Options::symbolize_stacks, and BUBBLE_TEST's replay of a
// failing run with stacks on): a thread that blocks through std::lock_guard is reported at the
// user's line, with its stack and where it was spawned, also when it was spawned by a container's
// emplace_back. Built with debug information (-g), as the file:line of frames needs it.

#include <bubble/bubble.hpp>
#include <bubble/mutex.hpp>
#include <bubble/testing/explore.hpp>
#include <bubble/testing/stacks.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "../../support/failure_text.hpp"

namespace {

using bubble::test_support::ends_with;
using bubble::test_support::line_starting;

using namespace std::chrono_literals;

constexpr const char* kFile = "stack_report_test.cpp:";

// The lines of the two threads' blocking calls, and of their spawns.
int a_blocks_line = 0;
int b_blocks_line = 0;
int a_spawn_line = 0;
int b_spawn_line = 0;

// Two threads take two mutexes in opposite orders through std::lock_guard, each sleeping while it
// holds the first: a deadlock under every schedule. The threads are made by emplace_back.
void lock_order_inversion(bubble::Runtime&) {
  bubble::Mutex accounts;
  bubble::Mutex audit;
  std::vector<bubble::Thread> threads;
  threads.reserve(2);
  // clang-format off
  a_spawn_line = __LINE__ + 1;
  threads.emplace_back("a", [&] { std::lock_guard first(accounts); bubble::current_runtime().sleep_for(1s); a_blocks_line = __LINE__ + 1;
    std::lock_guard second(audit); });
  b_spawn_line = __LINE__ + 1;
  threads.emplace_back("b", [&] { std::lock_guard first(audit); bubble::current_runtime().sleep_for(1s); b_blocks_line = __LINE__ + 1;
    std::lock_guard second(accounts); });
  // clang-format on
}

// The lines of `report` from the one starting with `prefix` up to the next thread or the replay
// line, or "".
std::string section(const std::string& report, const std::string& prefix) {
  std::istringstream in(report);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (!out.empty() && (line.rfind("  thread #", 0) == 0 || line.rfind("replay: ", 0) == 0)) break;
    if (!out.empty() || line.rfind(prefix, 0) == 0) out += line + "\n";
  }
  return out;
}

std::string deadlock_report(const bubble::Options& options) {
  try {
    (void)bubble::run(options, lock_order_inversion);
  } catch (const bubble::DeadlockError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no deadlock";
  return {};
}

// Without stacks, the location of a call made through std::lock_guard is where lock_guard calls
// lock(): inside the standard library. This is what stacks fix.
TEST(StackReport, WithoutStacksTheLocationIsInsideTheStandardLibrary) {
  const std::string report = deadlock_report({});
  const std::string a = line_starting(report, "  thread #2 \"a\": blocked on Mutex::lock");
  EXPECT_NE(a.find("/c++/"), std::string::npos) << report;
  EXPECT_EQ(report.find("stack, innermost first"), std::string::npos) << report;
}

TEST(StackReport, WithStacksEachBlockedThreadIsReportedAtTheUsersLine) {
  bubble::Options options;
  options.symbolize_stacks = bubble::testing::stack_symbolizer();
  const std::string report = deadlock_report(options);
  struct Expected {
    const char* head;
    int blocks;
    int spawned;
  };
  for (const Expected& e : {Expected{"  thread #2 \"a\": blocked on Mutex::lock (object #",
                                     a_blocks_line, a_spawn_line},
                            Expected{"  thread #3 \"b\": blocked on Mutex::lock (object #",
                                     b_blocks_line, b_spawn_line}}) {
    SCOPED_TRACE(e.head);
    const std::string at = kFile + std::to_string(e.blocks);
    const std::string thread = section(report, e.head);
    // The thread's location is the user's line, not std::lock_guard's.
    EXPECT_TRUE(ends_with(line_starting(thread, e.head), at)) << report;
    // Its stack lists the frames innermost first, the user's first one marked, then where it was
    // spawned: the user's emplace_back line, not the container's.
    EXPECT_EQ(line_starting(thread, "    stack"),
              "    stack, innermost first (> marks the first frame of your code):")
        << report;
    EXPECT_NE(line_starting(thread, "        bubble::Mutex::lock("), "") << report;
    EXPECT_NE(line_starting(thread, "        std::lock_guard<bubble::Mutex>::lock_guard("), "")
        << report;
    EXPECT_TRUE(ends_with(line_starting(thread, "      > "), at)) << report;
    EXPECT_TRUE(
        ends_with(line_starting(thread, "    spawned at "), kFile + std::to_string(e.spawned)))
        << report;
  }
}

// BUBBLE_TEST's engine replays the failing run once more with stacks on and reports that replay,
// still ending with the original run's replay line.
TEST(StackReport, ExploreReportsTheFailingRunWithStacks) {
  ::testing::TestPartResultArray parts;
  bubble::testing::ExploreOutcome outcome;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    outcome = bubble::testing::explore(bubble::testing::TestPlan{}, lock_order_inversion);
  }
  ASSERT_TRUE(outcome.failed);
  const std::string a = line_starting(outcome.message, "  thread #2 \"a\": blocked on Mutex::lock");
  EXPECT_TRUE(ends_with(a, kFile + std::to_string(a_blocks_line))) << outcome.message;
  EXPECT_TRUE(ends_with(outcome.message, "\n" + outcome.replay_line)) << outcome.message;
  EXPECT_NE(outcome.message.find("deadlock: "), std::string::npos);

  bubble::testing::ExploreOptions off;
  off.stacks = false;
  {
    ::testing::ScopedFakeTestPartResultReporter capture(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &parts);
    outcome = bubble::testing::explore(bubble::testing::TestPlan{}, lock_order_inversion, off);
  }
  EXPECT_EQ(outcome.message.find("stack, innermost first"), std::string::npos) << outcome.message;
}

}  // namespace

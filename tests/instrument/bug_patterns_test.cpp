// The SCTBench kinds of concurrency bug (bug_patterns.hpp), written with the standard library
// only, compiled with bubble::instrument and without a yield in any window: each passes the
// schedule it was written for (fifo, the threads one after another in the order they start),
// unless race detection sees its bug there already; PCT finds each within 10,000 schedules, and
// an exhaustive search within two preemptions; the failing run replays to the same report byte
// for byte.

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/schedule_tree.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "bug_patterns.hpp"

namespace {

using bug_patterns::Pattern;
using bug_patterns::Shows;

struct Outcome {
  bool failed = false;
  bool deadlock = false;
  std::string message;
};

Outcome run_pattern(const Pattern& pattern, const bubble::Strategy& strategy) {
  bubble::Options options;
  options.intercept_std = true;
  options.strategy = strategy;
  Outcome out;
  try {
    bubble::run(options, [&](bubble::Runtime&) { pattern.body(); });
  } catch (const bubble::DeadlockError& e) {
    out = {true, true, e.what()};
  } catch (const bubble::RunFailure& e) {
    out = {true, false, e.what()};
  }
  return out;
}

// The strategy of a failure's replay line.
bubble::Strategy replay_strategy(const std::string& message) {
  const std::string tail = message.substr(message.rfind("BUBBLE_STRATEGY=") + 16);
  return bubble::Strategy::parse(tail.substr(0, tail.find_first_of(" \n")));
}

class BugPatterns : public ::testing::TestWithParam<Pattern> {};

// Property: PCT finds the bug within 10,000 schedules and shows it as its kind says (a failed
// check, a deadlock or a data race); the replay line reproduces the report byte for byte, twice.
TEST_P(BugPatterns, PctFindsTheBugAndItsReplayIsIdentical) {
  const Pattern& pattern = GetParam();
  if (pattern.shows != Shows::data_race) {
    const Outcome fifo = run_pattern(pattern, bubble::Strategy::fifo());
    EXPECT_FALSE(fifo.failed) << "the bug shows without any preemption:\n" << fifo.message;
  }
  Outcome found;
  std::uint64_t seed = 1;
  for (; seed <= 10'000; ++seed) {
    found = run_pattern(pattern, bubble::Strategy::pct(seed, 3));
    if (found.failed) break;
  }
  ASSERT_TRUE(found.failed) << pattern.name << ": no failure in 10,000 PCT schedules";
  std::printf("%s: found by pct seed %llu\n", pattern.name, static_cast<unsigned long long>(seed));
  switch (pattern.shows) {
    case Shows::failed_check:
      EXPECT_NE(found.message.find("threw std::logic_error: " + std::string(pattern.name) + ": "),
                std::string::npos)
          << found.message;
      break;
    case Shows::deadlock:
      EXPECT_TRUE(found.deadlock) << found.message;
      break;
    case Shows::data_race:
      EXPECT_NE(found.message.find("bubble: data race: "), std::string::npos) << found.message;
      break;
  }
  const bubble::Strategy replay = replay_strategy(found.message);
  EXPECT_EQ(run_pattern(pattern, replay).message, found.message);
  EXPECT_EQ(run_pattern(pattern, replay).message, found.message);
}

// The first failure of an exhaustive search of `pattern` within `bound` preemptions, and the
// schedules it ran; a search that completes without a failure returns failed == false.
struct SearchOutcome {
  Outcome found;
  std::uint64_t schedules = 0;
  bubble::Strategy strategy;
};

SearchOutcome search_pattern(const Pattern& pattern, std::uint32_t bound) {
  bubble::ScheduleTree tree(bound);
  std::vector<bubble::Decision> decisions;
  SearchOutcome out;
  while (std::optional<bubble::Strategy> s = tree.next()) {
    decisions.clear();
    bubble::Options options;
    options.intercept_std = true;
    options.strategy = *s;
    options.decisions = &decisions;
    ++out.schedules;
    try {
      bubble::run(options, [&](bubble::Runtime&) { pattern.body(); });
    } catch (const bubble::RunFailure& e) {
      out.found = {true, dynamic_cast<const bubble::DeadlockError*>(&e) != nullptr, e.what()};
      out.strategy = *s;
      return out;
    }
    tree.record(decisions);
  }
  return out;
}

// Property: an exhaustive search, with the smallest bound that finds a failure, finds every kind
// within two preemptions (some need none: their bug shows when a thread that blocks or exits is
// followed by another than fifo's), and its failing schedule replays to the same report.
TEST_P(BugPatterns, ExhaustiveSearchFindsTheBugWithinTwoPreemptions) {
  const Pattern& pattern = GetParam();
  std::uint32_t bound = 0;
  SearchOutcome search;
  for (; bound <= 2; ++bound) {
    search = search_pattern(pattern, bound);
    if (search.found.failed) break;
  }
  ASSERT_TRUE(search.found.failed) << pattern.name << ": no failure within 2 preemptions";
  std::printf("%s: found with at most %u preemption(s), in schedule %llu of that search\n",
              pattern.name, bound, static_cast<unsigned long long>(search.schedules));
  EXPECT_EQ(run_pattern(pattern, search.strategy).message, search.found.message);
}

INSTANTIATE_TEST_SUITE_P(SctBench, BugPatterns, ::testing::ValuesIn(bug_patterns::all()),
                         [](const ::testing::TestParamInfo<Pattern>& info) {
                           return std::string(info.param.name);
                         });

TEST(BugPatternsSuite, HasEighteenKinds) {
  EXPECT_EQ(bug_patterns::all().size(), 18u);
}

}  // namespace

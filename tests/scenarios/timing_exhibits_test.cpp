// The timing-bugs suite's properties find the two timing exhibits — a CondVar wait without a
// predicate loop (lost wake-up) and an unlocked check-then-act on a shared counter — within a
// stated number of cases, shrink them, and replay their failing runs to byte-identical traces.
#include <bubble/bubble.hpp>
#include <bubble/scenarios/counterexample.hpp>
#include <bubble/scenarios/timing_exhibits.hpp>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <functional>
#include <optional>
#include <string>

namespace bubble::scenarios {
namespace {

using Body = std::function<std::function<void(Runtime&)>(const RaceCase&)>;

struct Failed {
  std::string message;
  Schedule schedule;
  std::string trace;
};

std::optional<Failed> run_once(const Body& body, const RaceCase& c, const Options& base) {
  Options options = base;
  options.trace = true;
  try {
    (void)bubble::run(options, body(c));
  } catch (const RunFailure& e) {
    return Failed{e.what(), e.schedule(), e.trace().text()};
  }
  return std::nullopt;
}

std::optional<std::string> fails(const Body& body, const RaceCase& c) {
  const auto f = run_once(body, c, {.strategy = c.strategy.value});
  if (!f) return std::nullopt;
  return f->message;
}

void expect_found_shrunk_and_replayed(const Body& flawed, const Body& right, int max_cases,
                                      const std::string& expected_failure, int fewest_threads) {
  for (std::uint64_t seed : {1U, 2U, 3U}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto found = find_counterexample<RaceCase>(
        race_case(), seed, max_cases, [&](const RaceCase& c) { return fails(flawed, c); });
    ASSERT_TRUE(found.has_value()) << "not found in " << max_cases << " cases";
    EXPECT_NE(found->failure.find(expected_failure), std::string::npos) << found->failure;
    // Shrunk to the fewest threads the bug needs, never more than it started with.
    EXPECT_LE(found->minimal.threads, found->original.threads);
    EXPECT_EQ(found->minimal.threads, fewest_threads) << rc::toString(found->minimal);
    const auto first =
        run_once(flawed, found->minimal, {.strategy = found->minimal.strategy.value});
    ASSERT_TRUE(first.has_value());
    Options replay;
    replay.replay = first->schedule;
    const auto again = run_once(flawed, found->minimal, replay);
    const auto third = run_once(flawed, found->minimal, replay);
    ASSERT_TRUE(again.has_value());
    ASSERT_TRUE(third.has_value());
    EXPECT_FALSE(again->trace.empty());
    EXPECT_EQ(again->trace, first->trace);
    EXPECT_EQ(third->trace, again->trace);
    // The right version passes the counterexample's schedule too.
    EXPECT_FALSE(run_once(right, found->minimal, {.strategy = found->minimal.strategy.value}));
  }
}

TEST(TimingExhibits, AWaitWithoutAPredicateLoopLosesAWakeupWithin100Cases) {
  expect_found_shrunk_and_replayed([](const RaceCase& c) { return lost_wakeup_body(false, c); },
                                   [](const RaceCase& c) { return lost_wakeup_body(true, c); }, 100,
                                   "lost wake-up", 1);  // one consumer that waits too late
}

TEST(TimingExhibits, AnUnlockedCheckThenActOversellsWithin100Cases) {
  expect_found_shrunk_and_replayed([](const RaceCase& c) { return check_then_act_body(false, c); },
                                   [](const RaceCase& c) { return check_then_act_body(true, c); },
                                   100, "tickets sold of", 2);  // two buyers, one ticket
}

}  // namespace
}  // namespace bubble::scenarios

// The SCTBench kinds of concurrency bug (bug_patterns.hpp), written with the standard library
// only, compiled with bubble::instrument and without a yield in any window: each passes the
// schedule it was written for (fifo, the threads one after another in the order they start),
// unless race detection sees its bug there already; PCT finds each within 10,000 schedules, and
// an exhaustive search within two preemptions, with or without partial-order reduction, at the
// same bound; the failing run replays to the same report byte for byte. The corrected programs
// (bug_patterns_fixed.hpp) pass every schedule within two preemptions.

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/schedule_tree.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bug_patterns.hpp"
#include "bug_patterns_fixed.hpp"

namespace bug_patterns {

// Test names and failures name the kind, not the parameter's bytes.
void PrintTo(const Pattern& pattern, std::ostream* os) {
  *os << pattern.name;
}

namespace fixed {

void PrintTo(const Program& program, std::ostream* os) {
  *os << program.name << " (corrected)";
}

}  // namespace fixed
}  // namespace bug_patterns

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

// Whether a failure shows as `pattern`'s kind says: its failed check, a deadlock or a data race.
::testing::AssertionResult shows_as_its_kind(const Pattern& pattern, const Outcome& found) {
  bool shows = false;
  switch (pattern.shows) {
    case Shows::failed_check:
      shows = found.message.find("threw std::logic_error: " + std::string(pattern.name) + ": ") !=
              std::string::npos;
      break;
    case Shows::deadlock:
      shows = found.deadlock;
      break;
    case Shows::data_race:
      shows = found.message.find("bubble: data race: ") != std::string::npos;
      break;
  }
  if (shows) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << pattern.name << " failed otherwise than its kind says:\n"
                                       << found.message;
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
  EXPECT_TRUE(shows_as_its_kind(pattern, found));
  const bubble::Strategy replay = replay_strategy(found.message);
  EXPECT_EQ(run_pattern(pattern, replay).message, found.message);
  EXPECT_EQ(run_pattern(pattern, replay).message, found.message);
}

// The outcome of an exhaustive search.
struct SearchOutcome {
  Outcome found;
  std::uint64_t schedules = 0;
  bubble::Strategy strategy;
  // The certificate line of a search that completed without a failure.
  std::string certificate;
};

// The first failure of an exhaustive search of `body` within `bound` preemptions, pruned by
// `reduction`, and the schedules it ran; a search that completes without a failure returns
// failed == false and its certificate line.
SearchOutcome search_body(void (*body)(), std::uint32_t bound, bubble::Reduction reduction) {
  bubble::ScheduleTree tree(bound, bubble::TreeShard{}, reduction);
  std::vector<bubble::Decision> decisions;
  bubble::RunDependencies dependencies;
  SearchOutcome out;
  while (std::optional<bubble::Strategy> s = tree.next()) {
    decisions.clear();
    dependencies.clear();
    bubble::Options options;
    options.intercept_std = true;
    options.strategy = *s;
    options.decisions = &decisions;
    if (reduction == bubble::Reduction::dpor) options.dependencies = &dependencies;
    ++out.schedules;
    try {
      bubble::run(options, [&](bubble::Runtime&) { body(); });
    } catch (const bubble::RunFailure& e) {
      out.found = {true, dynamic_cast<const bubble::DeadlockError*>(&e) != nullptr, e.what()};
      out.strategy = *s;
      return out;
    }
    tree.record(decisions, &dependencies);
  }
  out.certificate = tree.certificate(0);
  return out;
}

// The search of the buggy program of `pattern`.
SearchOutcome search_pattern(const Pattern& pattern, std::uint32_t bound,
                             bubble::Reduction reduction) {
  return search_body(pattern.body, bound, reduction);
}

// Property: an exhaustive search, with the smallest bound that finds a failure, finds every kind
// within two preemptions (some need none: their bug shows when a thread that blocks or exits is
// followed by another than fifo's), and its failing schedule replays to the same report.
TEST_P(BugPatterns, ExhaustiveSearchFindsTheBugWithinTwoPreemptions) {
  const Pattern& pattern = GetParam();
  std::uint32_t bound = 0;
  SearchOutcome search;
  for (; bound <= 2; ++bound) {
    search = search_pattern(pattern, bound, bubble::Reduction::none);
    if (search.found.failed) break;
  }
  ASSERT_TRUE(search.found.failed) << pattern.name << ": no failure within 2 preemptions";
  std::printf("%s: found with at most %u preemption(s), in schedule %llu of that search\n",
              pattern.name, bound, static_cast<unsigned long long>(search.schedules));
  EXPECT_EQ(run_pattern(pattern, search.strategy).message, search.found.message);
}

// Property: partial-order reduction loses no bug. At the smallest bound b <= 2 at which plain
// enumeration fails, the search pruned by DPOR fails too, as the kind says (a failed check, a
// deadlock or a data race), and at every bound below b it completes without a failure, as plain
// enumeration does; its failing schedule replays to the same report.
TEST_P(BugPatterns, ReducedSearchFindsTheBugAtTheSameBound) {
  const Pattern& pattern = GetParam();
  std::uint32_t bound = 0;
  SearchOutcome plain;
  for (; bound <= 2; ++bound) {
    plain = search_pattern(pattern, bound, bubble::Reduction::none);
    if (plain.found.failed) break;
    const SearchOutcome reduced = search_pattern(pattern, bound, bubble::Reduction::dpor);
    EXPECT_FALSE(reduced.found.failed) << pattern.name << ": the reduced search fails at bound "
                                       << bound << ", where plain enumeration does not:\n"
                                       << reduced.found.message;
    std::printf("%s: bound %u: plain %llu schedules, dpor %llu, no failure\n", pattern.name, bound,
                static_cast<unsigned long long>(plain.schedules),
                static_cast<unsigned long long>(reduced.schedules));
  }
  ASSERT_TRUE(plain.found.failed) << pattern.name << ": no failure within 2 preemptions";
  EXPECT_TRUE(shows_as_its_kind(pattern, plain.found));
  const SearchOutcome reduced = search_pattern(pattern, bound, bubble::Reduction::dpor);
  ASSERT_TRUE(reduced.found.failed)
      << pattern.name << ": plain enumeration fails at bound " << bound << " in schedule "
      << plain.schedules << " (" << plain.strategy.to_string()
      << "), the reduced search completes without a failure after " << reduced.schedules
      << " schedules; plain enumeration's failure:\n"
      << plain.found.message;
  EXPECT_TRUE(shows_as_its_kind(pattern, reduced.found));
  std::printf("%s: bound %u: plain fails in schedule %llu, dpor in schedule %llu\n", pattern.name,
              bound, static_cast<unsigned long long>(plain.schedules),
              static_cast<unsigned long long>(reduced.schedules));
  EXPECT_EQ(run_pattern(pattern, reduced.strategy).message, reduced.found.message);
}

INSTANTIATE_TEST_SUITE_P(SctBench, BugPatterns, ::testing::ValuesIn(bug_patterns::all()),
                         [](const ::testing::TestParamInfo<Pattern>& info) {
                           return std::string(info.param.name);
                         });

TEST(BugPatternsSuite, HasEighteenKinds) {
  EXPECT_EQ(bug_patterns::all().size(), 18u);
}

// Every kind has its corrected program, in the same order.
TEST(BugPatternsSuite, EveryKindHasItsCorrectedProgram) {
  ASSERT_EQ(bug_patterns::fixed::all().size(), bug_patterns::all().size());
  for (std::size_t i = 0; i < bug_patterns::all().size(); ++i) {
    EXPECT_STREQ(bug_patterns::fixed::all()[i].name, bug_patterns::all()[i].name);
  }
}

class CorrectedPatterns : public ::testing::TestWithParam<bug_patterns::fixed::Program> {};

// The bound of the searches of the corrected programs.
constexpr std::uint32_t kCorrectedBound = 2;

// Property: each corrected program passes every schedule within two preemptions: the search
// pruned by DPOR completes without a failure (no failed check, no deadlock, no data race) and
// certifies it, and so does plain enumeration of the same schedules, in more runs.
TEST_P(CorrectedPatterns, ExhaustiveSearchCertifiesThemWithinTwoPreemptions) {
  const bug_patterns::fixed::Program& program = GetParam();
  const SearchOutcome reduced = search_body(program.body, kCorrectedBound, bubble::Reduction::dpor);
  ASSERT_FALSE(reduced.found.failed)
      << program.name << ": the corrected program fails in schedule " << reduced.schedules << ":\n"
      << reduced.found.message;
  EXPECT_EQ(reduced.certificate.rfind("bubble: complete: ", 0), 0u) << reduced.certificate;
  const SearchOutcome plain = search_body(program.body, kCorrectedBound, bubble::Reduction::none);
  ASSERT_FALSE(plain.found.failed) << program.name << ": the corrected program fails in schedule "
                                   << plain.schedules << " of plain enumeration:\n"
                                   << plain.found.message;
  EXPECT_EQ(plain.certificate.rfind("bubble: complete: ", 0), 0u) << plain.certificate;
  EXPECT_LE(reduced.schedules, plain.schedules);
  std::printf("%s (corrected): dpor: %s\n", program.name, reduced.certificate.c_str());
  std::printf("%s (corrected): plain %llu schedules, dpor %llu\n", program.name,
              static_cast<unsigned long long>(plain.schedules),
              static_cast<unsigned long long>(reduced.schedules));
}

INSTANTIATE_TEST_SUITE_P(SctBench, CorrectedPatterns,
                         ::testing::ValuesIn(bug_patterns::fixed::all()),
                         [](const ::testing::TestParamInfo<bug_patterns::fixed::Program>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace

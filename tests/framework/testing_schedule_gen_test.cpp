// Tests of the RapidCheck glue: bubble::gen::schedule() (generated `choices` schedules that
// shrink towards fewer preemptions) and bubble::testing::run_property (a bubble run inside a
// property, whose failures become failures of the property's case), checked by
// bubble::testing::check and by RapidCheck's own runners.
#include <bubble/bubble.hpp>
#include <bubble/gen/schedule.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/check.hpp>
#include <bubble/testing/property.hpp>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/failure_text.hpp"
#include "racy_counter.hpp"

using namespace std::chrono_literals;

namespace bubble {
namespace {

using bubble::test_support::contains;

// --- The generator ---------------------------------------------------------------------------

// Property: a generated schedule respects its shape: at most max_length picks, each at most
// max_pick, no trailing zero (as a recorded schedule), and `decisions` equal to its length.
RC_GTEST_PROP(TestingScheduleGen, SchedulesRespectTheirShape, ()) {
  gen::ScheduleShape shape;
  shape.max_length = *rc::gen::inRange<std::size_t>(1, 300);
  shape.max_pick = *rc::gen::inRange<std::uint32_t>(1, 10);
  shape.preemption_percent = *rc::gen::inRange(0, 101);
  const Schedule s = *gen::schedule(shape);
  RC_ASSERT(s.picks.size() <= shape.max_length);
  RC_ASSERT(s.decisions == s.picks.size());
  if (!s.picks.empty()) RC_ASSERT(s.picks.back() != 0u);
  for (std::uint32_t p : s.picks) RC_ASSERT(p <= shape.max_pick);
  if (shape.preemption_percent == 0) RC_ASSERT(s.picks.empty());
}

// Property: every shrink of a generated schedule is a step towards fewer preemptions: it has
// fewer nonzero picks, or as many and fewer picks, or as many picks with every pick no larger and
// one pick smaller. (So shrinking terminates, and ends at few preemptions.)
RC_GTEST_PROP(TestingScheduleGen, EveryShrinkHasFewerPreemptionsOrIsShorterOrSmaller, ()) {
  const int seed = *rc::gen::arbitrary<int>();
  const rc::Shrinkable<Schedule> generated =
      gen::schedule()(rc::Random(static_cast<std::uint64_t>(seed)), rc::kNominalSize);
  const Schedule original = generated.value();
  int checked = 0;
  for (auto shrinks = generated.shrinks(); checked < 300; ++checked) {
    const rc::Maybe<rc::Shrinkable<Schedule>> next = shrinks.next();
    if (!next) break;
    const Schedule s = next->value();
    if (!s.picks.empty()) RC_ASSERT(s.picks.back() != 0u);
    if (gen::preemptions(s) < gen::preemptions(original)) continue;
    RC_ASSERT(gen::preemptions(s) == gen::preemptions(original));
    if (s.picks.size() < original.picks.size()) continue;
    RC_ASSERT(s.picks.size() == original.picks.size());
    std::uint64_t sum = 0;
    std::uint64_t original_sum = 0;
    for (std::size_t i = 0; i < s.picks.size(); ++i) {
      RC_ASSERT(s.picks[i] <= original.picks[i]);
      sum += s.picks[i];
      original_sum += original.picks[i];
    }
    RC_ASSERT(sum < original_sum);
  }
}

TEST(TestingScheduleGen, LongSchedulesAreGeneratedAtLargeSizes) {
  // At RapidCheck's largest size, lengths spread up to max_length (so long runs get picks for
  // their later decisions too).
  std::size_t longest = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const Schedule s = gen::schedule({.max_length = 40, .max_pick = 3, .preemption_percent = 100})(
                           rc::Random(seed), rc::kNominalSize)
                           .value();
    longest = std::max(longest, s.picks.size());
  }
  EXPECT_GE(longest, 30u);
  EXPECT_LE(longest, 40u);
}

TEST(TestingScheduleGen, BadShapesAreRejected) {
  EXPECT_THROW((void)gen::schedule({.max_length = 0, .max_pick = 3, .preemption_percent = 20}),
               std::invalid_argument);
  EXPECT_THROW((void)gen::schedule({.max_length = 10, .max_pick = 0, .preemption_percent = 20}),
               std::invalid_argument);
  try {
    (void)gen::schedule({.max_length = 10, .max_pick = 3, .preemption_percent = 101});
    ADD_FAILURE() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "preemption_percent")) << e.what();
    EXPECT_TRUE(contains(e.what(), "101")) << e.what();
  }
}

TEST(TestingScheduleGen, ShowValuePrintsTheReplayableStrategy) {
  Schedule s;
  s.picks = {0, 2, 0, 1};
  s.decisions = 4;
  std::ostringstream os;
  showValue(s, os);
  EXPECT_EQ(os.str(), "choices:0,2,0,1 (2 preemptions)");
  EXPECT_EQ(rc::toString(Schedule{{0, 1}, 2}), "choices:0,1 (1 preemption)");
  EXPECT_EQ(rc::toString(Schedule{}), "choices: (0 preemptions)");
  EXPECT_EQ(Strategy::parse("choices:0,2,0,1"), s.to_strategy());
}

// Property: Arbitrary<Schedule> is the schedule generator (a parameter of type Schedule works).
RC_GTEST_PROP(TestingScheduleGen, ArbitrarySchedulesAreGeneratedSchedules, (const Schedule& s)) {
  if (!s.picks.empty()) RC_ASSERT(s.picks.back() != 0u);
  for (std::uint32_t p : s.picks) RC_ASSERT(p <= gen::ScheduleShape{}.max_pick);
}

// --- Shrinking a real race -------------------------------------------------------------------

using test_programs::racy_counter;  // The lost-update program (racy_counter.hpp).
using test_programs::racy_counter_under;

struct Search {
  testing::CheckResult result;
  std::optional<Schedule> last_failing;  // The last failing case the check ran: the minimal one.
  int failures = 0;
};

// Checks "the counter ends at 2" over generated schedules with a fixed seed.
Search search_for_the_race(std::uint64_t seed) {
  Search search;
  testing::CheckParams params;
  params.seed = seed;
  params.cases = 300;
  search.result = testing::check(
      [&search] {
        const Schedule schedule = testing::draw(gen::schedule());
        int x = 0;
        Options options;
        options.strategy = schedule.to_strategy();
        try {
          (void)testing::run_property(options, [&x](Runtime& rt) {
            x = racy_counter(rt);
            BUBBLE_ASSERT(x == 2);
          });
        } catch (...) {
          search.last_failing = schedule;
          ++search.failures;
          throw;
        }
      },
      params);
  return search;
}

TEST(TestingScheduleGen, ShrinksALostUpdateToASmallReplayableSchedule) {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    const Search search = search_for_the_race(seed);
    ASSERT_EQ(search.result.verdict, testing::CheckResult::Verdict::failed)
        << "seed " << seed << ": no generated schedule found the lost update";
    ASSERT_TRUE(search.last_failing.has_value());
    const Schedule& minimal = *search.last_failing;
    const testing::CheckResult& failure = search.result;

    // Small: one preemption (between a read and its write), within the first few decisions
    // (spawn a, spawn b, the root's join, a's read), each pick 0 or 1.
    EXPECT_EQ(gen::preemptions(minimal), 1u) << rc::toString(minimal);
    EXPECT_LE(minimal.picks.size(), 4u) << rc::toString(minimal);
    for (std::uint32_t p : minimal.picks) EXPECT_LE(p, 1u) << rc::toString(minimal);
    EXPECT_GT(search.failures, 1) << "nothing was shrunk";

    // The counterexample shows that schedule, and the failure ends with the line that replays
    // the bubble run.
    bool shown = false;
    for (const std::string& value : failure.counterexample) {
      shown = shown || contains(value, rc::toString(minimal));
    }
    EXPECT_TRUE(shown) << "counterexample does not show " << rc::toString(minimal);
    EXPECT_TRUE(contains(failure.description,
                         testing::kCaseScheduleLabel + minimal.to_strategy().to_string()))
        << failure.description;

    // Replaying the minimal schedule reproduces the lost update, every time; each of its
    // preemptions is necessary: without any one of them the update is not lost.
    for (int i = 0; i < 3; ++i) EXPECT_EQ(racy_counter_under(minimal.to_strategy()), 1);
    for (std::size_t i = 0; i < minimal.picks.size(); ++i) {
      if (minimal.picks[i] == 0) continue;
      std::vector<std::uint32_t> without = minimal.picks;
      without[i] = 0;
      EXPECT_EQ(racy_counter_under(Strategy::choices(without)), 2)
          << "preemption " << i << " of " << rc::toString(minimal) << " is not needed";
    }
  }
}

// If a failure needs no preemption at all, the schedule shrinks to the empty (fifo) schedule.
TEST(TestingScheduleGen, AFailureThatNeedsNoPreemptionShrinksToTheEmptySchedule) {
  std::optional<Schedule> last_failing;
  testing::CheckParams params;
  params.seed = 7;
  const testing::CheckResult result = testing::check(
      [&last_failing] {
        const Schedule schedule = testing::draw(gen::schedule());
        last_failing = schedule;
        BUBBLE_FAIL("always fails");
      },
      params);
  ASSERT_EQ(result.verdict, testing::CheckResult::Verdict::failed);
  ASSERT_TRUE(last_failing.has_value());
  EXPECT_TRUE(last_failing->picks.empty()) << rc::toString(*last_failing);
}

// --- run_property ------------------------------------------------------------------------------

// Runs `root` through run_property and returns the message of the case failure it threw, if any.
std::optional<std::string> case_failure_of(const Options& options,
                                           std::function<void(Runtime&)> root) {
  try {
    (void)testing::run_property(options, std::move(root));
  } catch (const testing::CaseFailure& f) {
    return std::string(f.what());
  }
  return std::nullopt;
}

TEST(TestingRunProperty, ASuccessfulRunReturnsItsResult) {
  const RunResult r = testing::run_property({}, [](Runtime& rt) { rt.sleep_for(3s); });
  EXPECT_EQ(r.elapsed, 3s);
}

TEST(TestingRunProperty, ABubbleAssertInABubbleThreadFailsTheCaseWithTheReplayLine) {
  Options options;
  options.strategy = Strategy::random(9);
  const auto r = case_failure_of(options, [](Runtime& rt) {
    std::unique_ptr<ThreadHandle> t = rt.spawn("checker", [] { BUBBLE_ASSERT(1 + 1 == 3); });
    t->join();
  });
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(contains(*r, "BUBBLE_ASSERT(1 + 1 == 3)")) << *r;
  EXPECT_TRUE(contains(*r, "\"checker\"")) << *r;
  EXPECT_TRUE(contains(*r, testing::kCaseScheduleLabel + "random:9")) << *r;
}

TEST(TestingRunProperty, ADeadlockFailsTheCaseWithTheReplayLine) {
  Options options;
  options.strategy = Strategy::choices({1, 0, 1});
  const auto r = case_failure_of(options, [](Runtime& rt) {
    Waiter w;
    rt.prepare(w);
    (void)rt.park(w, kNoDeadline, {"never", 3, SourceLocation::current()});
  });
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(contains(*r, "deadlock")) << *r;
  EXPECT_TRUE(contains(*r, testing::kCaseScheduleLabel)) << *r;
}

TEST(TestingRunProperty, AGoogleTestFailureFailsTheCaseNotTheTest) {
  Options options;
  options.strategy = Strategy::random(4);
  const auto r = case_failure_of(options, [](Runtime&) { EXPECT_EQ(2 + 2, 5) << "arithmetic"; });
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(contains(*r, "arithmetic")) << *r;
  EXPECT_TRUE(contains(*r, testing::kCaseScheduleLabel + "random:4")) << *r;
  EXPECT_FALSE(::testing::Test::HasNonfatalFailure());
}

// Exceptions that are not std::exceptions (RapidCheck's RC_ASSERT, RC_PRE, RC_SUCCEED among them)
// go on unchanged, so that RapidCheck's runners keep their meaning; the run is recorded as failed.
TEST(TestingRunProperty, OtherExceptionsAndBadOptionsPassThroughUnchanged) {
  testing::FailedRunRecorder recorder;
  Options options;
  options.strategy = Strategy::random(6);
  EXPECT_THROW((void)testing::run_property(options, [](Runtime&) { throw 42; }), int);
  const std::optional<testing::FailedRun> run = recorder.take();
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->strategy, Strategy::random(6));

  // RC_SUCCEED in the bubble ends RapidCheck's case as a success, as it would outside one.
  EXPECT_TRUE(rc::check("RC_SUCCEED in a bubble passes through run_property", [] {
    (void)testing::run_property({}, [](Runtime&) { RC_SUCCEED("done"); });
    BUBBLE_FAIL("RC_SUCCEED did not end the case");
  }));

  Options bad;
  bad.stack_size = 0;
  EXPECT_THROW((void)testing::run_property(bad, [](Runtime&) {}), std::invalid_argument);
}

// The sketch of the design document: a property over generated schedules, in a bubble. The
// property: two threads that each add 1 under a bubble-aware scheduling point, with the
// read-modify-write done atomically (no scheduling point inside), never lose an update.
RC_GTEST_PROP(TestingRunProperty, AtomicIncrementsNeverLoseAnUpdate, ()) {
  const Schedule schedule = *gen::schedule();
  Options options;
  options.strategy = schedule.to_strategy();
  (void)testing::run_property(options, [](Runtime& rt) {
    int x = 0;
    auto increment = [&rt, &x] {
      rt.schedule_point({"before", 0, SourceLocation::current()});
      x = x + 1;
      rt.schedule_point({"after", 0, SourceLocation::current()});
    };
    std::unique_ptr<ThreadHandle> a = rt.spawn("a", increment);
    std::unique_ptr<ThreadHandle> b = rt.spawn("b", increment);
    a->join();
    b->join();
    RC_ASSERT(x == 2);
  });
}

// --- BUBBLE_PROP --------------------------------------------------------------------------------

// Property: however many threads increment a counter, each increment being a single step between
// scheduling points, and whatever the schedule, no increment is lost. Inputs are drawn inside the
// bubble.
BUBBLE_PROP(TestingBubbleProp, InputsAreDrawnInsideTheBubble) {
  RC_ASSERT(in_bubble());
  Runtime& rt = current_runtime();
  const int n = *rc::gen::inRange(1, 6);
  int x = 0;
  std::vector<std::unique_ptr<ThreadHandle>> threads;
  for (int i = 0; i < n; ++i) {
    threads.push_back(rt.spawn(std::string("t").append(std::to_string(i)), [&rt, &x] {
      rt.schedule_point({"before", 0, SourceLocation::current()});
      ++x;
    }));
  }
  for (auto& t : threads) t->join();
  RC_ASSERT(x == n);
}

TEST(TestingBubbleProp, GeneratedScheduleFindsAndShrinksTheLostUpdate) {
  std::optional<Schedule> last_failing;
  testing::CheckParams params;
  params.seed = 11;
  params.cases = 300;
  const testing::CheckResult result = testing::check(
      [&last_failing] {
        // What BUBBLE_PROP's test body does, with the failing schedule remembered.
        Options options;
        try {
          (void)testing::run_with_generated_schedule(
              [](Runtime& rt) { BUBBLE_ASSERT(racy_counter(rt) == 2); }, options);
        } catch (const testing::CaseFailure& f) {
          const std::string description = f.what();
          const std::string prefix = testing::kCaseScheduleLabel;
          const std::size_t at = description.rfind(prefix);
          if (at != std::string::npos) {
            last_failing = Schedule::parse(
                description.substr(at + prefix.size() + std::string("choices:").size()));
          }
          throw;
        }
      },
      params);
  ASSERT_EQ(result.verdict, testing::CheckResult::Verdict::failed);
  ASSERT_TRUE(last_failing.has_value());
  EXPECT_EQ(gen::preemptions(*last_failing), 1u) << rc::toString(*last_failing);
  EXPECT_LE(last_failing->picks.size(), 4u) << rc::toString(*last_failing);
  EXPECT_EQ(racy_counter_under(last_failing->to_strategy()), 1);
  bool shown = false;
  for (const std::string& value : result.counterexample) {
    shown = shown || contains(value, rc::toString(*last_failing));
  }
  EXPECT_TRUE(shown);
}

}  // namespace
}  // namespace bubble

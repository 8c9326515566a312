// Shrinking failing schedules outside RapidCheck: bubble::shrink_schedule and
// bubble::shrink_failure reach the fewest preemptions a failure needs, keep its kind, and respect
// their limits.

#include <bubble/bubble.hpp>
#include <bubble/notification.hpp>
#include <bubble/shrink.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using bubble::Options;
using bubble::Runtime;
using bubble::Schedule;
using bubble::Strategy;

// Three threads increment a shared counter through a read, a scheduling point and a write (a lost
// update needs one preemption at the point), with scheduling points before and after. The root
// throws std::logic_error when an update was lost.
void lost_update(Runtime& rt) {
  int counter = 0;
  std::vector<std::unique_ptr<bubble::ThreadHandle>> threads;
  for (int i = 0; i < 3; ++i) {
    threads.push_back(rt.spawn("incrementer", [&rt, &counter] {
      for (int k = 0; k < 4; ++k) rt.schedule_point({"before", 0, {}});
      const int seen = counter;
      rt.schedule_point({"between read and write", 0, {}});
      counter = seen + 1;
      for (int k = 0; k < 4; ++k) rt.schedule_point({"after", 0, {}});
    }));
  }
  for (auto& t : threads) t->join();
  if (counter != 3) throw std::logic_error("an update was lost");
}

// Threads "a" and "b" take two steps each. "a" throws std::logic_error if it sees b between its
// steps, which takes two preemptions (one to stop a, or to start b first, and one to stop b
// between its steps); "b" throws std::runtime_error if it sees a between a's steps, which takes
// one (stop a between its steps).
void two_failures(Runtime& rt) {
  int a_steps = 0;
  int b_steps = 0;
  auto a = rt.spawn("a", [&rt, &a_steps, &b_steps] {
    a_steps = 1;
    for (int k = 0; k < 3; ++k) rt.schedule_point({"a working", 0, {}});
    a_steps = 2;
    if (b_steps == 1) throw std::logic_error("a saw b half done");
  });
  auto b = rt.spawn("b", [&rt, &a_steps, &b_steps] {
    for (int k = 0; k < 3; ++k) rt.schedule_point({"b working", 0, {}});
    if (a_steps == 1) throw std::runtime_error("b saw a half done");
    b_steps = 1;
    rt.schedule_point({"b between its steps", 0, {}});
    b_steps = 2;
  });
  a->join();
  b->join();
}

// The exception kind of running `body` with `options`, or "" if it passes.
std::string outcome(const Options& options, void (*body)(Runtime&)) {
  try {
    (void)bubble::run(options, body);
    return "";
  } catch (...) {
    return bubble::failure_kind(std::current_exception());
  }
}

// The first random seeds whose runs of `body` fail with `kind`, and with at least `min_picks`
// nonzero picks (so that there is something to shrink).
std::vector<std::uint64_t> failing_seeds(void (*body)(Runtime&), const std::string& kind,
                                         std::size_t min_picks, std::size_t count) {
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t seed = 1; seed < 20000 && seeds.size() < count; ++seed) {
    try {
      (void)bubble::run({.strategy = Strategy::random(seed)}, body);
    } catch (const bubble::RunFailure& e) {
      if (bubble::failure_kind(std::current_exception()) == kind &&
          bubble::preemptions(e.schedule()) >= min_picks) {
        seeds.push_back(seed);
      }
    }
  }
  return seeds;
}

TEST(Shrink, FifoRunsOfTheProgramsPass) {
  EXPECT_EQ(outcome({}, lost_update), "");
  EXPECT_EQ(outcome({}, two_failures), "");
}

// A random schedule that loses an update shrinks to one preemption, the fewest it can have (fifo
// passes), and replaying the shrunk schedule fails the same way, with a replay line naming it.
TEST(Shrink, RandomLostUpdatesShrinkToOnePreemption) {
  const auto seeds = failing_seeds(lost_update, "exception std::logic_error", 4, 10);
  ASSERT_EQ(seeds.size(), 10u);
  for (std::uint64_t seed : seeds) {
    SCOPED_TRACE("random:" + std::to_string(seed));
    const bubble::ShrinkResult r =
        bubble::shrink_failure({.strategy = Strategy::random(seed)}, lost_update);
    EXPECT_EQ(r.kind, "exception std::logic_error");
    EXPECT_EQ(r.preemptions, 1u);
    EXPECT_EQ(bubble::preemptions(r.schedule), 1u);
    EXPECT_FALSE(r.budget_exhausted);
    EXPECT_EQ(outcome({.replay = r.schedule}, lost_update), "exception std::logic_error");
    EXPECT_NE(r.message.find("an update was lost"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("replay: BUBBLE_STRATEGY=choices:" + r.schedule.to_string()),
              std::string::npos)
        << r.message;
    EXPECT_EQ(r.describe(), "choices:" + r.schedule.to_string() + " (1 preemption)");
  }
}

// A failure that needs two preemptions shrinks to exactly two, although a failure of another kind
// takes only one: shrinking keeps the kind of the failure. That other failure shrinks to one.
TEST(Shrink, AFailureKeepsItsKindAndItsFewestPreemptions) {
  const auto two = failing_seeds(two_failures, "exception std::logic_error", 3, 5);
  ASSERT_EQ(two.size(), 5u);
  for (std::uint64_t seed : two) {
    SCOPED_TRACE("random:" + std::to_string(seed));
    const bubble::ShrinkResult r =
        bubble::shrink_failure({.strategy = Strategy::random(seed)}, two_failures);
    EXPECT_EQ(r.kind, "exception std::logic_error");
    EXPECT_EQ(r.preemptions, 2u);
    EXPECT_EQ(outcome({.replay = r.schedule}, two_failures), "exception std::logic_error");
  }
  const auto one = failing_seeds(two_failures, "exception std::runtime_error", 3, 10);
  ASSERT_EQ(one.size(), 10u);
  for (std::uint64_t seed : one) {
    SCOPED_TRACE("random:" + std::to_string(seed));
    const bubble::ShrinkResult r =
        bubble::shrink_failure({.strategy = Strategy::random(seed)}, two_failures);
    EXPECT_EQ(r.kind, "exception std::runtime_error");
    EXPECT_EQ(r.preemptions, 1u);
    EXPECT_EQ(outcome({.replay = r.schedule}, two_failures), "exception std::runtime_error");
  }
}

// The predicate form: a failure of the picks alone (a pick of at least 2 at decision 5 or later)
// shrinks to the single smallest such pick at the earliest such decision.
TEST(Shrink, APredicateSearchFindsTheMinimalSchedule) {
  std::uint64_t calls = 0;
  const bubble::FailureCheck fails = [&calls](const Schedule& s) -> std::optional<Schedule> {
    ++calls;
    for (std::size_t i = 5; i < s.picks.size(); ++i) {
      if (s.picks[i] >= 2) return s;
    }
    return std::nullopt;
  };
  const Schedule failing = Schedule::parse("1,3,0,2,1,0,1,4,2,3,1");
  const bubble::ShrinkResult r = bubble::shrink_schedule(failing, fails);
  EXPECT_EQ(r.schedule.to_string(), "0,0,0,0,0,2");
  EXPECT_EQ(r.preemptions, 1u);
  EXPECT_EQ(r.runs, calls);
  EXPECT_TRUE(r.kind.empty());
}

TEST(Shrink, TheSearchStopsAtItsRunLimit) {
  const bubble::FailureCheck fails = [](const Schedule& s) -> std::optional<Schedule> {
    if (bubble::preemptions(s) >= 1) return s;
    return std::nullopt;
  };
  const Schedule failing = Schedule::parse("1,1,1,1,1,1");
  const bubble::ShrinkResult r =
      bubble::shrink_schedule(failing, fails, {.max_runs = 1, .preemption_bound = 0});
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_EQ(r.runs, 1u);
  EXPECT_EQ(r.schedule, failing);
}

TEST(Shrink, APassingScheduleOrRunIsRejected) {
  const bubble::FailureCheck never = [](const Schedule&) -> std::optional<Schedule> {
    return std::nullopt;
  };
  try {
    (void)bubble::shrink_schedule(Schedule::parse("0,1"), never);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "bubble::shrink_schedule: the schedule to shrink, choices:0,1, does not fail");
  }
  try {
    (void)bubble::shrink_failure({}, lost_update);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "bubble::shrink_failure: the run to shrink (strategy fifo) does not fail with a "
                 "RunFailure");
  }
  EXPECT_THROW((void)bubble::shrink_schedule(Schedule{}, bubble::FailureCheck{}),
               std::invalid_argument);
}

TEST(Shrink, FailureKinds) {
  EXPECT_EQ(bubble::failure_kind(nullptr), "");
  EXPECT_EQ(outcome({}, [](Runtime&) { throw std::out_of_range("x"); }),
            "exception std::out_of_range");
  EXPECT_EQ(outcome({}, [](Runtime& rt) { rt.sleep_for(std::chrono::hours(1)); }), "");
  EXPECT_EQ(outcome({.max_steps = 3},
                    [](Runtime& rt) {
                      for (;;) rt.yield();
                    }),
            "step budget exhausted");
  EXPECT_EQ(outcome({},
                    [](Runtime&) {
                      bubble::Notification never;
                      never.wait();
                    }),
            "deadlock");
  EXPECT_EQ(bubble::failure_kind(std::make_exception_ptr(42)), "unknown exception");
  EXPECT_EQ(bubble::failure_kind(std::make_exception_ptr(std::invalid_argument("x"))),
            "exception std::invalid_argument");
}

}  // namespace

#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>

#include <rapidcheck.h>

#include <bubble/schedule.hpp>

// RapidCheck generators of bubble schedules.
//
//   RC_GTEST_PROP(Counter, NoLostUpdates, ()) {
//     const bubble::Schedule schedule = *bubble::gen::schedule();
//     bubble::testing::run_property({.strategy = schedule.to_strategy()}, [](bubble::Runtime& rt) {
//       ...                                             // RC_ASSERT(...) works in any thread
//     });
//   }
//
// A generated Schedule is a list of picks for Strategy::choices (or Options::replay): pick i is
// the index taken at the i-th scheduling decision that has more than one candidate, modulo the
// number of candidates; once the picks run out the run goes on as fifo. Index 0 is what fifo
// picks (at a scheduling point: "keep running the current thread"), so zeros are "no preemption"
// and every nonzero pick is at most one preemption.
namespace bubble::gen {

// The shape of generated schedules.
struct ScheduleShape {
  // The longest schedule generated, reached at RapidCheck's largest size (100 by default;
  // lengths grow with the size). Decisions beyond the schedule's length take fifo's pick.
  std::size_t max_length = 100;
  // Nonzero picks are drawn from [1, max_pick]. The number of candidates at a decision is the
  // number of runnable threads (plus one at a yield), so a small bound suffices.
  std::uint32_t max_pick = 3;
  // The chance, in percent (0..100), that a pick is nonzero (a preemption).
  int preemption_percent = 20;
};

// A generator of schedules of the given shape. A failing schedule shrinks towards few
// preemptions and small picks. The shrink candidates of a schedule, in the order tried:
//   1. for each nonzero pick: the schedule that keeps only that pick, and the schedule without
//      it whose later picks move one or two decisions later (removing a preemption shifts the
//      decisions that follow it);
//   2. the schedule without a contiguous run of picks (longest runs first): trailing decisions go
//      back to fifo, later picks move to earlier decisions;
//   3. the schedule with one pick lowered to a smaller value (0 first).
// Every candidate has fewer nonzero picks, or as many and fewer picks, or as many picks with one
// pick smaller and the others unchanged, so shrinking always ends. Generated schedules never end
// with a zero pick (as recorded schedules); their `decisions` is the number of picks. A bad shape
// (max_length == 0, max_pick == 0, or preemption_percent outside [0, 100]) throws
// std::invalid_argument.
rc::Gen<Schedule> schedule(ScheduleShape shape);
// schedule() with the default shape.
rc::Gen<Schedule> schedule();

// The number of nonzero picks in `s`: an upper bound on the preemptions it causes.
std::size_t preemptions(const Schedule& s) noexcept;

}  // namespace bubble::gen

namespace bubble {

// How RapidCheck prints a Schedule in a counterexample: "choices:0,0,1 (1 preemption)", the
// strategy text that replays it (BUBBLE_STRATEGY=choices:0,0,1).
void showValue(const Schedule& s, std::ostream& os);

}  // namespace bubble

namespace rc {

// `*rc::gen::arbitrary<bubble::Schedule>()` and property parameters of type bubble::Schedule use
// bubble::gen::schedule().
template <>
struct Arbitrary<bubble::Schedule> {
  static Gen<bubble::Schedule> arbitrary() { return bubble::gen::schedule(); }
};

}  // namespace rc

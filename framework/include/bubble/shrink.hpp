#pragma once

// Shrinking a failing schedule to a minimal one: fewest preemptions first, then shortest.

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>

#include <bubble/bubble.hpp>
#include <bubble/schedule.hpp>

namespace bubble {

// The number of nonzero picks in `s`. A zero pick keeps the running thread (or takes the first in
// the run queue), so every nonzero pick is at most one preemption: this is the measure of a
// schedule's complexity that shrinking minimises.
std::size_t preemptions(const Schedule& s) noexcept;

// The kind of a failure, for deciding whether a shrunk schedule still fails "the same way":
// - "deadlock" for a DeadlockError;
// - "exception <type>" for a RunFailure nesting an exception that escaped a bubble thread (its
//   demangled dynamic type; the message may differ, since it often carries the values involved);
// - for any other RunFailure, the start of its message up to the first ':' ("step budget
//   exhausted", "virtual time budget exhausted");
// - "exception <type>" for another exception derived from std::exception, "unknown exception"
//   otherwise.
// Returns "" for a null exception_ptr.
std::string failure_kind(const std::exception_ptr& failure);

// Limits of a shrink search. The search stops at whichever limit comes first and returns the best
// schedule found so far.
struct ShrinkOptions {
  // Runs of the program the search may take (the run that establishes the failure included).
  std::uint64_t max_runs = 20'000;
  // Real time the search may take. The search checks it between runs.
  std::chrono::milliseconds time_budget{10'000};
  // After the greedy pass, the search looks for schedules with at most this many preemptions
  // among all schedules of the run's length (preemption bounding, as Microsoft's CHESS does),
  // from 1 preemption up, while the best schedule found has more. 0 turns this pass off.
  std::size_t preemption_bound = 2;
};

// What a shrink search found.
struct ShrinkResult {
  // The smallest failing schedule found: fewest preemptions, then fewest picks, then smallest
  // picks. Replaying it (Options::replay) fails with `kind`.
  Schedule schedule{};
  // preemptions(schedule).
  std::size_t preemptions = 0;
  // The failure kind that every accepted schedule reproduced (see failure_kind); empty for
  // shrink_schedule, whose FailureCheck decides what counts.
  std::string kind{};
  // The failure message of the shrunk schedule's run (empty for a predicate search).
  std::string message{};
  // Runs taken, and whether a limit of ShrinkOptions ended the search before it was complete.
  std::uint64_t runs = 0;
  bool budget_exhausted = false;

  // "choices:0,0,3 (1 preemption)": the shrunk schedule as a strategy, with its preemptions.
  std::string describe() const;
};

// Decides whether `candidate` fails the same way as the schedule being shrunk. Returns the
// schedule the run actually recorded (RunFailure::schedule(), which may be shorter than the
// candidate) if it does, std::nullopt if the run passes or fails otherwise.
using FailureCheck = std::function<std::optional<Schedule>(const Schedule& candidate)>;

// Shrinks `failing`, a schedule for which `fails` returns a schedule, to a minimal one:
//  1. greedily: try the candidates of the best schedule so far (for each preemption, the schedule
//     without it, with the later picks unmoved and moved one or two decisions later, and the
//     schedule keeping only it; then without contiguous runs of picks, longest first; then each
//     pick lowered), move to the first that still fails and is smaller, until none is;
//  2. by preemption bounding: try every schedule with 1, then 2, ... (up to
//     ShrinkOptions::preemption_bound) nonzero picks over the decisions the failing runs took,
//     earliest first; a failing one is shrunk greedily again. This finds the 1- or 2-preemption
//     schedules that a greedy walk misses when every single step from a local minimum passes.
// The result never has more preemptions than `failing`. Throws std::invalid_argument if `fails`
// does not return a schedule for `failing` itself.
ShrinkResult shrink_schedule(const Schedule& failing, const FailureCheck& fails,
                             const ShrinkOptions& limits = {});

// Runs `body` with `failing_run` (its strategy, or its replay schedule), which must fail, and
// shrinks the failing schedule, accepting only runs that fail with the same failure_kind. Every
// other option (seed of the random streams, budgets, trace) is kept in the runs of the search.
// Returns the result with the shrunk run's failure message (whose replay line reproduces it).
// Throws std::invalid_argument if the run does not fail.
ShrinkResult shrink_failure(const Options& failing_run, const std::function<void(Runtime&)>& body,
                            const ShrinkOptions& limits = {});

}  // namespace bubble

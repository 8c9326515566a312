#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <bubble/bubble.hpp>
#include <bubble/gen/schedule.hpp>
#include <bubble/runtime.hpp>
#include <bubble/schedule_tree.hpp>
#include <bubble/testing/test_plan.hpp>

// The bubble of a property's case under every schedule within a preemption bound: what
// BUBBLE_EXHAUSTIVE means for a property, whose inputs RapidCheck generates case by case.
namespace bubble::testing {

// What search_case() ran when no schedule failed.
struct CaseSearch {
  // The schedules run (this shard's; other shards' schedules run only to learn the tree's shape
  // are not counted).
  std::uint64_t schedules = 0;
  // certificate_line(shard, schedules, bound, 0): "bubble: complete: 41 schedules with at most 2
  // preemptions, 0 failed" ("... complete: shard 1/4: ..." for a shard).
  std::string certificate;
};

// Runs `root` as the root thread of a fresh bubble under every schedule with at most `bound`
// preemptions, or under `shard`'s part of them (a ScheduleTree, pruned by partial-order reduction
// unless `reduction` is Reduction::none), depth first, each run through run_property(options,
// root) with the search's strategy and decisions, and stops at the first run that fails:
//   - a CaseFailure (run_property's, for a failed run or failed GoogleTest assertions) is thrown
//     again as a CaseFailure whose message starts with "bubble: schedule <k> of the exhaustive
//     search of every schedule with at most <bound> preemptions failed:" and ends, as
//     run_property's, with the case schedule line (a choices strategy that replays the run inside
//     its case);
//   - any other exception (RapidCheck's RC_ASSERT, a std::exception that is not a CaseFailure)
//     goes on unchanged, after the case schedule line of the failing run is written to the
//     case's log (RC_LOG), which RapidCheck shows with the counterexample.
// A run of another shard's schedule that fails is that shard's to report: the search goes on.
//
// The body must do the same whenever it is given the same picks: the search runs it many times
// in one case, so the inputs it uses must be drawn before (as parameters of BUBBLE_PROP, or with
// `*gen` on the property's thread before calling this), never with `*gen` inside the bubble. A
// body that is not deterministic ends the search with a std::logic_error that says so.
// `options`' strategy, replay and decisions are the search's; bad options throw as bubble::run
// does. Must be called from a property (or from bubble::testing::check), outside any bubble.
CaseSearch search_case(const std::function<void(Runtime&)>& root, std::uint32_t bound,
                       TreeShard shard = {}, Reduction reduction = Reduction::dpor,
                       const Options& options = {});

// Runs the bubble of the current case of a property, as the environment asks:
//   - with BUBBLE_EXHAUSTIVE=<k>: search_case(root, k, shard, reduction, options), with the
//     shard of BUBBLE_SCHEDULE_SHARD_INDEX / BUBBLE_SCHEDULE_TOTAL_SHARDS and the reduction of
//     BUBBLE_REDUCTION (TestPlan::from_environment). Inside a GoogleTest test, the searches of
//     every case are added up, and when the test ends without a failure two lines are printed:
//       bubble: Suite.Name: 100 generated cases, each under every schedule within the bound
//       bubble: complete: 41,234 schedules with at most 2 preemptions, 0 failed
//     The second is a certificate like a BUBBLE_TEST's (shards' certificates merge with `bubble
//     certificate merge`), of the generated cases only. A sharded search splits each case's
//     schedules, so every shard must generate the same cases: without a fixed seed in RC_PARAMS
//     ("seed=<n>") it throws std::invalid_argument saying so;
//   - otherwise: run_with_generated_schedule(root, options, shape), one generated schedule that
//     is part of the case.
// BUBBLE_STRATEGY, BUBBLE_SCHEDULES and BUBBLE_SEED do not apply to properties, nor does
// BUBBLE_CHECKPOINT to their searches: a note on standard output names each that is set, once per
// process. A malformed variable throws std::invalid_argument naming it and its value, which fails
// the case. The body must draw its inputs before, as for search_case.
void run_case(const std::function<void(Runtime&)>& root, const Options& options = {},
              gen::ScheduleShape shape = {});

namespace detail {

// For BUBBLE_PROP without parameters, whose body draws its inputs inside the bubble and so cannot
// be searched: when BUBBLE_EXHAUSTIVE is set, skips the running GoogleTest test (once, with a
// message that says why and how to declare the inputs as parameters) and returns true; returns
// false otherwise.
bool skip_unsearchable_property();

}  // namespace detail

}  // namespace bubble::testing

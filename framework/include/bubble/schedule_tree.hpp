#pragma once

// Exhaustive search: every schedule of a program within a preemption bound.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <bubble/dependencies.hpp>
#include <bubble/schedule.hpp>
#include <bubble/strategy.hpp>

namespace bubble {

// ScheduleTree enumerates, depth first, every schedule of a deterministic program that preempts a
// running thread at most `max_preemptions` times: iterative context bounding, as Microsoft's CHESS
// does it. A preemption is a decision at a scheduling point that switches away from a thread that
// could have gone on (Decision::preemptive with a pick other than 0). Every other decision is
// free and all of its candidates are explored: which thread runs when one blocks, yields or exits,
// which of several timers due at one instant fires first, which ready case a select takes.
//
// Each schedule is a run of the program under Strategy::choices(prefix): the prefix takes the
// branch being explored, and after it every decision takes candidate 0 (the running thread goes
// on; the first in the run queue follows a thread that blocks), which preempts nothing. The run's
// decisions (Options::decisions) tell the tree where the next unexplored branch within the bound
// is. Spin loops and long runs stay finite by the engine's own bounds: fairness (a thread that
// makes no progress for Options::fair_bound operations is descheduled, which is not counted as a
// preemption) and Options::max_steps, whose failure ends the search like any other.
//
// The program must make the same decisions whenever it is given the same picks (everything it
// does in the bubble is deterministic; bubble::random() is, for a fixed Options::random_seed).
// record() detects a run that departs from the path its prefix retraces and throws.
//
// Usage:
//   ScheduleTree tree(2);
//   std::vector<Decision> decisions;
//   options.decisions = &decisions;
//   while (std::optional<Strategy> s = tree.next()) {
//     decisions.clear();
//     options.strategy = *s;
//     bubble::run(options, body);  // A failure: report it (its replay line replays it) and stop.
//     tree.record(decisions);
//   }
//   std::cout << tree.certificate(0) << "\n";
//
// Shards. ScheduleTree(k, {i, n}) searches shard i of n: disjoint parts of the tree whose
// schedules together are the whole search's, each exactly once. A schedule belongs to the shard
// that a hash of its first kShardDepth picks names. A shard still runs a few schedules of other
// shards to learn the tree's shape above that depth ("transit" runs, owns() false: not counted,
// and their failures are left to their own shard); a subtree whose first kShardDepth picks are
// all fixed is skipped whole when it is not the shard's. The shards' certificates merge into the
// whole search's (merge_certificates).
struct TreeShard {
  std::uint32_t index = 0;
  std::uint32_t total = 1;
};

// Whether a search prunes schedules that only reorder independent steps.
//
// Reduction::dpor: dynamic partial-order reduction (Flanagan and Godefroid) bounded as in Coons,
// Musuvathi and McKinley's BPOR. Each run records, besides its decisions, which thread ran which
// step on which object (Options::dependencies, see RunDependencies). At a decision among threads
// the search then tries, besides the candidate the first run took, only the threads that a race
// of a later run asks for: a step of another thread, dependent with an earlier step and not
// ordered after it, which may have come first. The schedules it leaves out differ from one it
// runs only in the order of steps on different objects, and so end in the same state; every
// failure plain enumeration finds within the bound, the reduced search finds too, in fewer runs.
// Decisions among due timers or ready select cases keep every candidate. In a sharded search the
// first kShardDepth decisions keep every candidate as well, so that the shards stay disjoint
// without knowing one another's races. A failing run's dependencies end at its failure: a
// reduced search is complete up to its first failure, where every caller of this library stops
// (going on past a failure may leave schedules after it unsearched).
enum class Reduction : std::uint8_t {
  none,
  dpor,
};

class ScheduleTree {
 public:
  // How many of a schedule's first decisions decide its shard.
  static constexpr std::size_t kShardDepth = 6;

  // The search of every schedule with at most `max_preemptions` preemptions, or of one shard of
  // it. A shard with total == 0 or index >= total throws std::invalid_argument.
  // With Reduction::dpor, each run must record its dependencies (Options::dependencies) and give
  // them to record().
  explicit ScheduleTree(std::uint32_t max_preemptions, TreeShard shard = {},
                        Reduction reduction = Reduction::none);

  // The strategy of the next schedule to run; nullopt once every schedule within the bound has
  // been recorded.
  std::optional<Strategy> next() const;

  // True when a run with these decisions (Options::decisions) is one of this shard's schedules;
  // always true without shards.
  bool owns(const std::vector<Decision>& decisions) const;

  // Records the decisions of the run of the strategy next() returned, and moves to the next
  // schedule. Throws std::logic_error when the run did not retrace the prefix it was given (a
  // decision with a different number of candidates, or fewer decisions than the prefix): the
  // program is not deterministic, and the search would not be exhaustive. A search with
  // Reduction::dpor needs the run's dependencies, and throws std::invalid_argument without them.
  void record(const std::vector<Decision>& decisions,
              const RunDependencies* dependencies = nullptr);

  // True once every schedule within the bound has been recorded.
  bool done() const noexcept { return done_; }
  // This shard's schedules recorded so far (transit runs not counted).
  std::uint64_t schedules() const noexcept { return schedules_; }
  // Runs of other shards' schedules recorded so far.
  std::uint64_t transit_runs() const noexcept { return transit_; }
  std::uint32_t max_preemptions() const noexcept { return max_preemptions_; }
  Reduction reduction() const noexcept { return reduction_; }
  const TreeShard& shard() const noexcept { return shard_; }

  // A rough estimate of the part of the tree already searched, in [0, 1]: the position of the
  // next schedule's path in the tree, each decision's candidates counted as equal parts of its
  // subtree (they seldom are), a preemptive decision with no preemption left as one. For
  // progress displays only.
  double estimated_done() const noexcept;

  // The state of the search as one line of text, to stop it and resume it later, in another
  // process (as loom's LOOM_CHECKPOINT_FILE): the bound, the schedules recorded so far and the
  // path of the next schedule, e.g. "bubble-schedule-tree-1 bound=2 shard=0/1 schedules=17
  // transit=0 path=3:0,2:1p" (each decision as candidates:pick, "p" when preemptive; "done" once
  // the search is done). A reduced search writes "bubble-schedule-tree-2 bound=2 shard=0/1
  // reduction=dpor ..." with each decision's candidates' state after a slash, one digit each: 0
  // not to be tried, 1 to be tried, 2 tried ("3:1p/221").
  std::string checkpoint() const;
  // The search a checkpoint() line describes. Throws std::invalid_argument quoting the text when
  // it is not one.
  static ScheduleTree resume(std::string_view checkpoint);

  // The line that states what a finished search proved, e.g.
  //   "bubble: complete: 41,234 schedules with at most 2 preemptions, 0 failed"
  // or, for a shard, "bubble: complete: shard 1/4: 10,310 schedules with at most 2 preemptions,
  // 0 failed". `failed`: how many of the (shard's) schedules failed.
  std::string certificate(std::uint64_t failed) const;

 private:
  // Whether the schedules whose first picks are `picks` (at most kShardDepth of them, trailing
  // zeros dropped) are this shard's.
  bool owns_key(std::vector<std::uint32_t> picks) const;

  // record() of a reduced search: adds the run's backtracking points, then takes the deepest
  // decision with a candidate still to try.
  void record_reduced(const std::vector<Decision>& decisions, const RunDependencies& dependencies);
  // The candidate to try next at decision i of `decisions` within the bound and the shard
  // (`state`: the decision's candidates' states, or null to try those after the pick), or none.
  std::optional<std::uint32_t> next_pick(const std::vector<Decision>& decisions, std::size_t i,
                                         std::uint32_t preemptions_before,
                                         const std::uint8_t* state) const;

  std::uint32_t max_preemptions_;
  TreeShard shard_;
  Reduction reduction_;
  // A reduced search's state of each decision of path_: for each candidate, 0 (not to be tried),
  // 1 (to be tried) or 2 (tried); decision i's at states_[state_begin_[i] + candidate].
  std::vector<std::uint8_t> states_;
  std::vector<std::size_t> state_begin_;
  // record()'s scratch, kept from run to run: the preemptions before each decision, and which
  // decisions are among threads.
  std::vector<std::uint32_t> preemptions_before_;
  std::vector<std::uint8_t> among_threads_;
  std::uint64_t transit_ = 0;
  // The decisions of the prefix of the next schedule; its last one is the branch to take.
  std::vector<Decision> path_;
  std::uint64_t schedules_ = 0;
  bool done_ = false;
};

// The certificate line of a search of `schedules` schedules with at most `bound` preemptions, of
// which `failed` failed, e.g. "bubble: complete: 41,234 schedules with at most 2 preemptions, 0
// failed" ("... complete: shard 1/4: ..." for a shard of several). ScheduleTree::certificate is
// this line for its own counts; a search made of several trees (one per workload, say) sums them.
std::string certificate_line(const TreeShard& shard, std::uint64_t schedules, std::uint32_t bound,
                             std::uint64_t failed);

// The certificate of a whole search from the certificates of all of its shards (one line each,
// in any order; unsharded certificates pass through): the schedules and failures summed. Throws
// std::invalid_argument naming the problem when a line is not a certificate, the bounds differ, a
// shard is missing or given twice, or a sum exceeds 2^64 - 1.
std::string merge_certificates(const std::vector<std::string>& certificates);

}  // namespace bubble

#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bubble {

// Strategy says how a bubble's scheduler chooses, at each scheduling decision, which runnable
// thread runs next, and in which order timers due at the same instant fire.
//
// A scheduling decision is taken at every scheduling point (every primitive operation, spawn,
// yield), whenever a thread blocks or exits, and when timers fire. Its candidates are listed in a
// fixed order, and a strategy picks an index into that list:
//   - at a scheduling point or spawn (the current thread may go on): the current thread first,
//     then the run queue in first-in-first-out order; index 0 means "no preemption";
//   - at yield(): the run queue, then the yielding thread last;
//   - when the current thread blocks or exits: the run queue;
//   - when several timers are due: the due timers in creation order;
//   - when several cases of a bubble::select are ready (Runtime::choose): those cases, in
//     argument order.
// So index 0 is always what `fifo` does, and a list of picks made of small numbers and zeros is a
// schedule with few preemptions (what RapidCheck shrinks towards).
//
// Every strategy is deterministic: the same program, inputs and strategy give the same run.
//
// Textual form (Strategy::parse / to_string; used in replay lines and the BUBBLE_STRATEGY
// environment variable read by the testing glue):
//   "fifo"                    no preemption, timers in creation order (the default)
//   "random:<seed>"           a uniformly random candidate at each decision
//   "pct:<seed>:<depth>"      PCT with the adaptive step estimate (see pct below)
//   "pct:<seed>:<depth>:<steps>"  PCT with an explicit estimate of the run's length in steps
//   "choices:<i>,<j>,..."     the given picks, one per decision (modulo the number of
//                             candidates), then fifo; "choices:" is fifo
class Strategy {
 public:
  enum class Kind { fifo, random, pct, choices };

  // What steps() returns for a PCT strategy whose estimate adapts (pct(seed, depth)): the
  // fixed estimate such a strategy used to have. Code that substitutes its own estimate for the
  // adaptive one (the exploration of the testing glue does) recognises it by this value.
  static constexpr std::uint64_t kDefaultPctSteps = 1000;

  // The adaptive estimate's first value, in steps (see pct(seed, depth)).
  static constexpr std::uint64_t kAdaptivePctFirstSteps = 16;

  // Default-constructed: fifo.
  Strategy() = default;

  // No preemption: the running thread runs until it blocks, yields or exits; the run queue is
  // first-in-first-out; timers due at the same instant fire in creation order.
  static Strategy fifo() { return Strategy{}; }

  // At each decision, a candidate drawn uniformly from a generator seeded with `seed`.
  static Strategy random(std::uint64_t seed);

  // Probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte, ASPLOS 2010):
  // threads get random distinct priorities (seeded), the highest-priority runnable thread runs,
  // and at depth - 1 change points drawn uniformly from [1, steps] the running thread's priority
  // drops below all others. Finds any bug of depth `depth` with probability at least
  // 1 / (n * steps^(depth-1)) per run of at most `steps` steps. `steps` is an estimate of the
  // run's length: a larger one puts change points after the run's end, where they do nothing.
  // depth < 1 or steps < 1 throws std::invalid_argument.
  static Strategy pct(std::uint64_t seed, int depth, std::uint64_t steps);

  // PCT whose step estimate adapts to the run, for when its length is not known. The estimate
  // starts at kAdaptivePctFirstSteps and doubles each time the run passes it; at each doubling,
  // every change point is drawn again, with probability 1/2, uniformly in the new half of the
  // estimate (the second half of [1, 2 * estimate]). So when the run ends, each change point's
  // latest position is uniform over [1, estimate] with the estimate less than twice the run's
  // length (as a fixed estimate within a factor of two of the length would be), wherever the
  // run ends; the price is a change point that may fire more than once (about
  // log2(length / kAdaptivePctFirstSteps) / 2 extra firings each). Every firing drops the
  // running thread below every other thread, those dropped before included. Deterministic like
  // every strategy: the seed alone reproduces the run. steps() returns kDefaultPctSteps.
  // depth < 1 throws std::invalid_argument.
  static Strategy pct(std::uint64_t seed, int depth);

  // Consumes one pick per decision with more than one candidate (index = pick modulo the number
  // of candidates), then behaves as fifo.
  static Strategy choices(std::vector<std::uint32_t> picks);

  // Parses the textual form above. Throws std::invalid_argument naming the text on bad input.
  static Strategy parse(std::string_view text);

  // The textual form; parse(to_string()) == *this.
  std::string to_string() const;

  Kind kind() const noexcept { return kind_; }
  std::uint64_t seed() const noexcept { return seed_; }
  int depth() const noexcept { return depth_; }
  std::uint64_t steps() const noexcept { return steps_; }
  // A PCT strategy made by pct(seed, depth) (or parsed from "pct:<seed>:<depth>"), whose step
  // estimate adapts to the run; false for every other strategy.
  bool adaptive_steps() const noexcept { return adaptive_steps_; }
  const std::vector<std::uint32_t>& picks() const noexcept { return picks_; }

  friend bool operator==(const Strategy&, const Strategy&) = default;

 private:
  Kind kind_ = Kind::fifo;
  std::uint64_t seed_ = 0;
  int depth_ = 0;
  std::uint64_t steps_ = 0;
  bool adaptive_steps_ = false;
  std::vector<std::uint32_t> picks_;
};

}  // namespace bubble

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
//   "pct:<seed>:<depth>"      PCT with the default step estimate
//   "pct:<seed>:<depth>:<steps>"  PCT with an explicit estimate of the run's length in steps
//   "choices:<i>,<j>,..."     the given picks, one per decision (modulo the number of
//                             candidates), then fifo; "choices:" is fifo
class Strategy {
 public:
  enum class Kind { fifo, random, pct, choices };

  // The step estimate PCT uses when none is given.
  static constexpr std::uint64_t kDefaultPctSteps = 1000;

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
  // 1 / (n * steps^(depth-1)) per run. depth < 1 or steps < 1 throws std::invalid_argument.
  static Strategy pct(std::uint64_t seed, int depth, std::uint64_t steps = kDefaultPctSteps);

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
  const std::vector<std::uint32_t>& picks() const noexcept { return picks_; }

  friend bool operator==(const Strategy&, const Strategy&) = default;

 private:
  Kind kind_ = Kind::fifo;
  std::uint64_t seed_ = 0;
  int depth_ = 0;
  std::uint64_t steps_ = 0;
  std::vector<std::uint32_t> picks_;
};

}  // namespace bubble

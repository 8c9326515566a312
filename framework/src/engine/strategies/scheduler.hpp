#pragma once

// The strategies' side of the bubble's scheduler: one small interface, Scheduler, that the engine
// asks at every decision, and one implementation per Strategy::Kind (engine/strategies/fifo.cpp,
// engine/strategies/random.cpp, engine/strategies/pct.cpp, engine/strategies/choices.cpp). The
// engine records every decision and replays none: a schedule is replayed by the choices strategy.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <bubble/random.hpp>
#include <bubble/schedule.hpp>
#include <bubble/strategy.hpp>

#include "engine/run_queue.hpp"

namespace bubble::engine {

struct BThread;

// The scheduler's random source: bubble::Random (xoshiro256** seeded with splitmix64, the same
// sequence on every platform), plus the cheap, slightly biased draw the picks use.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept : random_(seed) {}
  std::uint64_t next() noexcept { return random_(); }
  // Uniform in [0, n) for n < 2^32 (Lemire's multiply-shift; the tiny bias is irrelevant here).
  std::uint32_t below(std::uint64_t n) noexcept {
    return static_cast<std::uint32_t>(((next() >> 32) * (n & 0xffffffffULL)) >> 32);
  }

 private:
  Random random_;
};

// The threads a decision chooses among, in the order strategy.hpp documents: `first` (the
// running thread at a scheduling point) if not null, then the run queue from its front, then
// `last` (the yielding thread) if not null. At most one of first and last is set.
class Candidates {
 public:
  Candidates(const BThread* first, const RunQueue<BThread>& queue, const BThread* last) noexcept
      : first_(first), queue_(queue), last_(last) {}
  std::size_t size() const noexcept {
    return queue_.size() + (first_ != nullptr) + (last_ != nullptr);
  }
  // True when candidate 0 is the thread running at a scheduling point (a pick other than 0
  // preempts it).
  bool running_first() const noexcept { return first_ != nullptr; }
  // The i-th candidate; i < size().
  const BThread* operator[](std::size_t i) const noexcept {
    if (first_ != nullptr) return i == 0 ? first_ : queue_[i - 1];
    return i < queue_.size() ? queue_[i] : last_;
  }

 private:
  const BThread* first_;
  const RunQueue<BThread>& queue_;
  const BThread* last_;
};

// What a strategy decides in one run. The engine makes one per run (make_scheduler), asks it
// only about decisions with more than one candidate, and not at all while a failed run is torn
// down. Every answer must depend only on the strategy, the questions asked before and the
// threads' state, so that the same program under the same strategy takes the same decisions.
class Scheduler {
 public:
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};

  virtual ~Scheduler() = default;

  // Which of the threads runs: an index in [0, candidates.size()), candidates.size() > 1.
  virtual std::uint32_t pick_thread(const Candidates& candidates) = 0;

  // A decision among n > 1 candidates that are not threads (due timers, ready select cases):
  // an index in [0, n).
  virtual std::uint32_t pick_other(std::size_t n) = 0;

  // Thread `t` was just created (before it is queued).
  virtual void spawned(BThread& /*t*/) {}
  // Thread `t` made nothing but operations that may not progress (Progress::none or maybe) for
  // Options::fair_bound operations in a row while others could run, and goes behind them
  // (fairness): a strategy that would pick it again at once (PCT, by priority) lowers it.
  virtual void descheduled_for_fairness(BThread& /*t*/) {}

  // The next step at which the engine must call step_reached; kNever if none. The engine calls
  // step_reached at the first step >= next_step(), so a strategy sees each step it asks for.
  virtual std::uint64_t next_step() const noexcept { return kNever; }

  // The engine has counted step `step`, with `current` running (nullptr: a timer callback on the
  // scheduler's stack).
  virtual void step_reached(std::uint64_t /*step*/, BThread* /*current*/) {}

  // A strategy whose every answer, to pick_thread and to pick_other alike, is rng.below(n) of one
  // generator (n: the number of candidates) returns that generator, and the engine then draws from
  // it itself instead of calling pick_thread and pick_other: the same draws in the same order,
  // without a virtual call per decision. nullptr (the default) for every other strategy.
  virtual Rng* uniform_source() noexcept { return nullptr; }
};

// The scheduler of each strategy, and the one for a Strategy's kind.
std::unique_ptr<Scheduler> make_fifo_scheduler();
std::unique_ptr<Scheduler> make_random_scheduler(const Strategy& strategy);
std::unique_ptr<Scheduler> make_pct_scheduler(const Strategy& strategy);
std::unique_ptr<Scheduler> make_choices_scheduler(const Strategy& strategy);
std::unique_ptr<Scheduler> make_scheduler(const Strategy& strategy);

// `inner`, with every decision it answers appended to `log` (Options::decisions). Its
// uniform_source() is nullptr, so the engine asks it every decision.
std::unique_ptr<Scheduler> make_recording_scheduler(std::unique_ptr<Scheduler> inner,
                                                    std::vector<Decision>& log);

}  // namespace bubble::engine

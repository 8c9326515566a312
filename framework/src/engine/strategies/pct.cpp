// Strategy::pct: probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte,
// ASPLOS 2010). Every thread gets a random priority when it is spawned, at least `depth`; the
// highest-priority candidate runs (the lower id on a tie); at depth - 1 change points, steps
// drawn uniformly from [1, steps], the running thread's priority drops to depth - i (the i-th
// change point), below every initial priority. (These priorities are offset by 2^62, and the
// adaptive ones below are above 2^62 too: the values below it are those fairness sets. A thread
// descheduled for fairness, because it made only operations that may not progress for
// Options::fair_bound operations in a row, drops below every other thread.) Decisions that are not
// among threads (due timers, ready select cases) draw uniformly from the same generator.
//
// With an adaptive estimate (Strategy::pct(seed, depth)), steps starts at
// Strategy::kAdaptivePctFirstSteps; when the run reaches step steps + 1, steps doubles and each
// change point is drawn again with probability 1/2, uniformly in [old steps + 1, new steps] (a
// reservoir sample per doubling: its latest position stays uniform over [1, steps]). A point
// may so fire more than once; every firing drops the running thread below every other thread,
// those dropped before included (initial priorities start at 2^63 and each firing takes the
// next lower value below them), so each firing is a preemption when another thread can run.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/bubble.hpp"
#include "engine/strategies/scheduler.hpp"

namespace bubble::engine {
namespace {

class PctScheduler final : public Scheduler {
 public:
  explicit PctScheduler(const Strategy& strategy)
      : rng_(strategy.seed()),
        depth_(static_cast<std::uint64_t>(strategy.depth())),
        adaptive_(strategy.adaptive_steps()),
        estimate_(adaptive_ ? Strategy::kAdaptivePctFirstSteps : strategy.steps()) {
    for (std::uint64_t i = 1; i < depth_; ++i) {
      change_points_.push_back({1 + rng_.next() % estimate_, kFairBase + depth_ - i});
    }
    sort_change_points();
  }

  std::uint32_t pick_thread(const Candidates& candidates) override {
    std::size_t best = 0;
    const BThread* best_t = nullptr;
    const std::size_t n = candidates.size();
    for (std::size_t i = 0; i < n; ++i) {
      const BThread* c = candidates[i];
      if (best_t == nullptr || c->priority > best_t->priority ||
          (c->priority == best_t->priority && c->id < best_t->id)) {
        best = i;
        best_t = c;
      }
    }
    return static_cast<std::uint32_t>(best);
  }

  std::uint32_t pick_other(std::size_t n) override { return rng_.below(n); }

  void spawned(BThread& t) override {
    t.priority = (adaptive_ ? kAdaptiveBase : kFairBase + depth_) + (rng_.next() >> 2);
  }

  // Below every priority a thread has or a change point sets, as CHESS's fair scheduler lowers a
  // thread that yields: the threads it waits for run before it polls again.
  void descheduled_for_fairness(BThread& t) override { t.priority = --lowest_fair_; }

  std::uint64_t next_step() const noexcept override {
    std::uint64_t next = adaptive_ ? estimate_ + 1 : kNever;
    if (next_change_ < change_points_.size()) {
      next = std::min(next, change_points_[next_change_].step);
    }
    return next;
  }

  void step_reached(std::uint64_t step, BThread* current) override {
    for (;;) {
      while (next_change_ < change_points_.size() && change_points_[next_change_].step <= step) {
        if (change_points_[next_change_].step == step && current != nullptr) {
          current->priority = adaptive_ ? --lowest_ : change_points_[next_change_].priority;
        }
        ++next_change_;
      }
      if (!adaptive_ || step <= estimate_) return;
      double_estimate();  // May draw a change point at `step` itself: apply it above.
    }
  }

 private:
  struct ChangePoint {
    std::uint64_t step;
    std::uint64_t priority;
  };

  void sort_change_points() {
    std::stable_sort(change_points_.begin(), change_points_.end(),
                     [](const ChangePoint& a, const ChangePoint& b) { return a.step < b.step; });
    next_change_ = 0;
  }

  // The run has passed the estimate: double it, and draw each change point (the i-th lowers to
  // depth - i) again in the new half with probability 1/2. Every point of the old estimate has
  // fired or been passed, so the list holds only the points drawn again.
  void double_estimate() {
    const std::uint64_t old = estimate_;
    estimate_ = old > kNever / 2 ? kNever - 1 : 2 * old;
    change_points_.clear();
    for (std::uint64_t i = 1; i < depth_; ++i) {
      if ((rng_.next() >> 63) != 0) {
        change_points_.push_back(
            {old + 1 + rng_.next() % (estimate_ - old), kFairBase + depth_ - i});
      }
    }
    sort_change_points();
  }

  // With an adaptive estimate: initial priorities are kAdaptiveBase + a draw below 2^62, and the
  // k-th firing of a change point sets kAdaptiveBase - k. With a fixed one, all priorities are
  // offset by kFairBase. Below kFairBase: the priorities fairness sets, the k-th kFairBase - k.
  static constexpr std::uint64_t kAdaptiveBase = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kFairBase = std::uint64_t{1} << 62;

  Rng rng_;
  std::uint64_t depth_;
  std::uint64_t lowest_ = kAdaptiveBase;    // The last priority a firing set (adaptive).
  std::uint64_t lowest_fair_ = kFairBase;   // The last priority fairness set.
  bool adaptive_;                           // The estimate doubles as the run passes it.
  std::uint64_t estimate_;                  // The run's length as PCT assumes it, in steps.
  std::vector<ChangePoint> change_points_;  // By step.
  std::size_t next_change_ = 0;
};

}  // namespace

std::unique_ptr<Scheduler> make_pct_scheduler(const Strategy& strategy) {
  return std::make_unique<PctScheduler>(strategy);
}

}  // namespace bubble::engine

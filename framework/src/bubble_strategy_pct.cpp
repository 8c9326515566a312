// Strategy::pct: probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte,
// ASPLOS 2010). Every thread gets a random priority when it is spawned, at least `depth`; the
// highest-priority candidate runs (the lower id on a tie); at depth - 1 change points, steps
// drawn uniformly from [1, steps], the running thread's priority drops to depth - i (the i-th
// change point), below every initial priority. Decisions that are not among threads (due timers,
// ready select cases) draw uniformly from the same generator.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "bubble_engine.hpp"
#include "bubble_scheduler.hpp"

namespace bubble::engine {
namespace {

class PctScheduler final : public Scheduler {
 public:
  explicit PctScheduler(const Strategy& strategy)
      : rng_(strategy.seed()), depth_(static_cast<std::uint64_t>(strategy.depth())) {
    for (std::uint64_t i = 1; i < depth_; ++i) {
      change_points_.push_back({1 + rng_.next() % strategy.steps(), depth_ - i});
    }
    std::stable_sort(change_points_.begin(), change_points_.end(),
                     [](const ChangePoint& a, const ChangePoint& b) { return a.step < b.step; });
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

  void spawned(BThread& t) override { t.priority = depth_ + (rng_.next() >> 2); }

  std::uint64_t next_step() const noexcept override {
    return next_change_ < change_points_.size() ? change_points_[next_change_].step : kNever;
  }

  void step_reached(std::uint64_t step, BThread* current) override {
    while (next_change_ < change_points_.size() && change_points_[next_change_].step <= step) {
      if (change_points_[next_change_].step == step && current != nullptr) {
        current->priority = change_points_[next_change_].priority;
      }
      ++next_change_;
    }
  }

 private:
  struct ChangePoint {
    std::uint64_t step;
    std::uint64_t priority;
  };
  Rng rng_;
  std::uint64_t depth_;
  std::vector<ChangePoint> change_points_;  // By step.
  std::size_t next_change_ = 0;
};

}  // namespace

std::unique_ptr<Scheduler> make_pct_scheduler(const Strategy& strategy) {
  return std::make_unique<PctScheduler>(strategy);
}

}  // namespace bubble::engine

// Strategy::random: every decision, among threads or not, draws a candidate uniformly from one
// generator seeded with the strategy's seed.

#include <memory>

#include "engine/strategies/scheduler.hpp"

namespace bubble::engine {
namespace {

class RandomScheduler final : public Scheduler {
 public:
  explicit RandomScheduler(std::uint64_t seed) noexcept : rng_(seed) {}
  std::uint32_t pick_thread(const Candidates& candidates) override {
    return rng_.below(candidates.size());
  }
  std::uint32_t pick_other(std::size_t n) override { return rng_.below(n); }
  Rng* uniform_source() noexcept override { return &rng_; }

 private:
  Rng rng_;
};

}  // namespace

std::unique_ptr<Scheduler> make_random_scheduler(const Strategy& strategy) {
  return std::make_unique<RandomScheduler>(strategy.seed());
}

}  // namespace bubble::engine

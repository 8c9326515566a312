// Strategy::choices: consumes one given pick per decision (modulo the number of candidates),
// among threads or not, then behaves as fifo. How a recorded schedule is replayed.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "engine/strategies/scheduler.hpp"

namespace bubble::engine {
namespace {

class ChoicesScheduler final : public Scheduler {
 public:
  explicit ChoicesScheduler(std::vector<std::uint32_t> picks) : picks_(std::move(picks)) {}
  std::uint32_t pick_thread(const Candidates& candidates) override {
    return pick_other(candidates.size());
  }
  std::uint32_t pick_other(std::size_t n) override {
    if (next_ >= picks_.size()) return 0;
    return static_cast<std::uint32_t>(picks_[next_++] % n);
  }

 private:
  std::vector<std::uint32_t> picks_;
  std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Scheduler> make_choices_scheduler(const Strategy& strategy) {
  return std::make_unique<ChoicesScheduler>(strategy.picks());
}

}  // namespace bubble::engine

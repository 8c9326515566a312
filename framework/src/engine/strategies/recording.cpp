// The scheduler behind Options::decisions: another strategy's scheduler, with every decision it
// answers appended to a log (see Decision).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "engine/strategies/scheduler.hpp"

namespace bubble::engine {
namespace {

class RecordingScheduler final : public Scheduler {
 public:
  RecordingScheduler(std::unique_ptr<Scheduler> inner, std::vector<Decision>& log)
      : inner_(std::move(inner)), log_(log) {}

  std::uint32_t pick_thread(const Candidates& candidates) override {
    const std::uint32_t idx = inner_->pick_thread(candidates);
    log_.push_back(
        Decision{static_cast<std::uint32_t>(candidates.size()), idx, candidates.running_first()});
    return idx;
  }
  std::uint32_t pick_other(std::size_t n) override {
    const std::uint32_t idx = inner_->pick_other(n);
    log_.push_back(Decision{static_cast<std::uint32_t>(n), idx, false});
    return idx;
  }
  void spawned(BThread& t) override { inner_->spawned(t); }
  void descheduled_for_fairness(BThread& t) override { inner_->descheduled_for_fairness(t); }
  std::uint64_t next_step() const noexcept override { return inner_->next_step(); }
  void step_reached(std::uint64_t step, BThread* current) override {
    inner_->step_reached(step, current);
  }

 private:
  std::unique_ptr<Scheduler> inner_;
  std::vector<Decision>& log_;
};

}  // namespace

std::unique_ptr<Scheduler> make_recording_scheduler(std::unique_ptr<Scheduler> inner,
                                                    std::vector<Decision>& log) {
  return std::make_unique<RecordingScheduler>(std::move(inner), log);
}

}  // namespace bubble::engine

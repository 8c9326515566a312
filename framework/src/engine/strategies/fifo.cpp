// Strategy::fifo: never preempts; the run queue's front runs next, due timers fire in creation
// order, the first ready select case proceeds. (The engine also skips the decision entirely on
// its fast path when the strategy is fifo.)

#include <memory>

#include "engine/strategies/scheduler.hpp"

namespace bubble::engine {
namespace {

class FifoScheduler final : public Scheduler {
 public:
  std::uint32_t pick_thread(const Candidates& /*candidates*/) override { return 0; }
  std::uint32_t pick_other(std::size_t /*n*/) override { return 0; }
};

}  // namespace

std::unique_ptr<Scheduler> make_fifo_scheduler() {
  return std::make_unique<FifoScheduler>();
}

}  // namespace bubble::engine

#include <bubble/manual_clock.hpp>

#include <stdexcept>
#include <string>

namespace bubble {
namespace {

std::string format_time_point(TimePoint t) {
  return "TimePoint{" + format_duration(t.time_since_epoch()) + "}";
}

// Clears a flag on scope exit, also when a callback throws.
struct RunningGuard {
  explicit RunningGuard(bool& f) : flag(f) { flag = true; }
  ~RunningGuard() { flag = false; }
  bool& flag;
};

}  // namespace

TimerId ManualClock::schedule_at(TimePoint deadline, std::function<void()> fn) {
  if (!fn) throw std::invalid_argument("bubble::ManualClock::schedule_at: fn must not be empty");
  if (deadline < now_) deadline = now_;
  const TimerId id = next_id_++;
  timers_.emplace(std::make_pair(deadline, id), std::move(fn));
  deadlines_.emplace(id, deadline);
  return id;
}

TimerId ManualClock::schedule_after(Duration d, std::function<void()> fn) {
  return schedule_at(deadline_after(now_, d), std::move(fn));
}

bool ManualClock::cancel(TimerId id) {
  const auto it = deadlines_.find(id);
  if (it == deadlines_.end()) return false;
  timers_.erase(std::make_pair(it->second, id));
  deadlines_.erase(it);
  return true;
}

std::size_t ManualClock::advance(Duration d) {
  if (d < Duration::zero()) {
    throw std::invalid_argument("bubble::ManualClock::advance: d must be >= 0, got " +
                                format_duration(d));
  }
  return run_until(deadline_after(now_, d));
}

std::size_t ManualClock::set(TimePoint t) {
  if (t < now_) {
    throw std::invalid_argument("bubble::ManualClock::set: t = " + format_time_point(t) +
                                " is before now() = " + format_time_point(now_) +
                                "; time cannot go backwards");
  }
  return run_until(t);
}

std::optional<TimePoint> ManualClock::next_deadline() const {
  if (timers_.empty()) return std::nullopt;
  return timers_.begin()->first.first;
}

std::size_t ManualClock::run_until(TimePoint target) {
  if (running_) {
    throw std::logic_error("bubble::ManualClock: advance() or set() called from a timer callback");
  }
  RunningGuard guard(running_);
  std::size_t fired = 0;
  while (!timers_.empty() && timers_.begin()->first.first <= target) {
    auto node = timers_.extract(timers_.begin());
    deadlines_.erase(node.key().second);
    now_ = node.key().first;
    ++fired;
    node.mapped()();
  }
  now_ = target;
  return fired;
}

}  // namespace bubble

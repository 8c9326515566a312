#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include <bubble/runtime.hpp>
#include <bubble/time.hpp>

namespace bubble {

// ManualClock is a fake clock for single-threaded unit tests of time-driven code that does not
// need threads: time moves only when the test calls advance() or set(), and timers scheduled on it
// fire, synchronously and in order, inside those calls. It is not a Runtime (use a bubble to test
// code that blocks or runs threads).
//
// Thread safety: none; use one ManualClock from one thread at a time.
class ManualClock {
 public:
  // A clock whose now() is `start`.
  explicit ManualClock(TimePoint start = TimePoint{}) : now_(start) {}
  ManualClock(const ManualClock&) = delete;
  ManualClock& operator=(const ManualClock&) = delete;

  // The current fake time. Changes only in advance() and set() (and, inside them, is the deadline
  // of the timer being run).
  TimePoint now() const noexcept { return now_; }

  // Schedules `fn` to run at `deadline` (a deadline earlier than now() is treated as now(): the
  // timer is due at the next advance() or set(), even advance(Duration::zero())). Returns an id
  // for cancel(); ids increase with each call. An empty `fn` throws std::invalid_argument.
  TimerId schedule_at(TimePoint deadline, std::function<void()> fn);
  // schedule_at(now() + d, fn), saturating at the end of time.
  TimerId schedule_after(Duration d, std::function<void()> fn);

  // Cancels a pending timer. Returns true if it was pending; false if it has fired, is running
  // or was cancelled, or `id` is unknown.
  bool cancel(TimerId id);

  // Moves time forward by `d`, running every timer whose deadline is <= now() + d, in deadline
  // order (ties: in the order they were scheduled). While a timer's callback runs, now() equals
  // its deadline; timers scheduled by callbacks inside the window also run. Afterwards now() is
  // the old now() + d. Returns how many callbacks ran. d < 0 throws std::invalid_argument; calling
  // advance or set from a callback throws std::logic_error. An exception from a callback
  // propagates; the clock then stays at that callback's deadline, and the remaining timers stay
  // pending.
  std::size_t advance(Duration d);

  // Moves time forward to `t`, like advance(t - now()). A `t` before now() throws
  // std::invalid_argument naming both times.
  std::size_t set(TimePoint t);

  // The deadline of the earliest pending timer, or nullopt if none is pending.
  std::optional<TimePoint> next_deadline() const;

  // The number of pending timers.
  std::size_t pending() const noexcept { return timers_.size(); }

 private:
  std::size_t run_until(TimePoint target);

  TimePoint now_;
  TimerId next_id_ = 1;
  bool running_ = false;
  std::map<std::pair<TimePoint, TimerId>, std::function<void()>> timers_;
  std::unordered_map<TimerId, TimePoint> deadlines_;
};

}  // namespace bubble

#pragma once

#include <functional>
#include <memory>

#include <bubble/channel.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>
#include <bubble/time.hpp>

namespace bubble {

namespace detail {
struct TimerState;
struct AfterFuncTimerState;
}  // namespace detail

// Timer delivers one time value on its channel when its duration has elapsed on its runtime's
// clock: Go's time.Timer with Go 1.23 semantics.
//
// - The value delivered is the time the timer was scheduled to fire (start + d on the runtime's
//   clock), not the time it is received.
// - A duration <= 0 makes the timer fire at once (its scheduled time is then now()).
// - reset() and stop() return whether the timer was active (armed and not yet fired). After they
//   return, no value from before the call is ever received from channel(): a value already
//   delivered to the buffer is discarded, and a firing in progress is ignored.
// - The channel has a one-value buffer; it is never closed.
//
// Thread safety: all members may be called concurrently. The Timer must be destroyed before its
// runtime; its destructor stops it. Not copyable or movable (channel() references stay valid).
class Timer {
 public:
  // Starts a timer that fires after `d` on `rt`'s clock.
  explicit Timer(Duration d, Runtime& rt = current_runtime());
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // The channel on which the scheduled fire time is delivered.
  Channel<TimePoint>& channel() noexcept;

  // Re-arms the timer to fire after `d` from now (discarding any undelivered value). Returns true
  // if the timer was active. A scheduling point in a bubble. Never blocks.
  bool reset(Duration d, SourceLocation where = SourceLocation::current());

  // Disarms the timer (discarding any undelivered value). Returns true if this call stopped an
  // active timer, false if it had already fired or been stopped. A scheduling point in a bubble.
  // Never blocks.
  bool stop(SourceLocation where = SourceLocation::current());

 private:
  std::shared_ptr<detail::TimerState> state_;
};

// Ticker delivers the scheduled time of each tick on its channel, every `period` on its runtime's
// clock: Go's time.Ticker with Go 1.23 semantics.
//
// - Ticks are at start + period, start + 2 * period, ...; the value is the tick's scheduled time.
// - The channel has a one-value buffer. A tick that finds it full is dropped, so a receiver that
//   stalls for several periods first receives one stale tick at once, then ticks on the grid
//   (source 003). If the runtime delivers a tick late, missed grid points are skipped.
// - reset(period) and stop() discard any undelivered tick; after they return no tick from before
//   is received. reset restarts the grid at now() + period.
//
// Thread safety and lifetime: as Timer.
class Ticker {
 public:
  // Starts a ticker; throws std::invalid_argument naming `period` if it is <= 0.
  explicit Ticker(Duration period, Runtime& rt = current_runtime());
  ~Ticker();
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;

  // The channel on which ticks are delivered.
  Channel<TimePoint>& channel() noexcept;

  // Stops the ticker and restarts it with `period` (throws std::invalid_argument if <= 0). A
  // scheduling point in a bubble. Never blocks.
  void reset(Duration period, SourceLocation where = SourceLocation::current());

  // Stops the ticker: no tick is delivered afterwards. A scheduling point in a bubble.
  void stop(SourceLocation where = SourceLocation::current());

 private:
  std::shared_ptr<detail::TimerState> state_;
};

// The handle returned by after_func(Duration, ...).
class AfterFunc {
 public:
  AfterFunc() = default;
  // Prevents the function from being started. Returns true if this call prevented it; false if
  // it has already been started or stopped (or for a default-constructed handle). Does not wait
  // for a started function.
  bool stop();

 private:
  friend AfterFunc after_func(Duration, std::function<void()>, Runtime&);
  std::shared_ptr<detail::AfterFuncTimerState> state_;
};

// Go's time.AfterFunc: after `d` on `rt`'s clock, runs `fn` in a new thread of `rt`
// (rt.spawn("after_func", ...), detached), unless stopped first. Destroying the handle does not
// stop it. d <= 0: starts at once (from the runtime's timer callback). An empty fn throws
// std::invalid_argument.
AfterFunc after_func(Duration d, std::function<void()> fn, Runtime& rt = current_runtime());

}  // namespace bubble

#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include <bubble/channel.hpp>
#include <bubble/context.hpp>
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
// - The rule of stop() and reset() (Go 1.23, with the fix pinned down by Go's regression test
//   for golang/go#69312): a timer is *pending* from the moment it is armed until its value is
//   received. A value that has fired but sits unreceived in the channel is still pending. stop()
//   and reset() withdraw a pending value and return true; they return false only when the timer
//   was stopped, or its value was received. After they return, no value from before the call is
//   ever received from channel(), even if the firing was racing them. So, as long as no other
//   thread receives from the channel, `if (!t.stop()) t.channel().receive();` never blocks (it
//   never receives either), and a reset timer delivers only its new expiry.
// - The channel has a one-value buffer, so a fired value can be taken with try_receive() (Go's
//   channel is unbuffered; the buffer here behaves as a value not yet received). It is never
//   closed. Only the timer sends on it: do not send on it yourself.
//
// Thread safety: all members may be called concurrently. The Timer must be destroyed before its
// runtime; its destructor stops it. Not copyable or movable (channel() references stay valid).
class Timer {
 public:
  // Starts a timer that fires after `d` on `rt`'s clock.
  explicit Timer(Duration d, Runtime& rt = current_runtime());
  // The same, called `name` in deadlock reports and traces: the timer's channel carries the name
  // (Channel::receive "deadline" (object #4)). The name is recorded once, here.
  explicit Timer(std::string_view name, Duration d, Runtime& rt = current_runtime());
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // The channel on which the scheduled fire time is delivered.
  Channel<TimePoint>& channel() noexcept;

  // Re-arms the timer to fire after `d` from now, withdrawing a value that fired but was not
  // received. Returns true if the timer was pending (armed and not fired, or fired and not
  // received), false if it was stopped or its value was received. A scheduling point in a
  // bubble. Never blocks.
  bool reset(Duration d, SourceLocation where = SourceLocation::current());

  // Disarms the timer, withdrawing a value that fired but was not received. Returns true if this
  // call stopped a pending timer (armed and not fired, or fired and not received), false if it
  // was already stopped or its value was received. A scheduling point in a bubble. Never blocks.
  bool stop(SourceLocation where = SourceLocation::current());

 private:
  std::shared_ptr<detail::TimerState> state_;
};

// Ticker delivers the scheduled time of each tick on its channel, every `period` on its runtime's
// clock: Go's time.Ticker with Go 1.23 semantics.
//
// - Ticks are at start + period, start + 2 * period, ...; the value is the tick's scheduled time.
// - The channel has a one-value buffer. A tick that finds it full is dropped, so a receiver that
//   stalls for several periods first receives one stale tick at once, then ticks on the grid.
//   If the runtime delivers a tick late, missed grid points are skipped.
// - The rule of stop() and reset() (Go 1.23's Ticker.Stop and Ticker.Reset): they withdraw a
//   tick that fired but was not received, and after they return no tick from before the call is
//   ever received, even if a tick was racing them. stop() ends the ticks; reset(period) restarts
//   the grid at now() + period, so the next tick comes a whole new period after the call. Like
//   Go's, they return nothing.
//
// Thread safety and lifetime: as Timer.
class Ticker {
 public:
  // Starts a ticker; throws std::invalid_argument naming `period` if it is <= 0.
  explicit Ticker(Duration period, Runtime& rt = current_runtime());
  // The same, called `name` in deadlock reports and traces, as a named Timer.
  explicit Ticker(std::string_view name, Duration period, Runtime& rt = current_runtime());
  ~Ticker();
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;

  // The channel on which ticks are delivered.
  Channel<TimePoint>& channel() noexcept;

  // Stops the ticker, withdrawing an unreceived tick, and restarts it with `period` from now
  // (throws std::invalid_argument if <= 0). A scheduling point in a bubble. Never blocks.
  void reset(Duration period, SourceLocation where = SourceLocation::current());

  // Stops the ticker, withdrawing an unreceived tick: no tick is received afterwards. A
  // scheduling point in a bubble. Never blocks.
  void stop(SourceLocation where = SourceLocation::current());

 private:
  std::shared_ptr<detail::TimerState> state_;
};

// After is the result of bubble::after: a one-shot Timer the caller owns, reduced to its
// channel. Movable; destroying it stops the timer (a value not yet received is never delivered).
class After {
 public:
  // The channel that delivers the scheduled fire time, once. It is never closed.
  Channel<TimePoint>& channel() noexcept { return timer_->channel(); }

  // Blocks until the value is delivered and returns it: the scheduled fire time (the moment of
  // after()'s call plus d on the runtime's clock, or that moment itself for d <= 0).
  TimePoint wait(SourceLocation where = SourceLocation::current()) {
    return timer_->channel().receive(Context::background(), where).value();
  }

 private:
  friend After after(Duration, Runtime&);
  friend After after(std::string_view, Duration, Runtime&);
  After(std::string_view name, Duration d, Runtime& rt)
      : timer_(std::make_unique<Timer>(name, d, rt)) {}
  std::unique_ptr<Timer> timer_;
};

// Go's time.After: a channel that receives, once, the time `d` after now on `rt`'s clock (the
// scheduled time, as for a Timer; d <= 0: now(), delivered at once). The channel belongs to the
// returned After, which must outlive every wait on it.
//
// It is meant as a timeout case of bubble::select (select.hpp), written as in Go:
//   `select(recv(jobs), recv(after(1s).channel()))` — a temporary After lives until the end of
//   the full expression, so for the whole select;
// it can also be received from directly: `after(1s).wait()` sleeps like sleep_for but returns the
// scheduled time, and `a.channel().receive(ctx)` waits for a timeout or a context.
[[nodiscard]] inline After after(Duration d, Runtime& rt = current_runtime()) {
  return After(std::string_view(), d, rt);
}

// The same, its channel called `name` in deadlock reports and traces, as a named Timer's:
// `select(recv(jobs), recv(after("poll timeout", 1s).channel()))`.
[[nodiscard]] inline After after(std::string_view name, Duration d,
                                 Runtime& rt = current_runtime()) {
  return After(name, d, rt);
}

// The handle returned by after_func: a function scheduled to run once a duration has elapsed.
// (Its counterpart for "once a context is done", Go's context.AfterFunc, is after_done in
// context.hpp, with its own handle, AfterDone.)
class AfterFunc {
 public:
  AfterFunc() = default;
  // Prevents the function from being started. Returns true if this call prevented it; false if
  // it has already been started or stopped (or for a default-constructed handle). Does not wait
  // for a started function.
  bool stop();

  // Go's Timer.Reset for a timer made by time.AfterFunc: schedules the function to start `d` from
  // now on the runtime's clock (d <= 0: at once, from the runtime's timer callback). Returns true
  // if the function was pending, which it now starts later instead of at its earlier time; false
  // if it had already started (it will start again, in another new thread) or had been stopped
  // (it is armed again). A firing of the earlier schedule that races the reset does nothing.
  // Throws std::logic_error for a default-constructed handle.
  bool reset(Duration d);

 private:
  friend AfterFunc after_func(std::string_view, Duration, std::function<void()>, Runtime&);
  std::shared_ptr<detail::AfterFuncTimerState> state_;
};

// Go's time.AfterFunc: after `d` on `rt`'s clock, runs `fn` in a new thread of `rt`
// (rt.spawn("after_func", ...), detached), unless stopped first. Destroying the handle does not
// stop it. d <= 0: starts at once (from the runtime's timer callback). An empty fn throws
// std::invalid_argument.
AfterFunc after_func(Duration d, std::function<void()> fn, Runtime& rt = current_runtime());

// The same, the thread it starts called `name` instead of "after_func" (in reports and traces),
// as a primitive's name: `after_func("flush", 1s, [&] { flush(); })`. An empty name means
// "after_func".
AfterFunc after_func(std::string_view name, Duration d, std::function<void()> fn,
                     Runtime& rt = current_runtime());

}  // namespace bubble

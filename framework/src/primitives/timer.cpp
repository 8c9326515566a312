#include <bubble/timer.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include <bubble/detail/spin_lock.hpp>

namespace bubble {
namespace detail {

// The shared state of a Timer or Ticker; the runtime's timer callbacks hold it too.
//
// Every arming gets a new generation; a firing acts only if its generation is current, and it
// sends while holding `lock`. reset/stop bump the generation and discard the buffer under the same
// lock, so no value from an earlier arming can be received after they return, and a value in the
// buffer is one nobody received (the channel's only sender is the firing). schedule_at and
// cancel_timer are called outside `lock`. Lock order: TimerState::lock, then the channel's lock.
struct TimerState : std::enable_shared_from_this<TimerState> {
  // `name`: the channel's, which names the timer in reports and traces (empty: none).
  TimerState(Runtime& runtime, Duration every, std::string_view name)
      : rt(&runtime), channel(name, 1, runtime), period(every) {}

  Runtime* const rt;
  Channel<TimePoint> channel;
  SpinLock lock;
  std::uint64_t generation = 0;
  bool active = false;
  TimerId timer = 0;
  Duration period;  // Zero for a Timer.

  // Disarms, withdrawing a fired value that nobody has received; with `rearm_after`, arms again
  // for now() + *rearm_after. Returns whether a value was still to come or to be received: the
  // timer was armed and had not fired, or had fired into the buffer and nobody took the value
  // (Go 1.23: such a timer has not expired as far as the program can tell).
  bool rearm(const Duration* rearm_after) {
    TimerId old;
    bool was_pending;
    std::uint64_t gen;
    TimePoint deadline{};
    {
      std::lock_guard<SpinLock> guard(lock);
      const bool unreceived = channel.discard_buffered() > 0;
      was_pending = active || unreceived;
      old = timer;
      timer = 0;
      gen = ++generation;
      active = rearm_after != nullptr;
      if (rearm_after != nullptr) deadline = deadline_after(rt->now(), *rearm_after);
    }
    if (old != 0) rt->cancel_timer(old);
    if (rearm_after != nullptr) schedule(deadline, gen);
    return was_pending;
  }

  void schedule(TimePoint deadline, std::uint64_t gen) {
    if (deadline == kNoDeadline) return;  // Never fires.
    std::shared_ptr<TimerState> self = shared_from_this();
    const TimerId id =
        rt->schedule_at(deadline, [self, deadline, gen] { self->fire(deadline, gen); });
    bool stale;
    {
      std::lock_guard<SpinLock> guard(lock);
      stale = generation != gen;
      if (!stale) timer = id;
    }
    if (stale) rt->cancel_timer(id);
  }

  // Runs in the runtime's timer callback: must not block or switch threads.
  void fire(TimePoint deadline, std::uint64_t gen) {
    TimePoint next{};
    {
      std::lock_guard<SpinLock> guard(lock);
      if (gen != generation || !active) return;
      timer = 0;
      // A full buffer (Ticker) drops the tick; a Timer's buffer is empty here.
      (void)channel.try_send_from_callback(deadline);
      if (period == Duration::zero()) {
        active = false;
        return;
      }
      next = deadline + period;
      const TimePoint now = rt->now();
      if (next <= now) next += period * ((now - next) / period + 1);  // Skip missed ticks.
    }
    schedule(next, gen);
  }
};

// The state of an after_func: one word, an arming's generation (bumped by every reset) and its
// status, so that a firing of an earlier arming, racing a reset, finds another generation and does
// nothing.
struct AfterFuncTimerState {
  static constexpr std::uint64_t kArmed = 0;
  static constexpr std::uint64_t kStarted = 1;
  static constexpr std::uint64_t kStopped = 2;
  static constexpr std::uint64_t kStatusBits = 2;
  static constexpr std::uint64_t kStatusMask = (std::uint64_t{1} << kStatusBits) - 1;
  static std::uint64_t word(std::uint64_t generation, std::uint64_t status) noexcept {
    return (generation << kStatusBits) | status;
  }

  std::atomic<std::uint64_t> state{word(0, kArmed)};
  Runtime* rt = nullptr;
  std::function<void()> fn;  // Kept: a reset after the run runs it again.
  std::string thread_name;   // The name of the thread fire() starts.
  std::atomic<TimerId> timer{0};

  // Arms generation `generation` to fire `d` from now (or never, past the last time point).
  void arm(const std::shared_ptr<AfterFuncTimerState>& self, std::uint64_t generation, Duration d) {
    const TimePoint deadline = deadline_after(rt->now(), d);
    if (deadline == kNoDeadline) return;
    timer.store(rt->schedule_at(deadline, [self, generation] { self->fire(generation); }),
                std::memory_order_release);
  }

  void fire(std::uint64_t generation) {
    std::uint64_t expected = word(generation, kArmed);
    if (!state.compare_exchange_strong(expected, word(generation, kStarted),
                                       std::memory_order_acq_rel)) {
      return;
    }
    detach(rt->spawn(thread_name, fn));
  }
};

}  // namespace detail

namespace {

void check_period(const char* what, Duration period) {
  if (period <= Duration::zero()) {
    throw std::invalid_argument(std::string("bubble::Ticker::") + what +
                                ": period must be > 0, got " + format_duration(period));
  }
}

}  // namespace

Timer::Timer(Duration d, Runtime& rt) : Timer(std::string_view(), d, rt) {}

Timer::Timer(std::string_view name, Duration d, Runtime& rt)
    : state_(std::make_shared<detail::TimerState>(rt, Duration{}, name)) {
  state_->rearm(&d);
}

Timer::~Timer() {
  state_->rearm(nullptr);
}

Channel<TimePoint>& Timer::channel() noexcept {
  return state_->channel;
}

bool Timer::reset(Duration d, SourceLocation where) {
  if (state_->rt->controlled())
    state_->rt->schedule_point({"Timer::reset", state_->channel.id(), where});
  return state_->rearm(&d);
}

bool Timer::stop(SourceLocation where) {
  if (state_->rt->controlled())
    state_->rt->schedule_point({"Timer::stop", state_->channel.id(), where});
  return state_->rearm(nullptr);
}

Ticker::Ticker(Duration period, Runtime& rt) : Ticker(std::string_view(), period, rt) {}

Ticker::Ticker(std::string_view name, Duration period, Runtime& rt) {
  check_period("Ticker", period);
  state_ = std::make_shared<detail::TimerState>(rt, period, name);
  state_->rearm(&period);
}

Ticker::~Ticker() {
  state_->rearm(nullptr);
}

Channel<TimePoint>& Ticker::channel() noexcept {
  return state_->channel;
}

void Ticker::reset(Duration period, SourceLocation where) {
  check_period("reset", period);
  if (state_->rt->controlled())
    state_->rt->schedule_point({"Ticker::reset", state_->channel.id(), where});
  {
    std::lock_guard<detail::SpinLock> guard(state_->lock);
    state_->period = period;
  }
  state_->rearm(&period);
}

void Ticker::stop(SourceLocation where) {
  if (state_->rt->controlled())
    state_->rt->schedule_point({"Ticker::stop", state_->channel.id(), where});
  state_->rearm(nullptr);
}

bool AfterFunc::stop() {
  using State = detail::AfterFuncTimerState;
  if (!state_) return false;
  std::uint64_t current = state_->state.load(std::memory_order_acquire);
  do {
    if ((current & State::kStatusMask) != State::kArmed) return false;
  } while (!state_->state.compare_exchange_weak(
      current, State::word(current >> State::kStatusBits, State::kStopped),
      std::memory_order_acq_rel));
  const TimerId id = state_->timer.load(std::memory_order_acquire);
  if (id != 0) state_->rt->cancel_timer(id);
  return true;
}

bool AfterFunc::reset(Duration d) {
  using State = detail::AfterFuncTimerState;
  if (!state_) {
    throw std::logic_error(
        "bubble::AfterFunc::reset: a default-constructed handle has no function");
  }
  std::uint64_t current = state_->state.load(std::memory_order_acquire);
  std::uint64_t generation = 0;
  do {
    generation = (current >> State::kStatusBits) + 1;
  } while (!state_->state.compare_exchange_weak(current, State::word(generation, State::kArmed),
                                                std::memory_order_acq_rel));
  const bool was_pending = (current & State::kStatusMask) == State::kArmed;
  // The earlier arming's firing now finds another generation; cancelling it only saves the call.
  const TimerId id = state_->timer.load(std::memory_order_acquire);
  if (was_pending && id != 0) state_->rt->cancel_timer(id);
  state_->arm(state_, generation, d);
  return was_pending;
}

AfterFunc after_func(Duration d, std::function<void()> fn, Runtime& rt) {
  return after_func(std::string_view(), d, std::move(fn), rt);
}

AfterFunc after_func(std::string_view name, Duration d, std::function<void()> fn, Runtime& rt) {
  if (!fn) throw std::invalid_argument("bubble::after_func: fn must not be empty");
  AfterFunc handle;
  auto state = std::make_shared<detail::AfterFuncTimerState>();
  state->rt = &rt;
  state->fn = std::move(fn);
  state->thread_name = name.empty() ? std::string("after_func") : std::string(name);
  handle.state_ = state;
  state->arm(state, 0, d);
  return handle;
}

}  // namespace bubble

// The hot path of the bubble, in one translation unit: switching between fibers (with the
// AddressSanitizer annotations), parking and waking threads, and the scheduling points and
// decisions every primitive operation goes through.

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "engine/bubble.hpp"

#ifdef BUBBLE_ENGINE_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace bubble::engine {

// --- Switching ----------------------------------------------------------------------------

void Bubble::switch_to(Ctx& to) {
  Ctx* self = running_;
  if (os_threads_) [[unlikely]] {
    from_ = self;
    running_ = &to;
    // Each OS thread has its own exception state and errno; only the count the teardown reads is
    // kept.
    self->eh.uncaught = static_cast<unsigned int>(std::uncaught_exceptions());
    detail::hand_over(*self->baton, *to.baton);
    return;
  }
  check_canary(*self);
  self->switched_out_at = static_cast<const char*>(__builtin_frame_address(0));
  from_ = self;
  running_ = &to;
  EhGlobals* const eh = eh_;  // Locals: the stores below could otherwise alias the members.
  int* const error = errno_;
  self->eh = *eh;
  *eh = to.eh;
  self->error = *error;
  *error = to.error;
#ifdef BUBBLE_ENGINE_ASAN
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, to.stack_bottom, to.stack_size);
  fiber from = std::move(to.ctx).resume();
  const void* from_bottom = nullptr;
  std::size_t from_size = 0;
  __sanitizer_finish_switch_fiber(fake_stack, &from_bottom, &from_size);
  if (from_ == &main_) {
    main_.stack_bottom = from_bottom;
    main_.stack_size = from_size;
  }
#else
  fiber from = std::move(to.ctx).resume();
#endif
  arrived(std::move(from));
}

void Bubble::arrived(fiber&& from) noexcept {
  if (from_ != nullptr) from_->ctx = std::move(from);
}

void Bubble::run_thread(BThread* t) {
  t->state = ThreadState::running;
  current_ = t;
  if (tracing_) [[unlikely]]
    trace_event(Trace::EventKind::run, t->id, {}, 0, {});
  switch_to(*t);
  current_ = nullptr;
}

[[gnu::always_inline]] inline void Bubble::run_instead(BThread* self, BThread* next) {
  next->state = ThreadState::running;
  current_ = next;
  if (tracing_) [[unlikely]]
    trace_event(Trace::EventKind::run, next->id, {}, 0, {});
  switch_to(*next);
  current_ = self;
  self->state = ThreadState::running;
}

// run_instead on a fast path, which runs only when tracing is off (off_fast_path_ is clear): no
// run event to record.
[[gnu::always_inline]] inline void Bubble::hand_off(BThread* self, BThread* next) {
  next->state = ThreadState::running;
  current_ = next;
  switch_to(*next);
  current_ = self;
  self->state = ThreadState::running;
}

// The current thread has blocked (or was preempted and queued): pick who runs next.
void Bubble::leave_blocked() {
  BThread* self = current_;
  if (failed_ || queue_.empty() || timer_due()) {
    current_ = nullptr;
    switch_to(main_);
  } else {
    const std::size_t idx = decide(nullptr, nullptr);
    BThread* next = queue_.take(idx);
    touch_next_stack();
    if (next != self) {
      run_instead(self, next);
      return;
    }
  }
  current_ = self;
  self->state = ThreadState::running;
}

// The first and last frames of every thread's fiber: arrives from the thread that switched to it,
// runs the body, and leaves for whoever exit_current picks, never to be resumed.
fiber Bubble::thread_main(BThread* t, fiber&& caller) {
#ifdef BUBBLE_ENGINE_ASAN
  const void* from_bottom = nullptr;
  std::size_t from_size = 0;
  __sanitizer_finish_switch_fiber(nullptr, &from_bottom, &from_size);
  if (from_ == &main_) {
    main_.stack_bottom = from_bottom;
    main_.stack_size = from_size;
  }
#endif
  arrived(std::move(caller));
  fiber_main(t);
  check_canary(*t);
  Ctx* next = exit_current(t);
  from_ = nullptr;  // This fiber is finished: nobody stores its continuation.
  running_ = next;
  *eh_ = next->eh;
  *errno_ = next->error;
#ifdef BUBBLE_ENGINE_ASAN
  __sanitizer_start_switch_fiber(nullptr, next->stack_bottom, next->stack_size);
#endif
  return std::move(next->ctx);
}

// --- Parking ------------------------------------------------------------------------------

void Bubble::prepare(Waiter& waiter) {
  check_thread("prepare");
  thread_slot(waiter) = current_;
}

ParkResult Bubble::park(Waiter& waiter, TimePoint deadline, const WaitInfo& what) {
  check_thread("park");
  BThread* t = current_;
  if (t == nullptr || thread_slot(waiter) != t) [[unlikely]]
    bad_park(t, what);
  maybe_unwind(t);
  if (waiter.notified()) return ParkResult::notified;
  if (unwinding_) teardown_guard();
  // A step event (always the case off the fast path) goes the general way, which also does what
  // the direct hand-off does when nothing else has to happen.
  const bool step_event_ran = step_of(t, what);
  if (step_event_ran || deadline != kNoDeadline || queue_.size() != 1 || timer_due()) [[unlikely]] {
    return park_general(t, waiter, deadline, what);
  }
  // The direct hand-off (Go's runnext): exactly one thread is runnable (typically the one this
  // thread has just woken), so leave_blocked would take it without a decision (a decision with
  // one candidate is neither asked nor recorded). Switch to it without the general path.
  t->state = ThreadState::blocked;
  t->waiter = &waiter;
  made_progress(t, steps_.load(std::memory_order_relaxed));  // Blocking: the others move on.
  hand_off(t, queue_.take(0));
  t->waiter = nullptr;  // No park timer: there is no deadline.
  maybe_unwind(t);
  return waiter.notified() ? ParkResult::notified : ParkResult::timed_out;
}

// park after its step, when the direct hand-off does not apply.
ParkResult Bubble::park_general(BThread* t, Waiter& waiter, TimePoint deadline,
                                const WaitInfo& what) {
  if (deps_ != nullptr) log_point(t, what.private_wait ? own_object(t) : what.object_id);
  if (deadline <= now_) {
    // Already due: a scheduling point, then the timeout (unless woken meanwhile). A wait that
    // returns at once only gives the processor away (Progress::none).
    if (!failed_ && polled(t, Progress::none, steps_.load(std::memory_order_relaxed)) &&
        poll_slow(t, what)) {
      maybe_unwind(t);
      return waiter.notified() ? ParkResult::notified : ParkResult::timed_out;
    }
    if (failed_ || !queue_.empty() || timer_due()) {
      t->state = ThreadState::runnable;
      queue_.push_front(t);
      leave_blocked();
    }
    maybe_unwind(t);
    return waiter.notified() ? ParkResult::notified : ParkResult::timed_out;
  }
  t->state = ThreadState::blocked;
  t->waiter = &waiter;                                       // t->what was set by step_of().
  made_progress(t, steps_.load(std::memory_order_relaxed));  // Blocking: the others move on.
  if (capture_stacks_) [[unlikely]]
    detail::capture_stack(*t->blocked_stack, 1);
  if (deadline != kNoDeadline) t->park_timer = add_timer(deadline, t, nullptr);
  if (tracing_) [[unlikely]]
    trace_event(Trace::EventKind::block, t->id, what.kind, what.object_id, what.where);
  leave_blocked();
  t->waiter = nullptr;
  if (t->park_timer != 0) {
    cancel_timer(t->park_timer);
    t->park_timer = 0;
  }
  maybe_unwind(t);
  return waiter.notified() ? ParkResult::notified : ParkResult::timed_out;
}

void Bubble::bad_park(const BThread* t, const WaitInfo& what) const {
  if (t == nullptr) {
    throw std::logic_error(std::string("bubble::Runtime::park: ") + std::string(what.kind) +
                           " would block in a timer callback of " + name_ +
                           "; timer callbacks must not block");
  }
  throw std::logic_error("bubble::Runtime::park: the waiter was not prepared by thread \"" +
                         t->name + "\"");
}

void Bubble::unpark(Waiter& waiter) noexcept {
  if (tl_bubble != this) [[unlikely]]
    foreign_noexcept("unpark");
  mark_notified(waiter);
  auto* t = static_cast<BThread*>(thread_slot(waiter));
  if (t == nullptr || t->state != ThreadState::blocked || t->waiter != &waiter) return;
  if (t->park_timer != 0 || tracing_ || races_ || deps_ != nullptr) [[unlikely]] {
    unpark_slow(t);
    return;
  }
  make_runnable(t);
}

void Bubble::unpark_slow(BThread* t) noexcept {
  if (deps_ != nullptr) log_edge(RunDependencies::EventKind::wake, t);
  if (races_) races_->woke(race_thread(), static_cast<std::uint32_t>(t->id));
  if (t->park_timer != 0) {
    cancel_timer(t->park_timer);
    t->park_timer = 0;
  }
  if (tracing_) trace_wake(t);
  make_runnable(t);
}

// --- Scheduling -----------------------------------------------------------------------------

// A step at which something happens: the step budget runs out, or the strategy asked to see it
// (PCT: a change point, or the adaptive estimate passed).
void Bubble::step_event(std::uint64_t s) {
  if (max_steps_ != 0 && s > max_steps_ && !failed_) {
    fail("step budget exhausted: Options::max_steps = " + std::to_string(max_steps_), false);
  }
  if (s >= scheduler_->next_step()) scheduler_->step_reached(s, current_);
  update_next_step_event();
}

void Bubble::update_next_step_event() {
  std::uint64_t next = max_steps_ != 0 && !failed_ ? max_steps_ + 1 : ~std::uint64_t{0};
  next_step_event_ = off_fast_path_ ? 0 : std::min(next, scheduler_->next_step());
}

// The hot path of every primitive operation: count the step, remember the operation, and, when
// nothing else has to happen (no tracing, no failure, no due timer, no step event, and either an
// empty run queue or fifo, which never preempts), record the decision and return. Everything else
// goes to schedule_point_slow, which does exactly what this function did before it had a fast path.
void Bubble::schedule_point(const WaitInfo& what) {
  check_thread("schedule_point");
  BThread* t = current_;
  if (t == nullptr) return;  // A timer callback: the scheduler is already deciding.
  // No Unwind here: scheduling points happen in destructors (unlock), which must not throw.
  const std::uint64_t s = steps_.load(std::memory_order_relaxed) + 1;
  steps_.store(s, std::memory_order_relaxed);
  t->last_kind = what.kind;  // Not `what`: only a park blocks the thread.
  t->last_where = what.where;
  if (what.progress == Progress::made) [[likely]] {
    made_progress(t, s);
  } else if (polled(t, what.progress, s)) [[unlikely]] {
    schedule_point_slow(t, what, s);  // Fairness or a livelock.
    return;
  }
  // next_step_event_ is 0 off the fast path (tracing, stack capture, a failure).
  if (s >= next_step_event_ || timer_due()) [[unlikely]] {
    schedule_point_slow(t, what, s);
    return;
  }
  // What schedule_point_slow does when none of the above holds.
  if (queue_.empty()) return;
  if (fifo_) {
    picks_.record(0);  // fifo never preempts: the decision is recorded, nothing else happens.
    return;
  }
  decide_at_point<false>(t);
}

template <bool kTracing>
void Bubble::decide_at_point(BThread* t) {
  if (uniform_ != nullptr && !unwinding_) [[likely]] {
    // decide(t, nullptr) when the engine draws itself: the candidates are t and the run queue,
    // which is not empty, so there are at least two.
    const std::uint32_t idx = uniform_->below(queue_.size() + 1);
    picks_.record(idx);
    if (idx != 0) preempt<kTracing>(t, idx - 1);
    return;
  }
  const std::size_t idx = decide(t, nullptr);
  if (idx != 0) preempt<kTracing>(t, idx - 1);
}

void Bubble::schedule_point_slow(BThread* t, const WaitInfo& what, std::uint64_t s) {
  if (deps_ != nullptr) log_point(t, what.object_id);
  if (s >= next_step_event_) step_event(s);
  if (tracing_) [[unlikely]]
    trace_event(Trace::EventKind::op, t->id, what.kind, what.object_id, what.where);
  if (what.progress == Progress::none && !failed_ && s - last_progress_ >= livelock_steps_) {
    fail_livelock(t, what);
  }
  if (failed_ || timer_due()) {
    const bool spins = what.progress != Progress::made;
    if (unwinding_) {
      teardown_guard();
      if (spins && t->poll_count() >= kTeardownSpins) {
        abandon_current("(abandoned: it spun without progress while its run was torn down)");
      }
    }
    t->state = ThreadState::runnable;
    // Main decides among [t, queue...], as below; in the teardown, where main takes the front, a
    // spinning thread goes behind the others, as fairness would have it.
    if (unwinding_ && spins) {
      queue_.push_back(t);
    } else {
      queue_.push_front(t);
    }
    leave_blocked();
    return;
  }
  if (what.progress != Progress::made && t->poll_count() >= fair_bound_) {
    deschedule_for_fairness(t, what);
    return;
  }
  if (queue_.empty()) return;
  if (fifo_) {
    picks_.record(0);
    return;
  }
  if (tracing_) {
    decide_at_point<true>(t);
  } else {
    decide_at_point<false>(t);
  }
}

bool Bubble::poll_slow(BThread* t, const WaitInfo& what) {
  if (steps_.load(std::memory_order_relaxed) - last_progress_ >= livelock_steps_) {
    fail_livelock(t, what);
    return false;
  }
  if (t->poll_count() < fair_bound_) return false;
  deschedule_for_fairness(t, what);
  return true;
}

// t has made fair_bound_ operations in a row that may not progress. The other runnable threads go
// first, as at a yield (a decision among them), and the strategy learns it (PCT puts t below every
// priority). If they too have all been descheduled so since their last progress (idle), the
// runnable threads only wait for each other or for time: t waits for the next timer, as if blocked,
// so that time can move on once they all do. With no timer and nobody else, t runs on (a livelock
// report or Options::max_steps ends the run if nothing ever changes).
void Bubble::deschedule_for_fairness(BThread* t, const WaitInfo& what) {
  if (deps_ != nullptr) log_last_step_touches_all();
  t->polls = BThread::kIdle;
  bool all_idle = true;
  for (std::size_t i = 0; i < queue_.size() && all_idle; ++i) {
    all_idle = (queue_[i]->polls & BThread::kIdle) != 0;
  }
  if (all_idle && !root_returned_) {
    while (pop_stale()) {
    }
    if (!heap_.empty()) {
      wait_idle_for_next_timer(t, what);
      return;
    }
  }
  if (queue_.empty()) return;
  scheduler_->descheduled_for_fairness(*t);
  t->state = ThreadState::runnable;
  const std::size_t idx = decide(nullptr, nullptr);
  BThread* next = queue_.take(idx);
  queue_.push_back(t);
  touch_next_stack();
  run_instead(t, next);
}

// A park until the next timer's deadline that nothing but that deadline (or the teardown) ends:
// the scheduler moves time on once every thread is blocked or idle-waiting. Never throws Unwind (a
// scheduling point may be in a destructor): the thread's next blocking call does.
void Bubble::wait_idle_for_next_timer(BThread* t, const WaitInfo& what) {
  Waiter idle;
  thread_slot(idle) = t;
  t->state = ThreadState::blocked;
  t->waiter = &idle;
  t->what = &what;
  t->park_timer = add_timer(heap_.top().deadline, t, nullptr);
  if (tracing_) [[unlikely]]
    trace_event(Trace::EventKind::block, t->id, what.kind, what.object_id, what.where);
  leave_blocked();
  t->waiter = nullptr;
  if (t->park_timer != 0) {
    cancel_timer(t->park_timer);
    t->park_timer = 0;
  }
  t->polls = 0;  // Time has moved: what it waits for may have come.
}

// schedule_point_slow picked queue_[i] over the running thread t: t goes to the back of the queue.
template <bool kTracing>
void Bubble::preempt(BThread* t, std::size_t i) {
  t->state = ThreadState::runnable;
  BThread* next;
  if (queue_.size() == 1) {  // Two runnable threads (a ping-pong): they trade places.
    next = queue_.exchange_single(t);
  } else {
    next = queue_.take(i);
    queue_.push_back(t);
  }
  if constexpr (kTracing) {
    run_instead(t, next);
  } else {
    hand_off(t, next);
  }
}

void Bubble::yield(SourceLocation where) {
  check_thread("yield");
  BThread* t = current_;
  if (t == nullptr) return;
  // A thread that yields during the teardown is unwound: it would otherwise keep the teardown
  // from ever finding every thread blocked (a spin loop outliving the failure).
  if (unwinding_) t->unwind = true;
  maybe_unwind(t);
  const WaitInfo what{.kind = "yield", .where = where, .progress = Progress::none};
  step(&what);
  if (deps_ != nullptr) {
    log_point(t, 0);
    log_last_step_touches_all();
  }
  trace(Trace::EventKind::op, t->id, what.kind, 0, where);
  if (!failed_ && polled(t, Progress::none, steps_.load(std::memory_order_relaxed)) &&
      poll_slow(t, what)) {
    maybe_unwind(t);
    return;
  }
  if (queue_.empty() && !timer_due() && !failed_) return;
  if (unwinding_) teardown_guard();
  t->state = ThreadState::runnable;
  if (failed_ || queue_.empty() || timer_due()) {
    queue_.push_back(t);
    leave_blocked();  // To main, which fires the due timers or tears the run down.
  } else {
    // Another thread runs first, whatever the strategy: the decision is among the others only,
    // so that a thread that yields in a loop (a spin-wait) lets the thread it waits for run, also
    // under a strategy that would otherwise keep picking it (PCT's highest priority).
    const std::size_t idx = decide(nullptr, nullptr);
    BThread* next = queue_.take(idx);
    queue_.push_back(t);
    touch_next_stack();
    run_instead(t, next);
  }
  maybe_unwind(t);
}

// Candidates: `first` (if any), the run queue in order, `last` (if any). Returns an index into
// the run queue when first is null, else an index into the whole list.
std::size_t Bubble::decide(BThread* first, BThread* last) {
  const std::size_t n = queue_.size() + (first != nullptr) + (last != nullptr);
  if (n <= 1 || unwinding_) return 0;
  const std::uint32_t idx = uniform_ != nullptr
                                ? uniform_->below(n)
                                : scheduler_->pick_thread(Candidates(first, queue_, last));
  picks_.record(idx);
  if (deps_ != nullptr) log_choice(first, last, idx);
  return idx;
}

std::size_t Bubble::choose(std::size_t n, const WaitInfo& /*what*/) {
  check_thread("choose");
  if (n <= 1 || unwinding_) return 0;
  const std::uint32_t idx = uniform_ != nullptr ? uniform_->below(n) : scheduler_->pick_other(n);
  picks_.record(idx);
  return idx;
}

void Bubble::touch_stacks_ahead() noexcept {
  const std::size_t n =
      std::min<std::size_t>(queue_.size(), live_ > kTouchBatchFrom ? kTouchBatch : 1);
  touched_ahead_ = n - 1;
  for (std::size_t i = 0; i < n; ++i) {
    const BThread& next = *queue_[i];
    const char* const at = next.switched_out_at;
    if (at == nullptr) continue;  // Not started yet.
    const char* const bottom = static_cast<const char*>(next.stack_bottom);
    const char* const top = bottom + next.stack_size;
    for (const char* p = std::max(at - 64, bottom); p < std::min(at + 256, top); p += 64) {
      const char byte = *reinterpret_cast<const volatile char*>(p);
      asm volatile("" : : "r"(byte));
    }
  }
}

}  // namespace bubble::engine

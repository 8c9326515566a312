#include <bubble/runtime.hpp>

#include <mutex>

#include <bubble/context.hpp>
#include <bubble/detail/spin_lock.hpp>

namespace bubble {
namespace {

// The runtime whose thread is running on this OS thread; nullptr means the system runtime.
thread_local Runtime* tl_current_runtime = nullptr;

}  // namespace

namespace detail {
void set_current_runtime(Runtime* runtime) noexcept {
  tl_current_runtime = runtime;
}
}  // namespace detail

Runtime& current_runtime() noexcept {
  Runtime* rt = tl_current_runtime;
  return rt != nullptr ? *rt : system_runtime();
}

bool in_bubble() noexcept {
  const Runtime* rt = tl_current_runtime;
  return rt != nullptr && rt->controlled();
}

void Runtime::sleep_until(TimePoint deadline, SourceLocation where) {
  const WaitInfo what{"sleep", 0, where};
  if (deadline <= now()) {
    if (controlled()) schedule_point(what);
    return;
  }
  // Nobody unparks this waiter: park returns when the deadline passes.
  Waiter waiter;
  prepare(waiter);
  while (park(waiter, deadline, what) != ParkResult::timed_out) {
  }
}

void Runtime::sleep_for(Duration d, SourceLocation where) {
  if (d <= Duration::zero()) {
    sleep_until(now(), where);
    return;
  }
  const TimePoint start = now();
  // Saturate instead of overflowing: a sleep past the end of time is a sleep with no deadline.
  sleep_until(d >= kNoDeadline - start ? kNoDeadline : start + d, where);
}

void sleep_for(Duration d, SourceLocation where) {
  current_runtime().sleep_for(d, where);
}

void sleep_until(TimePoint deadline, SourceLocation where) {
  current_runtime().sleep_until(deadline, where);
}

void yield(SourceLocation where) {
  current_runtime().yield(where);
}

// --- Sleeps that a context can cut short --------------------------------------------------------

namespace {

// What the context's callback shares with the sleeping thread. The callback unparks the sleeper
// only while `claimed` is false, under `lock`; the sleeper sets `claimed` under `lock` once its
// park has returned. So the unpark, if any, has completed before the sleeper leaves (and the
// Callback's destructor waits for a callback that is still running anyway).
struct ContextSleep {
  Runtime* rt;
  Waiter waiter;
  detail::SpinLock lock;
  bool claimed = false;
};

}  // namespace

std::error_code Runtime::sleep_until(TimePoint deadline, const Context& ctx, SourceLocation where) {
  if (!ctx.can_end()) {
    sleep_until(deadline, where);
    return {};
  }
  const WaitInfo what{"sleep", 0, where};
  if (ctx.done() || deadline <= now()) {
    if (controlled()) schedule_point(what);
    if (deadline <= now()) return {};  // A sleep that is already over has elapsed in full.
    return ctx.err();
  }
  ContextSleep sleep{this, {}, {}, false};
  prepare(sleep.waiter);
  {
    const Context::Callback wake(ctx, [s = &sleep] {
      std::lock_guard<detail::SpinLock> guard(s->lock);
      if (!s->claimed) {
        s->claimed = true;
        s->rt->unpark(s->waiter);
      }
    });
    (void)park(sleep.waiter, deadline, what);
    // From here on the callback no longer touches the waiter; if it unparked it, it is done.
    const std::lock_guard<detail::SpinLock> guard(sleep.lock);
    sleep.claimed = true;
  }
  if (now() >= deadline) return {};
  return ctx.err();
}

std::error_code Runtime::sleep_for(Duration d, const Context& ctx, SourceLocation where) {
  if (d <= Duration::zero()) return sleep_until(now(), ctx, where);
  const TimePoint start = now();
  return sleep_until(d >= kNoDeadline - start ? kNoDeadline : start + d, ctx, where);
}

std::error_code sleep_for(Duration d, const Context& ctx, SourceLocation where) {
  return current_runtime().sleep_for(d, ctx, where);
}

std::error_code sleep_until(TimePoint deadline, const Context& ctx, SourceLocation where) {
  return current_runtime().sleep_until(deadline, ctx, where);
}

}  // namespace bubble

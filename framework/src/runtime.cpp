#include <bubble/runtime.hpp>

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

}  // namespace bubble

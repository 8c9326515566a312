#pragma once

// Not part of the API: two steps of the parking protocol (Runtime::prepare / park / unpark), shared
// by the primitives' slow paths and bubble::Channel.

#include <bubble/detail/wait_queue.hpp>
#include <bubble/runtime.hpp>
#include <bubble/time.hpp>

namespace bubble::detail {

// Parks the calling thread on `w` until an unpark arrives: for a waiter whose waker is known to be
// on its way (it dequeued the waiter, and unparks after releasing its lock), or that only an
// unpark can end.
inline void park_until_notified(Runtime& rt, Waiter& w, const WaitInfo& what) {
  while (rt.park(w, kNoDeadline, what) != ParkResult::notified) {
  }
}

// The step after a park whose deadline passed, for a waiter queued in `queue` under a lock that
// `hold()` takes (it returns a guard that holds the lock while it lives). If `w` is still queued,
// removes it and returns false: the wait timed out, and nobody will touch `w` again. Otherwise a
// waker dequeued it first, and its result stands: waits for its unpark and returns true.
template <class Hold>
bool finish_timed_out_park(Runtime& rt, WaitQueue& queue, Waiter& w, const WaitInfo& what,
                           Hold&& hold) {
  {
    const auto held = hold();
    if (w.queued()) {
      queue.remove(w);
      return false;
    }
  }
  park_until_notified(rt, w, what);
  return true;
}

}  // namespace bubble::detail

#pragma once

// Private helpers shared by the primitives' slow paths (Mutex, CondVar, Semaphore, ...). Not
// installed; only framework/src/*.cpp include it.

#include <mutex>
#include <string>
#include <system_error>

#include <bubble/detail/context_wait.hpp>
#include <bubble/detail/park_steps.hpp>
#include <bubble/detail/spin_lock.hpp>
#include <bubble/detail/wait_queue.hpp>
#include <bubble/detail/wake_list.hpp>
#include <bubble/errc.hpp>
#include <bubble/runtime.hpp>

namespace bubble::detail {

// Parks the calling thread on `w`, which it has prepared and queued in `queue` while holding
// `lock` (released since). This is steps 2 and 4 of the parking protocol
// (docs/design/primitives.md).
//
// Returns true when a waker removed `w` from the queue (the waker's result is in w's slots),
// false when `deadline` passed first and this call removed `w` itself (then nobody will ever
// touch `w` again). When the deadline passed but a waker had already removed `w`, the waker's
// unpark may still be on its way (wakers unpark after releasing the lock): parks again, without a
// deadline, until it arrives, so that `w` outlives every access of the waker. Either way, when
// this returns no other thread will touch `w` again.
//
// If park throws (a bubble unwinding a thread it has abandoned), removes `w` if it is still
// queued; if a waker had already removed it, calls `undo_grant(w)` (with no lock held) so that
// whatever the waker handed over (a lock, permits) is given back; then rethrows.
template <class UndoGrant>
bool park_queued(Runtime& rt, SpinLock& lock, WaitQueue& queue, Waiter& w, TimePoint deadline,
                 const WaitInfo& what, UndoGrant&& undo_grant) {
  try {
    if (rt.park(w, deadline, what) == ParkResult::notified) return true;
    return finish_timed_out_park(rt, queue, w, what,
                                 [&lock] { return std::lock_guard<SpinLock>(lock); });
  } catch (...) {
    bool granted;
    {
      std::lock_guard guard(lock);
      granted = !w.queued();
      if (w.queued()) queue.remove(w);
    }
    if (granted) undo_grant(w);
    throw;
  }
}

inline bool park_queued(Runtime& rt, SpinLock& lock, WaitQueue& queue, Waiter& w,
                        TimePoint deadline, const WaitInfo& what) {
  return park_queued(rt, lock, queue, w, deadline, what, [](Waiter&) {});
}

// now + d on `rt`'s clock, saturating at kNoDeadline instead of overflowing.
inline TimePoint deadline_after(Runtime& rt, Duration d) noexcept {
  return bubble::deadline_after(rt.now(), d);
}

}  // namespace bubble::detail

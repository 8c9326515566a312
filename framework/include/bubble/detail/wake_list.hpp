#pragma once

#include <bubble/detail/intrusive_list.hpp>
#include <bubble/runtime.hpp>

namespace bubble::detail {

// WakeList collects the waiters a waker has removed from a primitive's wait queue under the
// primitive's lock, and unparks them when it is destroyed, after that lock has been released.
//
// Why: a woken thread may return from its wait and destroy the primitive at once (every primitive
// allows it, as std::condition_variable and absl::Notification do). So a waker's last access to
// the primitive must happen before its first unpark. Declare the WakeList before the lock guard:
//
//   detail::WakeList wake(*rt_);   // destroyed last: unparks with the lock released
//   std::lock_guard guard(spin_);
//   ... if (Waiter* w = queue_.pop_front()) { w->status = ...; wake.add(*w); }
//
// The list holds the Runtime by reference (a runtime outlives its primitives) and links the
// waiters through Waiter::wake_hook (an IntrusiveList: no allocation). unpark_all unlinks each
// waiter before unparking it, because an unparked waiter may return and end its Waiter's life.
// Not thread-safe: one list belongs to one call of one waker.
//
// A primitive that takes no lock on a controlled runtime (a bubble, whose threads run one at a
// time and switch only at scheduling points and parks) may ask for `immediate` unparks: add()
// then unparks at once, in the same order, since no woken thread can run before the waker's
// next scheduling point or park anyway.
class WakeList {
 public:
  explicit WakeList(Runtime& rt, bool immediate = false) noexcept
      : rt_(rt), immediate_(immediate) {}
  WakeList(const WakeList&) = delete;
  WakeList& operator=(const WakeList&) = delete;
  ~WakeList() { unpark_all(); }

  // Adds `w`, which the caller has just removed from its queue (so it is in no queue and no list);
  // with `immediate`, unparks it instead.
  void add(Waiter& w) noexcept {
    if (immediate_) {
      rt_.unpark(w);
    } else {
      waiters_.push_back(w);
    }
  }

  bool empty() const noexcept { return waiters_.empty(); }

  // Unparks every collected waiter, in the order they were added, and empties the list. Touches
  // only the waiters and the runtime, never the primitive they were queued in.
  void unpark_all() noexcept {
    while (Waiter* w = waiters_.pop_front()) rt_.unpark(*w);
  }

 private:
  Runtime& rt_;
  const bool immediate_;
  IntrusiveList<Waiter, &Waiter::wake_hook> waiters_;
};

// The wake-ups of a primitive's call on a controlled runtime, where it takes no lock: add()
// unparks at once, as a WakeList made `immediate` does, without the list the compiler cannot
// prove stays empty (no destructor, no test of the flag). Use it only where such a WakeList
// would be immediate.
class UnparkAtOnce {
 public:
  explicit UnparkAtOnce(Runtime& rt) noexcept : rt_(rt) {}
  UnparkAtOnce(const UnparkAtOnce&) = delete;
  UnparkAtOnce& operator=(const UnparkAtOnce&) = delete;

  // Unparks `w`, which the caller has just removed from its queue.
  void add(Waiter& w) noexcept { rt_.unpark(w); }

 private:
  Runtime& rt_;
};

}  // namespace bubble::detail

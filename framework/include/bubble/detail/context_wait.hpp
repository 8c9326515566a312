#pragma once

#include <mutex>
#include <optional>
#include <system_error>

#include <bubble/context.hpp>
#include <bubble/detail/spin_lock.hpp>
#include <bubble/detail/wait_queue.hpp>
#include <bubble/detail/wake_list.hpp>
#include <bubble/errc.hpp>
#include <bubble/runtime.hpp>

namespace bubble::detail {

// The error a wait reports when its context ended it: ctx.err(), which is never empty once the
// context has run its callbacks (errc::canceled as a fallback).
inline std::error_code ended_error(const std::error_code& err) noexcept {
  return err ? err : make_error_code(errc::canceled);
}

// What EndWaitOnDone does after unlinking the waiter, by default: nothing.
struct NothingMore {
  void operator()(bool /*was_front*/, WakeList& /*wake*/) const noexcept {}
};

// EndWaitOnDone ends one queued wait when a context ends: the wiring that every primitive whose
// blocking calls take a Context shares (CondVar, Notification, Semaphore, WeightedSemaphore,
// Channel). The caller has queued `waiter` in `queue`; once armed, a Context::Callback on the
// context runs on the thread that ends it (or in arm(), at once, if it has already ended). The
// callback takes `lock` (nullptr: the primitive needs none, as a Channel in a bubble) and, if the
// waiter is still queued, removes it, sets waiter.status to `ended_status`, calls
// `then(was_front, wake)` under the lock (was_front: the waiter was first in the queue), and,
// once the lock is released, unparks the waiter, then whatever `then` added to `wake`. If a waker
// dequeued the waiter first, the callback does nothing and the waker's result stands. So for the
// waiting thread an ending context is one more waker: it parks as usual (park_queued), and the
// waiter's status says who woke it; ended_error(ctx.err()) is then the error to return.
//
// Declare it after the Waiter: its destructor (or disarm) deregisters the callback and, if the
// callback is running on another thread, waits until it has returned, so the waiter outlives
// every access of the callback. Not copyable or movable (the callback holds its address).
template <class Then = NothingMore>
class EndWaitOnDone {
 public:
  EndWaitOnDone(Runtime& rt, SpinLock* lock, WaitQueue& queue, Waiter& waiter, int ended_status,
                Then then = {}) noexcept
      : rt_(rt),
        lock_(lock),
        queue_(queue),
        waiter_(waiter),
        ended_status_(ended_status),
        then_(then) {}
  EndWaitOnDone(const EndWaitOnDone&) = delete;
  EndWaitOnDone& operator=(const EndWaitOnDone&) = delete;

  // Registers the callback on `ctx`; does nothing if `ctx` is null or can never end
  // (background()), or if it is already armed. Never blocks, never throws (the callback captures
  // one pointer, which std::function keeps without allocating). If `ctx` has already ended, the
  // callback runs before arm returns.
  void arm(const Context* ctx) noexcept {
    if (ctx == nullptr || !ctx->can_end() || callback_) return;
    callback_.emplace(*ctx, [self = this] { self->end_wait(); });
  }

  // Deregisters the callback, waiting for it if it is running on another thread. After it, the
  // callback never touches the waiter again. Does nothing if not armed.
  void disarm() noexcept { callback_.reset(); }

 private:
  void end_wait() noexcept {
    WakeList wake(rt_);  // Destroyed last: unparks with the lock released.
    std::unique_lock<SpinLock> guard;
    if (lock_ != nullptr) guard = std::unique_lock<SpinLock>(*lock_);
    if (!waiter_.queued()) return;  // A waker dequeued it first: its result stands.
    const bool was_front = queue_.front() == &waiter_;
    queue_.remove(waiter_);
    waiter_.status = ended_status_;
    wake.add(waiter_);
    then_(was_front, wake);
  }

  Runtime& rt_;
  SpinLock* const lock_;
  WaitQueue& queue_;
  Waiter& waiter_;
  const int ended_status_;
  [[no_unique_address]] Then then_;
  std::optional<Context::Callback> callback_;
};

}  // namespace bubble::detail

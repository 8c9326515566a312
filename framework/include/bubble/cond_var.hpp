#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <system_error>

#include <bubble/context.hpp>
#include <bubble/detail/runtime_check.hpp>
#include <bubble/detail/spin_lock.hpp>
#include <bubble/detail/wait_queue.hpp>
#include <bubble/mutex.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>
#include <bubble/time.hpp>

namespace bubble {

// CondVar is a condition variable for bubble::Mutex, written on the Runtime kernel: it works
// unchanged on real threads and in a bubble (where waiting threads are parked, and timed waits
// use virtual time).
//
// Unlike std::condition_variable, it has no spurious wakeups: wait(lock) returns only after a
// notify_one() or notify_all() that chose this thread; wait_until returns std::cv_status::timeout
// only when the deadline passed on the runtime's clock before any notify chose this thread; the
// Context overload returns early only when the context ended. Still, state changes should be
// checked in a loop (the predicate overloads do it), because another thread may take the mutex
// and change the state between the notify and the return of wait.
//
// Waiting threads are woken in FIFO order: notify_one() wakes the longest-waiting thread.
// Every wait atomically releases the mutex and queues the thread (a notify issued after the
// release is never lost), and re-acquires the mutex before returning, also on timeout and
// cancellation.
//
// Runtime check: every wait throws std::logic_error at once, changing nothing, unless the calling
// thread runs on the CondVar's runtime and on its Mutex's (a CondVar or Mutex of the system
// runtime used by a bubble thread, or a bubble's used by another thread); the message names the
// primitive ("bubble::CondVar #4"), its runtime and the caller's runtime.
//
// Thread safety: all members may be called concurrently. notify_one and notify_all may be called
// with or without the mutex held. Every wait requires `lock` to own its Mutex; otherwise it
// throws std::logic_error. Lifetime: a CondVar may be destroyed as soon as a wait on
// it has returned and no thread waits on it, even while the notify that woke the waiter is still
// returning, as std::condition_variable allows; destroying it while threads wait on it is
// undefined behaviour.
class CondVar {
 public:
  explicit CondVar(Runtime& rt = current_runtime()) noexcept;
  // The same, called `name` in deadlock reports (CondVar::wait "jobs" (object #4)); the name is
  // recorded once, here.
  explicit CondVar(std::string_view name, Runtime& rt = current_runtime());
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases the mutex, blocks until notified, re-acquires the mutex.
  void wait(std::unique_lock<Mutex>& lock, SourceLocation where = SourceLocation::current());

  // Waits until pred() is true: `while (!pred()) wait(lock);`.
  template <class Predicate>
  void wait(std::unique_lock<Mutex>& lock, Predicate pred,
            SourceLocation where = SourceLocation::current()) {
    while (!pred()) wait(lock, where);
  }

  // Like wait(lock), but also returns when `ctx` ends: returns ctx.err() (errc::canceled or
  // errc::deadline_exceeded) if the context ended before a notify chose this thread, or an empty
  // error_code when notified. If `ctx` is already done, releases and re-acquires the mutex and
  // returns ctx.err() without waiting.
  [[nodiscard]] std::error_code wait(std::unique_lock<Mutex>& lock, const Context& ctx,
                                     SourceLocation where = SourceLocation::current());

  // Like wait(lock), but gives up when the runtime's clock reaches `deadline`: returns
  // std::cv_status::timeout if the deadline passed before a notify chose this thread,
  // std::cv_status::no_timeout otherwise. A deadline in the past still releases and re-acquires
  // the mutex.
  std::cv_status wait_until(std::unique_lock<Mutex>& lock, TimePoint deadline,
                            SourceLocation where = SourceLocation::current());

  // wait_until(lock, now + timeout) (saturating).
  std::cv_status wait_for(std::unique_lock<Mutex>& lock, Duration timeout,
                          SourceLocation where = SourceLocation::current());

  // Waits until pred() is true or the deadline passes; returns pred() (so false means timeout
  // with the predicate still false).
  template <class Predicate>
  bool wait_until(std::unique_lock<Mutex>& lock, TimePoint deadline, Predicate pred,
                  SourceLocation where = SourceLocation::current()) {
    while (!pred()) {
      if (wait_until(lock, deadline, where) == std::cv_status::timeout) return pred();
    }
    return true;
  }

  // wait_until(lock, now + timeout, pred) (saturating).
  template <class Predicate>
  bool wait_for(std::unique_lock<Mutex>& lock, Duration timeout, Predicate pred,
                SourceLocation where = SourceLocation::current()) {
    return wait_until(lock, deadline_after(timeout), std::move(pred), where);
  }

  // Wakes the longest-waiting thread, if any. Never blocks. With no thread waiting it costs one
  // load (no lock): a thread that waits does so while it holds the Mutex, so a notifier that
  // changed the condition under that Mutex sees it counted (see primitives/cond_var.cpp).
  void notify_one(SourceLocation where = SourceLocation::current());

  // Wakes every waiting thread. Never blocks. As cheap as notify_one when no thread waits.
  void notify_all(SourceLocation where = SourceLocation::current());

  // Diagnostics and tests: the number of threads currently waiting (queued, not yet notified).
  std::size_t waiters() const noexcept;

  Runtime& runtime() const noexcept { return *rt_; }
  std::uint64_t id() const noexcept { return id_; }

 private:
  TimePoint deadline_after(Duration timeout) const noexcept;
  // Queues, unlocks, parks until `deadline`, relocks. Returns the waiter's final status.
  int wait_impl(std::unique_lock<Mutex>& lock, TimePoint deadline, const Context* ctx,
                const char* kind, SourceLocation where);

  Runtime* rt_;
  std::uint64_t binding_;  // detail::binding_of(*rt_), checked by the blocking calls.
  std::uint64_t id_;
  mutable detail::SpinLock spin_;
  detail::WaitQueue queue_;
  // Threads inside a wait, from before they queue (under the Mutex) to after they left the queue:
  // zero means that no thread is queued or about to be.
  std::atomic<std::size_t> in_wait_{0};
};

}  // namespace bubble

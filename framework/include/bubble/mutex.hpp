#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <bubble/detail/not_instrumented.hpp>
#include <bubble/detail/runtime_check.hpp>
#include <bubble/detail/spin_lock.hpp>
#include <bubble/detail/wait_queue.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>

namespace bubble {

// Mutex is a mutual-exclusion lock written on the Runtime kernel: it works unchanged on real
// threads (system_runtime()) and in a bubble, where a thread blocked on it is parked (durably
// blocked), so a Mutex held across a sleep never hangs a test.
//
// It satisfies Lockable: std::lock_guard, std::unique_lock and std::scoped_lock work with it, and
// CondVar waits on a std::unique_lock<Mutex>.
//
// Fairness: barging with starvation protection, after Go's sync.Mutex. Normally the mutex is
// free between owners, and a thread calling lock() or try_lock() may take it ahead of threads
// already waiting ("barging"): that keeps throughput high under contention, where a strict FIFO
// hand-off makes every lock wait for a context switch (mutex_bench's BM_BubbleMutex_Contended
// against BM_StdMutex_Contended). Waiters queue in FIFO order; unlock() wakes the first one (only
// one woken waiter at a time), which then competes for the mutex; a woken waiter that loses goes
// back to the front of the queue. A woken waiter that loses after waiting longer than 10 ms
// switches the mutex to starvation mode: the next unlock() hands the mutex directly to it
// (newcomers and try_lock() cannot take it meanwhile), then the mutex returns to normal mode. So
// every waiter eventually gets the mutex, however often other threads relock it.
//
// Cost on the system runtime: an uncontended lock() is one compare-and-swap plus one relaxed
// store (the owner), and an uncontended unlock() one relaxed load, one relaxed store and one
// compare-and-swap; no virtual call and no system call. A contended lock() spins briefly (on the
// system runtime only), then parks the thread.
//
// Runtime check: lock throws std::logic_error at once, changing nothing, unless the
// calling thread runs on the Mutex's runtime (a Mutex of the system runtime used by a bubble
// thread, or a bubble's Mutex used by another thread); the message names the Mutex
// ("bubble::Mutex #4"), its runtime and the caller's runtime.
//
// Thread safety: all members may be called concurrently. Not recursive: a thread that locks a
// Mutex it already holds deadlocks (in a bubble the run reports the deadlock). Lifetime: a Mutex
// may be destroyed as soon as it is unlocked and nobody waits for it, even while the unlock()
// that handed it to the destroying thread is still returning, as for std::mutex; destroying a
// Mutex that is locked or has waiters is undefined behaviour.
class Mutex {
 public:
  // A mutex of `rt`; every thread that uses it must belong to `rt`.
  explicit Mutex(Runtime& rt = current_runtime()) noexcept;
  // A mutex of `rt` called `name` in deadlock reports ("Mutex::lock "accounts" (object #3)"),
  // as in `Mutex accounts("accounts")`. The name is recorded once, here.
  explicit Mutex(std::string_view name, Runtime& rt = current_runtime());
  ~Mutex();
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // Blocks until the calling thread holds the mutex. Waiting threads queue in FIFO order, and a
  // newcomer may take the mutex ahead of them (see "Fairness" above).
  // Throws std::logic_error, at once, if the calling thread does not run on the mutex's runtime
  // (see "Runtime check" above).
  BUBBLE_NOT_INSTRUMENTED void lock(SourceLocation where = SourceLocation::current()) {
    detail::check_caller(binding_, rt_, "Mutex", id_, "Mutex::lock");
    const void* self = enter("Mutex::lock", where);
    std::uint32_t expected = kUnlocked;
    TimePoint waited_since = kDidNotWait;
    if (!state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire,
                                        std::memory_order_relaxed)) [[unlikely]] {
      waited_since = lock_slow(where);
    }
    owner_.store(self, std::memory_order_relaxed);
    if (binding_ != 0) [[unlikely]] {
      acquired_controlled("Mutex::lock", waited_since, where);
    }
  }

  // Takes the mutex if it is free and returns true; returns false at once otherwise (also in
  // starvation mode, where a free mutex is reserved for the first waiter). Never blocks.
  [[nodiscard]] BUBBLE_NOT_INSTRUMENTED bool try_lock(
      SourceLocation where = SourceLocation::current()) {
    const void* self = enter("Mutex::try_lock", where);
    std::uint32_t s = state_.load(std::memory_order_relaxed);
    do {
      if ((s & (kLocked | kStarving)) != 0) return false;
    } while (!state_.compare_exchange_weak(s, s | kLocked, std::memory_order_acquire,
                                           std::memory_order_relaxed));
    owner_.store(self, std::memory_order_relaxed);
    if (binding_ != 0) [[unlikely]] {
      acquired_controlled("Mutex::try_lock", kDidNotWait, where);
    }
    return true;
  }

  // Releases the mutex and wakes the first waiting thread, if any (in starvation mode: hands the
  // mutex to it). Never blocks. In a bubble it is a scheduling point twice: before the release
  // and after it, so that a thread the release woke may run (and take the mutex) before the
  // unlocking thread locks it again; the calling thread does not touch the mutex after the
  // release.
  // Throws std::logic_error if the calling thread does not hold the mutex (including when it is
  // not locked at all); the mutex is then left unchanged.
  BUBBLE_NOT_INSTRUMENTED void unlock(SourceLocation where = SourceLocation::current()) {
    const void* self = enter("Mutex::unlock", where);
    if (owner_.load(std::memory_order_relaxed) != self) [[unlikely]] {
      throw_not_owner();
    }
    if (binding_ != 0) [[unlikely]] {
      unlock_controlled(where);
      return;
    }
    release();
  }

  // Diagnostics and tests: the number of threads blocked in lock(). A snapshot, stale at once
  // unless the caller knows no thread is arriving or leaving.
  std::size_t waiters() const noexcept;

  // The runtime this mutex belongs to, and its object id in that runtime.
  Runtime& runtime() const noexcept { return *rt_; }
  std::uint64_t id() const noexcept { return id_; }

 private:
  // Bits of state_. kUnlocked (no bit) is the only state the fast paths handle besides kLocked.
  static constexpr std::uint32_t kUnlocked = 0;
  static constexpr std::uint32_t kLocked = 1;    // Held.
  static constexpr std::uint32_t kWoken = 2;     // A woken waiter is on its way: wake no other.
  static constexpr std::uint32_t kStarving = 4;  // Starvation mode: unlock hands off, no barging.
  static constexpr std::uint32_t kQueued = 8;    // Threads are queued (changed under spin_ only).

  // The scheduling point of every operation, and the calling thread's owner token
  // (Runtime::current_thread_token).
  const void* enter(const char* kind, SourceLocation where) {
    if (binding_ != 0) [[unlikely]] {  // Controlled: see binding_of.
      return enter_controlled(kind, where);
    }
    return rt_->current_thread_token();
  }
  const void* enter_controlled(const char* kind, SourceLocation where);
  // Frees the mutex (the owner has been checked).
  BUBBLE_NOT_INSTRUMENTED void release() {
    owner_.store(nullptr, std::memory_order_relaxed);
    std::uint32_t expected = kLocked;
    if (!state_.compare_exchange_strong(expected, kUnlocked, std::memory_order_release,
                                        std::memory_order_relaxed)) [[unlikely]] {
      unlock_slow();
    }
  }
  // What lock_slow returns when the caller took the mutex without queueing.
  static constexpr TimePoint kDidNotWait = TimePoint::max();
  // Waits for the mutex and takes it; returns when the caller began to wait (queued), or
  // kDidNotWait.
  TimePoint lock_slow(SourceLocation where);
  void unlock_slow() noexcept;
  // Controlled runtimes: the trace's acquire event (when a trace is recorded), and unlock with
  // its release event and its scheduling point after the release.
  void acquired_controlled(const char* kind, TimePoint waited_since, SourceLocation where);
  void unlock_controlled(SourceLocation where);
  [[noreturn]] void throw_not_owner() const;
  // WaitInfo::describe of a thread blocked in lock(): the owner and since when.
  static void describe_wait(const void* self, WaitDetail& detail);

  std::atomic<std::uint32_t> state_{kUnlocked};
  std::atomic<const void*> owner_{nullptr};
  Runtime* rt_;
  std::uint64_t binding_;  // detail::binding_of(*rt_), checked by the blocking calls.
  std::uint64_t id_;
  TimePoint held_since_{};  // When the owner took it; recorded in a bubble only (traces, reports).
  friend class CondVar;     // Checks the caller against binding_ for the Mutex it waits with.
  // Guards queue_ and every change of kQueued, kWoken and kStarving. The queue is FIFO, except
  // that a woken waiter that loses the race to a newcomer goes back to the front.
  mutable detail::SpinLock spin_;
  detail::WaitQueue queue_;
};

}  // namespace bubble

#pragma once

#include <atomic>
#include <cstdint>

#include <bubble/detail/not_instrumented.hpp>

namespace bubble::detail {

// SpinLock guards the short internal critical sections of the primitives (their wait queues and
// counters). It is never held across a park, so in a bubble (one thread runs at a time, and
// threads switch only when they park or reach a scheduling point) it is never contended.
//
// On the system runtime a contended lock() spins a bounded number of rounds (with the processor's
// pause instruction) in case the holder is about to release it, then sleeps on a futex until the
// holder's unlock wakes it: a holder that was preempted costs the waiter one sleep, not a storm of
// sched_yield calls competing with the holder for the processor. The lock word follows Ulrich
// Drepper's "Futexes Are Tricky" (mutex, take 2): 0 free, 1 held, 2 held and perhaps slept on;
// unlock() makes a system call only in the last state.
//
// Satisfies Lockable, so std::lock_guard and std::unique_lock work with it.
class SpinLock {
 public:
  BUBBLE_NOT_INSTRUMENTED void lock() noexcept {
    std::uint32_t free = kFree;
    if (!word_.compare_exchange_strong(free, kHeld, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      lock_slow();
    }
  }
  BUBBLE_NOT_INSTRUMENTED bool try_lock() noexcept {
    std::uint32_t free = kFree;
    return word_.compare_exchange_strong(free, kHeld, std::memory_order_acquire,
                                         std::memory_order_relaxed);
  }
  BUBBLE_NOT_INSTRUMENTED void unlock() noexcept {
    if (word_.exchange(kFree, std::memory_order_release) == kSleptOn) wake_one();
  }

 private:
  static constexpr std::uint32_t kFree = 0;
  static constexpr std::uint32_t kHeld = 1;
  static constexpr std::uint32_t kSleptOn = 2;

  // Spins, then sleeps until the lock is taken (framework/src/kernel/spin_lock.cpp).
  void lock_slow() noexcept;
  // Wakes one thread sleeping in lock_slow.
  void wake_one() noexcept;

  std::atomic<std::uint32_t> word_{kFree};
};

}  // namespace bubble::detail

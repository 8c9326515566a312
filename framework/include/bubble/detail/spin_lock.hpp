#pragma once

#include <atomic>
#include <thread>

namespace bubble::detail {

// SpinLock guards the short internal critical sections of the primitives (their wait queues and
// counters). It is never held across a park, so in a bubble (one thread runs at a time, and
// threads switch only when they park or reach a scheduling point) it is never contended; on the
// system runtime it spins briefly and then yields the processor.
//
// Satisfies Lockable, so std::lock_guard and std::unique_lock work with it.
class SpinLock {
 public:
  void lock() noexcept {
    for (int spins = 0; !try_lock(); ++spins) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins > 64) {
          std::this_thread::yield();
        } else {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        }
      }
    }
  }
  bool try_lock() noexcept {
    return !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept {
    locked_.store(false, std::memory_order_release);
  }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace bubble::detail

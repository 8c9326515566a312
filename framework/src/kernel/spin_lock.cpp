// detail::SpinLock's slow path: bounded spinning, then a futex sleep (see spin_lock.hpp).

#include <bubble/detail/cpu_relax.hpp>
#include <bubble/detail/spin_lock.hpp>

#include "kernel/futex.hpp"

namespace bubble::detail {
namespace {

// Rounds of `pause` before sleeping. The critical sections guarded are a few dozen instructions,
// so a holder that is running releases the lock within a few rounds; one that is not (preempted,
// on a machine with more threads than processors) will not release it for a scheduler time
// slice, and spinning longer only takes the processor from it.
constexpr int kSpinRounds = 100;

}  // namespace

void SpinLock::lock_slow() noexcept {
  for (int i = 0; i < kSpinRounds; ++i) {
    std::uint32_t seen = word_.load(std::memory_order_relaxed);
    if (seen == kFree && word_.compare_exchange_weak(seen, kHeld, std::memory_order_acquire,
                                                     std::memory_order_relaxed)) {
      return;
    }
    cpu_relax();
  }
  // From here on the lock is taken in the slept-on state: this thread cannot know whether others
  // sleep too, so its unlock must wake one.
  while (word_.exchange(kSleptOn, std::memory_order_acquire) != kFree) {
    futex_wait(word_, kSleptOn, nullptr);
  }
}

void SpinLock::wake_one() noexcept {
  // The lock is free already: another thread may have taken it and destroyed the object that
  // holds it. A futex wake on such a word is harmless (glibc bug 13690 discusses the same
  // pattern in pthread mutexes): it touches no memory, and a sleeper on reused memory re-checks
  // its own word.
  futex_wake_one(word_);
}

}  // namespace bubble::detail

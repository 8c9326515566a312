#pragma once

// Linux futexes on a 32-bit atomic word, for the system runtime's parker and detail::SpinLock's
// slow path. Private to framework/src. A futex is only a sleeping place: every decision is made
// on the atomic word itself (with acquire/release operations that ThreadSanitizer sees), so these
// calls never carry synchronisation and may return spuriously.

#include <atomic>
#include <cerrno>
#include <cstdint>

#if !defined(__linux__)
#error "bubble's system runtime parks threads on Linux futexes"
#endif

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace bubble::detail {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "a futex word is a plain 32-bit integer");

// Both calls leave errno as they found it: the kernel's answers (EAGAIN when the word no longer
// holds `expected`, ETIMEDOUT, EINTR) are how a wait returns, not errors, and the blocking calls
// built on these (a park, Mutex::lock) must not change their caller's errno.

// Sleeps while `word` holds `expected`: returns at once if it does not, else when woken by
// futex_wake_one, when `timeout` (relative, on CLOCK_MONOTONIC; nullptr: none) has elapsed, on
// a signal, or spuriously. The caller re-reads the word to find out which.
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       const timespec* timeout) noexcept {
  const int saved_errno = errno;
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, timeout,
          nullptr, 0);
  errno = saved_errno;
}

// Wakes at most one thread sleeping in futex_wait on `word`. Harmless on a word nobody sleeps
// on, and on memory that has since been reused for another word (its sleeper wakes spuriously).
inline void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept {
  const int saved_errno = errno;
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
  errno = saved_errno;
}

}  // namespace bubble::detail

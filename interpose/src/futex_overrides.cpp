// syscall(SYS_futex, ...): what libstdc++ 12 blocks in for std::atomic<T>::wait,
// std::counting_semaphore, std::latch, std::barrier (inline, in the executable) and the waits of
// std::future (in libstdc++.so). Inside a bubble thread of an intercepting run, FUTEX_WAIT and
// FUTEX_WAKE (plain and _BITSET, private or not) park on and wake a bubble CondVar found in a side
// table by the futex word's address; every other system call, and every call elsewhere, is the
// real one.

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdint>
#include <mutex>

#include <bubble/bubble.hpp>

#include "caller.hpp"
#include "real.hpp"
#include "run_state.hpp"
#include "time_mapping.hpp"

namespace d = bubble::interpose::detail;

namespace {

std::uint32_t load(const std::uint32_t* word) noexcept {
  return std::atomic_ref<const std::uint32_t>(*word).load(std::memory_order_acquire);
}

// FUTEX_WAIT: blocks while *word == expected, until a FUTEX_WAKE on `word` or the deadline.
// Returns 0 when woken, or -1 with errno EAGAIN (the word had changed), ETIMEDOUT, or EINTR (the
// run is being torn down: the caller, which must be ready for EINTR, retries, and its next wait
// receives the teardown again).
long futex_wait(d::RunState& state, const std::uint32_t* word, std::uint32_t expected,
                bubble::TimePoint deadline, bubble::SourceLocation where) {
  d::FutexEntry& e = state.futex(word);
  try {
    // The guard makes the check and the queueing atomic with respect to a waker, which takes it
    // to notify: a wake after the check finds this thread queued.
    std::unique_lock lock(e.guard);
    if (load(word) != expected) {
      errno = EAGAIN;
      return -1;
    }
    if (deadline == bubble::kNoDeadline) {
      e.cond.wait(lock, where);
      return 0;
    }
    if (e.cond.wait_until(lock, deadline, where) == std::cv_status::timeout) {
      errno = ETIMEDOUT;
      return -1;
    }
    return 0;
  } catch (const bubble::Unwind&) {
    // A failed run tears the thread down (`syscall` is noexcept): an error that is neither
    // EAGAIN nor EINTR, on which libstdc++'s atomic wait throws std::system_error, so that the
    // thread's frames unwind.
    errno = EDEADLK;
    return -1;
  }
}

// FUTEX_WAKE: wakes up to `count` waiters on `word`; returns how many it woke.
long futex_wake(d::RunState& state, const std::uint32_t* word, long count,
                bubble::SourceLocation where) {
  d::FutexEntry& e = state.futex(word);
  std::lock_guard lock(e.guard);
  const auto waiting = static_cast<long>(e.cond.waiters());
  const long woken = count < waiting ? count : waiting;
  if (woken == waiting) {
    e.cond.notify_all(where);
  } else {
    for (long i = 0; i < woken; ++i) e.cond.notify_one(where);
  }
  return woken;
}

long futex(d::RunState& state, const long* a, bubble::SourceLocation where) {
  const auto* word = reinterpret_cast<const std::uint32_t*>(a[0]);
  const int op = static_cast<int>(a[1]);
  const auto value = static_cast<std::uint32_t>(a[2]);
  const auto* timeout = reinterpret_cast<const timespec*>(a[3]);
  bubble::Runtime& rt = state.runtime();
  switch (op & FUTEX_CMD_MASK) {
    case FUTEX_WAIT: {  // Relative timeout, measured on the monotonic clock.
      const bubble::TimePoint deadline =
          timeout == nullptr ? bubble::kNoDeadline : rt.now() + d::to_duration(*timeout);
      return futex_wait(state, word, value, deadline, where);
    }
    case FUTEX_WAIT_BITSET: {  // Absolute timeout; the bitset is taken as "match any".
      const d::ClockKind clock =
          (op & FUTEX_CLOCK_REALTIME) != 0 ? d::ClockKind::wall : d::ClockKind::steady;
      const bubble::TimePoint deadline =
          timeout == nullptr ? bubble::kNoDeadline : d::deadline_of(rt, clock, *timeout);
      return futex_wait(state, word, value, deadline, where);
    }
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET:
      return futex_wake(state, word, static_cast<long>(static_cast<int>(a[2])), where);
    default:
      errno = ENOSYS;  // Requeue, PI and other futex operations are not modelled.
      return -1;
  }
}

}  // namespace

// A system call takes at most six arguments, passed as machine words: syscall forwards all six
// (those the caller did not pass are never read by the kernel). Reading them past the caller's
// last argument reads words of the caller's stack frame, harmless but flagged by
// AddressSanitizer: this one function is not instrumented.
extern "C" __attribute__((no_sanitize("address"))) long syscall(long number, ...) noexcept {
  long a[6];
  va_list args;
  va_start(args, number);
  for (long& x : a) x = va_arg(args, long);
  va_end(args);
  if (number == SYS_futex && d::intercepting() != nullptr && d::on_bubble_thread()) {
    try {
      return futex(d::RunState::of(*d::intercepting()), a, BUBBLE_CALLER(syscall));
    } catch (...) {
      errno = ENOMEM;
      return -1;
    }
  }
  return BUBBLE_REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

// POSIX semaphores (sem_init, sem_wait, sem_trywait, sem_timedwait, sem_clockwait, sem_post,
// sem_getvalue, sem_destroy; also those of sem_open): inside a bubble thread of an intercepting
// run, a waiter waits on a bubble condition variable of the run's side table, so it is durably
// blocked, deadlocks are reported and timed waits time out in virtual time. The count stays in the
// sem_t itself, in glibc's layout (the low 32 bits of its first 64-bit word; the high 32 count
// glibc's waiters, which no bubble thread adds to), so sem_getvalue and the real functions see the
// same value before, during and after the run. Elsewhere the real functions.

#include <semaphore.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <mutex>

#include <bubble/bubble.hpp>

#include "caller.hpp"
#include "intercepted.hpp"
#include "time_mapping.hpp"

namespace d = bubble::interpose::detail;
using d::Intercepted;
using d::SemEntry;

namespace {

// The count of `sem`: glibc's new_sem on a 64-bit target keeps it in bits 0..31 of `data`.
std::atomic_ref<std::uint64_t> word_of(sem_t* sem) noexcept {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(sem));
}

constexpr std::uint64_t kValueMask = 0xffff'ffffU;

std::uint64_t value_of(sem_t* sem) noexcept {
  return word_of(sem).load(std::memory_order_relaxed) & kValueMask;
}

// Takes one unit of `sem`, waiting until `deadline` (kNoDeadline: for ever). Returns 0, or -1 with
// errno ETIMEDOUT. Throws bubble::Unwind when a failed run tears the thread down while it waits
// (sem_wait is a cancellation point, not noexcept: the thread's destructors run).
int wait_until(Intercepted in, sem_t* sem, bubble::TimePoint deadline,
               bubble::SourceLocation where) {
  SemEntry& e = in.state->sem(sem);
  e.guard.lock(where);  // A scheduling point, as every bubble Mutex::lock.
  std::unique_lock guard(e.guard, std::adopt_lock);
  while (value_of(sem) == 0) {
    if (deadline == bubble::kNoDeadline) {
      e.posted.wait(guard, where);
    } else if (e.posted.wait_until(guard, deadline, where) == std::cv_status::timeout &&
               value_of(sem) == 0) {
      errno = ETIMEDOUT;
      return -1;
    }
  }
  word_of(sem).fetch_sub(1, std::memory_order_relaxed);
  return 0;
}

int timed_wait(Intercepted in, sem_t* sem, clockid_t clock, const timespec* abs,
               bubble::SourceLocation where) {
  const d::ClockKind kind = d::classify(clock);
  if (kind == d::ClockKind::other || !d::valid(abs)) {
    errno = EINVAL;
    return -1;
  }
  return wait_until(in, sem, d::deadline_of(in.state->runtime(), kind, *abs), where);
}

// Runs `op` (which may receive bubble::Unwind at the guard's scheduling point) in a noexcept entry
// point: retries on Unwind, so that the teardown's next delivery finds the thread again; other
// exceptions (out of memory) fail with EAGAIN.
template <class Op>
int noexcept_op(Op op) noexcept {
  for (;;) {
    try {
      return op();
    } catch (const bubble::Unwind&) {
    } catch (...) {
      errno = EAGAIN;
      return -1;
    }
  }
}

}  // namespace

extern "C" {

int sem_wait(sem_t* sem) {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(sem_wait)(sem);
  return wait_until(in, sem, bubble::kNoDeadline, BUBBLE_CALLER(sem_wait));
}

int sem_timedwait(sem_t* sem, const struct timespec* abs) {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(sem_timedwait)(sem, abs);
  return timed_wait(in, sem, CLOCK_REALTIME, abs, BUBBLE_CALLER(sem_timedwait));
}

int sem_clockwait(sem_t* sem, clockid_t clock, const struct timespec* abs) {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(sem_clockwait)(sem, clock, abs);
  return timed_wait(in, sem, clock, abs, BUBBLE_CALLER(sem_clockwait));
}

int sem_trywait(sem_t* sem) noexcept {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(sem_trywait)(sem);
  const bubble::SourceLocation where = BUBBLE_CALLER(sem_trywait);
  return noexcept_op([&] {
    SemEntry& e = in.state->sem(sem);
    e.guard.lock(where);
    std::lock_guard guard(e.guard, std::adopt_lock);
    if (value_of(sem) == 0) {
      errno = EAGAIN;
      return -1;
    }
    word_of(sem).fetch_sub(1, std::memory_order_relaxed);
    return 0;
  });
}

int sem_post(sem_t* sem) noexcept {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(sem_post)(sem);
  const bubble::SourceLocation where = BUBBLE_CALLER(sem_post);
  return noexcept_op([&] {
    SemEntry& e = in.state->sem(sem);
    e.guard.lock(where);
    std::lock_guard guard(e.guard, std::adopt_lock);
    if (value_of(sem) >= static_cast<std::uint64_t>(SEM_VALUE_MAX)) {
      errno = EOVERFLOW;
      return -1;
    }
    word_of(sem).fetch_add(1, std::memory_order_relaxed);
    e.posted.notify_one(where);
    return 0;
  });
}

int sem_getvalue(sem_t* sem, int* value) noexcept {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(sem_getvalue)(sem, value);
  *value = static_cast<int>(value_of(sem));
  return 0;
}

int sem_init(sem_t* sem, int pshared, unsigned int value) noexcept {
  if (Intercepted in = d::intercepted()) in.state->forget_sem(sem);
  return BUBBLE_REAL(sem_init)(sem, pshared, value);
}

int sem_destroy(sem_t* sem) noexcept {
  if (Intercepted in = d::intercepted()) in.state->forget_sem(sem);
  return BUBBLE_REAL(sem_destroy)(sem);
}

}  // extern "C"

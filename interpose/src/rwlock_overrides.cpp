// pthread read-write locks, beneath std::shared_mutex and std::shared_timed_mutex: inside a bubble
// thread of an intercepting run, each pthread_rwlock_t stands for an entry of the run's side table
// (made on first use: std::shared_mutex is statically initialized) whose waiters wait on bubble
// condition variables, so a blocked reader or writer is durably blocked, deadlocks are reported
// and timed locks time out in virtual time. Elsewhere the real functions.
//
// Semantics are glibc's: a reader takes the lock whenever no writer holds it, also while writers
// wait (PTHREAD_RWLOCK_PREFER_READER_NP, the default), unless the lock was made with
// PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP; a thread may hold several read locks; rdlock or
// wrlock by the writer fails with EDEADLK; wrlock by a reader blocks for ever (as in glibc), which
// the bubble reports as a deadlock.

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <mutex>

#include <bubble/bubble.hpp>

#include "caller.hpp"
#include "intercepted.hpp"
#include "time_mapping.hpp"

namespace d = bubble::interpose::detail;
using d::Intercepted;
using d::RwlockEntry;
using d::ThreadRecord;

namespace {

enum class Access { read, write };

// Whether `self` may take `e` for `access` now.
bool can_take(const RwlockEntry& e, Access access) noexcept {
  if (e.writer != nullptr) return false;
  if (access == Access::write) return e.readers.empty();
  return !(e.prefer_writers && e.waiting_writers > 0);
}

void take(RwlockEntry& e, ThreadRecord* self, Access access) {
  if (access == Access::write) {
    e.writer = self;
  } else {
    e.readers.push_back(self);
  }
}

// Wakes whoever may go on now that `e` changed (under e.guard): one writer if the lock is free,
// every reader if readers may take it.
void wake(RwlockEntry& e, bubble::SourceLocation where) {
  if (e.writer != nullptr) return;
  if (e.readers.empty()) e.writable.notify_one(where);
  if (can_take(e, Access::read)) e.readable.notify_all(where);
}

// Takes `e` for `access`, waiting until `deadline` (kNoDeadline: for ever; a past deadline: a
// try). Returns 0, EBUSY (a try that could not take it), ETIMEDOUT or EDEADLK (the caller is the
// writer). Throws bubble::Unwind when a failed run tears the thread down while it waits.
int lock_until(RwlockEntry& e, ThreadRecord* self, Access access, bubble::TimePoint deadline,
               bool is_try, bubble::SourceLocation where) {
  e.guard.lock(where);  // A scheduling point, as every bubble Mutex::lock.
  std::unique_lock guard(e.guard, std::adopt_lock);
  if (e.writer == self) return EDEADLK;
  if (can_take(e, access)) {
    take(e, self, access);
    return 0;
  }
  if (is_try) return EBUSY;
  bubble::CondVar& ready = access == Access::write ? e.writable : e.readable;
  struct Waiting {
    RwlockEntry& e;
    Access access;
    bubble::SourceLocation where;
    Waiting(RwlockEntry& entry, Access a, bubble::SourceLocation w)
        : e(entry), access(a), where(w) {
      if (access == Access::write) ++e.waiting_writers;
    }
    ~Waiting() {
      if (access == Access::write && --e.waiting_writers == 0) {
        wake(e, where);  // Readers held back by a waiting writer may go on.
      }
    }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;
  } waiting{e, access, where};
  while (!can_take(e, access)) {
    if (deadline == bubble::kNoDeadline) {
      ready.wait(guard, where);
    } else if (ready.wait_until(guard, deadline, where) == std::cv_status::timeout) {
      if (can_take(e, access)) break;
      return ETIMEDOUT;
    }
  }
  take(e, self, access);
  return 0;
}

// lock_until in a noexcept entry point, which bubble::Unwind cannot leave: when a failed run tears
// the thread down while it waits, the lock fails with EDEADLK instead (never acquired), so that
// std::shared_mutex throws std::system_error and the thread's frames unwind.
int lock_noexcept(Intercepted in, pthread_rwlock_t* rw, Access access, bubble::TimePoint deadline,
                  bool is_try, bubble::SourceLocation where) noexcept {
  try {
    return lock_until(in.state->rwlock(rw), in.self, access, deadline, is_try, where);
  } catch (const bubble::Unwind&) {
    return EDEADLK;
  } catch (...) {
    return EAGAIN;
  }
}

int unlock(RwlockEntry& e, ThreadRecord* self, bubble::SourceLocation where) {
  e.guard.lock(where);
  std::lock_guard guard(e.guard, std::adopt_lock);
  if (e.writer == self) {
    e.writer = nullptr;
  } else if (auto it = std::find(e.readers.begin(), e.readers.end(), self); it != e.readers.end()) {
    e.readers.erase(it);
  } else {
    return EPERM;  // Not held by the caller (glibc leaves it undefined).
  }
  wake(e, where);
  return 0;
}

// The deadline of a timed lock on `clock`, or EINVAL in `error`.
bubble::TimePoint deadline_on(Intercepted in, clockid_t clock, const timespec* abs, int& error) {
  const d::ClockKind kind = d::classify(clock);
  if (kind == d::ClockKind::other || !d::valid(abs)) {
    error = EINVAL;
    return {};
  }
  error = 0;
  return d::deadline_of(in.state->runtime(), kind, *abs);
}

int timed_lock(pthread_rwlock_t* rw, Access access, clockid_t clock, const timespec* abs,
               bubble::SourceLocation where, Intercepted in) noexcept {
  int error = 0;
  const bubble::TimePoint deadline = deadline_on(in, clock, abs, error);
  if (error != 0) return error;
  return lock_noexcept(in, rw, access, deadline, false, where);
}

}  // namespace

extern "C" {

int pthread_rwlock_rdlock(pthread_rwlock_t* rw) noexcept {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_rwlock_rdlock)(rw);
  return lock_noexcept(in, rw, Access::read, bubble::kNoDeadline, false,
                       BUBBLE_CALLER(pthread_rwlock_rdlock));
}

int pthread_rwlock_wrlock(pthread_rwlock_t* rw) noexcept {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_rwlock_wrlock)(rw);
  return lock_noexcept(in, rw, Access::write, bubble::kNoDeadline, false,
                       BUBBLE_CALLER(pthread_rwlock_wrlock));
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t* rw) noexcept {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_rwlock_tryrdlock)(rw);
  return lock_noexcept(in, rw, Access::read, bubble::kNoDeadline, true,
                       BUBBLE_CALLER(pthread_rwlock_tryrdlock));
}

int pthread_rwlock_trywrlock(pthread_rwlock_t* rw) noexcept {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_rwlock_trywrlock)(rw);
  return lock_noexcept(in, rw, Access::write, bubble::kNoDeadline, true,
                       BUBBLE_CALLER(pthread_rwlock_trywrlock));
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t* rw, const struct timespec* abs) noexcept {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_rwlock_timedrdlock)(rw, abs);
  return timed_lock(rw, Access::read, CLOCK_REALTIME, abs,
                    BUBBLE_CALLER(pthread_rwlock_timedrdlock), in);
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t* rw, const struct timespec* abs) noexcept {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_rwlock_timedwrlock)(rw, abs);
  return timed_lock(rw, Access::write, CLOCK_REALTIME, abs,
                    BUBBLE_CALLER(pthread_rwlock_timedwrlock), in);
}

int pthread_rwlock_clockrdlock(pthread_rwlock_t* rw, clockid_t clock,
                               const struct timespec* abs) noexcept {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_rwlock_clockrdlock)(rw, clock, abs);
  return timed_lock(rw, Access::read, clock, abs, BUBBLE_CALLER(pthread_rwlock_clockrdlock), in);
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t* rw, clockid_t clock,
                               const struct timespec* abs) noexcept {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_rwlock_clockwrlock)(rw, clock, abs);
  return timed_lock(rw, Access::write, clock, abs, BUBBLE_CALLER(pthread_rwlock_clockwrlock), in);
}

int pthread_rwlock_unlock(pthread_rwlock_t* rw) noexcept {
  Intercepted in = d::intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_rwlock_unlock)(rw);
  for (;;) {
    try {
      return unlock(in.state->rwlock(rw), in.self, BUBBLE_CALLER(pthread_rwlock_unlock));
    } catch (const bubble::Unwind&) {
      // The guard's lock is a scheduling point, where a failed run's teardown arrives: retry.
    } catch (...) {
      return EAGAIN;
    }
  }
}

int pthread_rwlock_init(pthread_rwlock_t* rw, const pthread_rwlockattr_t* attr) noexcept {
  if (Intercepted in = d::intercepted()) in.state->forget_rwlock(rw);
  return BUBBLE_REAL(pthread_rwlock_init)(rw, attr);
}

int pthread_rwlock_destroy(pthread_rwlock_t* rw) noexcept {
  if (Intercepted in = d::intercepted()) in.state->forget_rwlock(rw);
  return BUBBLE_REAL(pthread_rwlock_destroy)(rw);
}

}  // extern "C"

// pthread mutexes and condition variables: inside a bubble thread of an intercepting run, each
// pthread object stands for a bubble Mutex or CondVar found in the run's side table (made on first
// use: a statically initialized std::mutex never calls pthread_mutex_init), so a thread blocked on
// it is durably blocked, deadlocks are reported and timed waits use virtual time. Elsewhere (no
// bubble, a bubble that does not intercept, or its scheduler running a timer callback) the real
// functions.

#include <pthread.h>
#include <time.h>

#include <cerrno>
#include <mutex>
#include <new>

#include <bubble/bubble.hpp>

#include "caller.hpp"
#include "intercepted.hpp"
#include "outside_threads.hpp"
#include "time_mapping.hpp"

namespace d = bubble::interpose::detail;
using bubble::interpose::detail::CondEntry;
using bubble::interpose::detail::Intercepted;
using bubble::interpose::detail::intercepted;
using bubble::interpose::detail::MutexEntry;
using bubble::interpose::detail::ThreadRecord;
using bubble::interpose::detail::valid;

namespace {

void take(MutexEntry& e, ThreadRecord* self) noexcept {
  e.owner = self;
  e.depth = 1;
}

// Locks `e` for `self`, waiting until `deadline` (kNoDeadline: for ever). Returns 0, ETIMEDOUT or
// EDEADLK (an error-checking mutex the caller holds). Throws bubble::Unwind when a failed run
// tears the thread down while it waits.
int lock_until(MutexEntry& e, ThreadRecord* self, bubble::TimePoint deadline,
               bubble::SourceLocation where) {
  if (e.owner == self) {
    if (e.kind == PTHREAD_MUTEX_RECURSIVE) {
      ++e.depth;
      return 0;
    }
    if (e.kind == PTHREAD_MUTEX_ERRORCHECK) return EDEADLK;
    // A normal mutex locked twice by its owner: blocks for ever, which the bubble reports.
  }
  if (deadline == bubble::kNoDeadline) {
    e.mutex.lock(where);
    take(e, self);
    return 0;
  }
  if (e.mutex.try_lock(where)) {
    take(e, self);
    return 0;
  }
  // A timed lock waits on `released`, which every unlock notifies while timed lockers wait.
  std::unique_lock guard(e.released_guard);
  ++e.timed_waiters;
  struct Leave {
    MutexEntry& e;
    ~Leave() { --e.timed_waiters; }
  } leave{e};
  while (!e.mutex.try_lock(where)) {
    if (e.released.wait_until(guard, deadline, where) == std::cv_status::timeout) {
      if (e.mutex.try_lock(where)) break;
      return ETIMEDOUT;
    }
  }
  take(e, self);
  return 0;
}

// lock_until in a noexcept entry point, which bubble::Unwind cannot leave: when a failed run tears
// the thread down while it waits, the lock fails with EDEADLK instead (never acquired), so that
// std::mutex::lock throws std::system_error and the thread's frames unwind
// (docs/design/engine-failures.md, "Teardown").
int lock_noexcept(MutexEntry& e, ThreadRecord* self, bubble::TimePoint deadline,
                  bubble::SourceLocation where) noexcept {
  try {
    return lock_until(e, self, deadline, where);
  } catch (const bubble::Unwind&) {
    return EDEADLK;
  } catch (...) {
    return EAGAIN;
  }
}

int unlock(MutexEntry& e, ThreadRecord* self, bubble::SourceLocation where) noexcept {
  if (e.owner != self) return EPERM;
  if (--e.depth > 0) return 0;
  e.owner = nullptr;
  e.mutex.unlock(where);
  if (e.timed_waiters > 0) {
    std::lock_guard guard(e.released_guard);
    e.released.notify_all(where);
  }
  return 0;
}

// Waits on `c` with `m`, until `deadline`, with the pthread contract: `m` is released while
// waiting and held again on return (also when bubble::Unwind leaves, so that the caller's
// unique_lock releases it).
int cond_wait_until(Intercepted in, pthread_cond_t* c, pthread_mutex_t* m,
                    bubble::TimePoint deadline, bubble::SourceLocation where) {
  MutexEntry& e = in.state->mutex(m);
  CondEntry& entry = in.state->cond(c);
  bubble::CondVar& cond = entry.cond;
  if (e.owner != in.self) return EPERM;
  // Fails the run; the wait goes on, and is torn down with the run.
  (void)d::fail_if_waited_on_outside(c, entry, "waits on", "pthread_cond_wait", where);
  const unsigned depth = e.depth;
  e.owner = nullptr;
  e.depth = 0;
  std::unique_lock<bubble::Mutex> lock(e.mutex, std::adopt_lock);
  struct Reown {
    MutexEntry& e;
    std::unique_lock<bubble::Mutex>& lock;
    ThreadRecord* self;
    unsigned depth;
    ~Reown() {
      if (lock.owns_lock()) {
        lock.release();
        e.owner = self;
        e.depth = depth;
      }
    }
  } reown{e, lock, in.self, depth};
  if (deadline == bubble::kNoDeadline) {
    cond.wait(lock, where);
    return 0;
  }
  return cond.wait_until(lock, deadline, where) == std::cv_status::timeout ? ETIMEDOUT : 0;
}

// Whether `m` is held outside the bubble (the run then fails, and the lock with it): an intercepted
// lock's first check.
bool held_outside(const pthread_mutex_t* m, const MutexEntry& e, const char* call,
                  bubble::SourceLocation where) noexcept {
  try {
    return d::fail_if_held_outside(m, e, "locks", call, where);
  } catch (...) {
    return false;  // No memory for the report: the lock goes on as if nobody held it.
  }
}

// A notify of `c` while threads outside the bubble wait on it fails the run (the notify still
// reaches the bubble's waiters, which are torn down with the run).
void notified_outside(const pthread_cond_t* c, const CondEntry& e, const char* call,
                      bubble::SourceLocation where) noexcept {
  try {
    (void)d::fail_if_waited_on_outside(c, e, "notifies", call, where);
  } catch (...) {
  }
}

}  // namespace

extern "C" {

int pthread_mutex_lock(pthread_mutex_t* m) noexcept {
  Intercepted in = intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_mutex_lock)(m);
  MutexEntry& e = in.state->mutex(m);
  if (held_outside(m, e, "pthread_mutex_lock", BUBBLE_CALLER(pthread_mutex_lock))) return EDEADLK;
  return lock_noexcept(e, in.self, bubble::kNoDeadline, BUBBLE_CALLER(pthread_mutex_lock));
}

int pthread_mutex_trylock(pthread_mutex_t* m) noexcept {
  Intercepted in = intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_mutex_trylock)(m);
  MutexEntry& e = in.state->mutex(m);
  if (held_outside(m, e, "pthread_mutex_trylock", BUBBLE_CALLER(pthread_mutex_trylock)))
    return EBUSY;
  if (e.owner == in.self && e.kind == PTHREAD_MUTEX_RECURSIVE) {
    ++e.depth;
    return 0;
  }
  if (!e.mutex.try_lock(BUBBLE_CALLER(pthread_mutex_trylock))) return EBUSY;
  take(e, in.self);
  return 0;
}

int pthread_mutex_timedlock(pthread_mutex_t* m, const struct timespec* abs) noexcept {
  Intercepted in = intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_mutex_timedlock)(m, abs);
  if (!valid(abs)) return EINVAL;
  bubble::Runtime& rt = in.state->runtime();
  MutexEntry& e = in.state->mutex(m);
  if (held_outside(m, e, "pthread_mutex_timedlock", BUBBLE_CALLER(pthread_mutex_timedlock)))
    return EDEADLK;
  return lock_noexcept(e, in.self, d::deadline_of(rt, d::ClockKind::wall, *abs),
                       BUBBLE_CALLER(pthread_mutex_timedlock));
}

int pthread_mutex_clocklock(pthread_mutex_t* m, clockid_t clock,
                            const struct timespec* abs) noexcept {
  Intercepted in = intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_mutex_clocklock)(m, clock, abs);
  const d::ClockKind kind = d::classify(clock);
  if (kind == d::ClockKind::other || !valid(abs)) return EINVAL;
  MutexEntry& e = in.state->mutex(m);
  if (held_outside(m, e, "pthread_mutex_clocklock", BUBBLE_CALLER(pthread_mutex_clocklock)))
    return EDEADLK;
  return lock_noexcept(e, in.self, d::deadline_of(in.state->runtime(), kind, *abs),
                       BUBBLE_CALLER(pthread_mutex_clocklock));
}

int pthread_mutex_unlock(pthread_mutex_t* m) noexcept {
  Intercepted in = intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_mutex_unlock)(m);
  return unlock(in.state->mutex(m), in.self, BUBBLE_CALLER(pthread_mutex_unlock));
}

int pthread_mutex_init(pthread_mutex_t* m, const pthread_mutexattr_t* attr) noexcept {
  if (Intercepted in = intercepted()) in.state->forget_mutex(m);
  return BUBBLE_REAL(pthread_mutex_init)(m, attr);
}

int pthread_mutex_destroy(pthread_mutex_t* m) noexcept {
  if (Intercepted in = intercepted()) in.state->forget_mutex(m);
  return BUBBLE_REAL(pthread_mutex_destroy)(m);
}

int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  Intercepted in = intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_cond_wait)(c, m);
  return cond_wait_until(in, c, m, bubble::kNoDeadline, BUBBLE_CALLER(pthread_cond_wait));
}

int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* abs) {
  Intercepted in = intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_cond_timedwait)(c, m, abs);
  if (!valid(abs)) return EINVAL;
  const clockid_t clock = in.state->cond(c).clock;
  return cond_wait_until(in, c, m, d::deadline_of(in.state->runtime(), d::classify(clock), *abs),
                         BUBBLE_CALLER(pthread_cond_timedwait));
}

int pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock,
                           const struct timespec* abs) {
  Intercepted in = intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_cond_clockwait)(c, m, clock, abs);
  const d::ClockKind kind = d::classify(clock);
  if (kind == d::ClockKind::other || !valid(abs)) return EINVAL;
  return cond_wait_until(in, c, m, d::deadline_of(in.state->runtime(), kind, *abs),
                         BUBBLE_CALLER(pthread_cond_clockwait));
}

int pthread_cond_signal(pthread_cond_t* c) noexcept {
  Intercepted in = intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_cond_signal)(c);
  CondEntry& e = in.state->cond(c);
  notified_outside(c, e, "pthread_cond_signal", BUBBLE_CALLER(pthread_cond_signal));
  e.cond.notify_one(BUBBLE_CALLER(pthread_cond_signal));
  return 0;
}

int pthread_cond_broadcast(pthread_cond_t* c) noexcept {
  Intercepted in = intercepted();
  if (!in) [[likely]]
    return BUBBLE_REAL(pthread_cond_broadcast)(c);
  CondEntry& e = in.state->cond(c);
  notified_outside(c, e, "pthread_cond_broadcast", BUBBLE_CALLER(pthread_cond_broadcast));
  e.cond.notify_all(BUBBLE_CALLER(pthread_cond_broadcast));
  return 0;
}

int pthread_cond_init(pthread_cond_t* c, const pthread_condattr_t* attr) noexcept {
  if (Intercepted in = intercepted()) in.state->forget_cond(c);
  return BUBBLE_REAL(pthread_cond_init)(c, attr);
}

int pthread_cond_destroy(pthread_cond_t* c) noexcept {
  if (Intercepted in = intercepted()) in.state->forget_cond(c);
  return BUBBLE_REAL(pthread_cond_destroy)(c);
}

}  // extern "C"

#include "run_state.hpp"

#include <time.h>

#include <algorithm>

namespace bubble::interpose::detail {
namespace {

// The kind (normal, recursive, error-checking) a pthread mutex was initialized with: glibc keeps
// it in the low bits of __data.__kind, also for the static initializers
// (PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, used by std::recursive_mutex).
int kind_of(const pthread_mutex_t* m) {
  const int kind = m->__data.__kind & 3;
  return kind == PTHREAD_MUTEX_ADAPTIVE_NP ? PTHREAD_MUTEX_NORMAL : kind;
}

// The clock of a pthread condition variable's timed waits: glibc keeps "monotonic" in bit 1 of
// __data.__wrefs (pthread_condattr_setclock); a statically initialized one uses CLOCK_REALTIME.
clockid_t clock_of(const pthread_cond_t* c) {
  return (c->__data.__wrefs & 2) != 0 ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

// Whether readers of a pthread rwlock wait for waiting writers: glibc's __data.__flags holds the
// kind, and only PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP makes them wait
// (PTHREAD_RWLOCK_PREFER_WRITER_NP behaves as the default, PREFER_READER).
bool prefers_writers(const pthread_rwlock_t* rw) {
  return rw->__data.__flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

}  // namespace

RunState& RunState::of(Runtime& rt) {
  // Kept by the bubble for the run, so that every thread of the run finds the same state on
  // whichever OS thread it runs (ThreadModel::os_threads), and destroyed when the run ends.
  ::bubble::detail::InterceptedRunState* run = ::bubble::detail::intercepted_run_state();
  if (run->state == nullptr) [[unlikely]] {
    run->state = new RunState(rt);
    run->destroy = [](void* state) noexcept { delete static_cast<RunState*>(state); };
  }
  return *static_cast<RunState*>(run->state);
}

ThreadRecord* RunState::self() {
  void** slot = ::bubble::detail::intercepted_thread_slot();
  if (slot == nullptr) return nullptr;
  if (*slot == nullptr) *slot = &new_thread();
  return static_cast<ThreadRecord*>(*slot);
}

ThreadRecord& RunState::new_thread() {
  threads_.push_back(std::make_unique<ThreadRecord>());
  return *threads_.back();
}

ThreadRecord* RunState::find_thread(pthread_t t) const {
  auto* r = reinterpret_cast<ThreadRecord*>(t);
  for (const auto& p : threads_) {
    if (p.get() == r) return r;
  }
  return nullptr;
}

MutexEntry& RunState::mutex(pthread_mutex_t* m) {
  auto& e = mutexes_[m];
  if (!e) {
    e = std::make_unique<MutexEntry>(*rt_);
    e->kind = kind_of(m);
  } else if (e->owner == nullptr && e->mutex.waiters() == 0 && e->timed_waiters == 0) {
    // The memory may hold a new mutex (a std::mutex is never destroyed through pthread): an idle
    // entry takes the kind of whatever is there now.
    e->kind = kind_of(m);
  }
  return *e;
}

FutexEntry& RunState::futex(const void* word) {
  auto& e = futexes_[word];
  if (!e) e = std::make_unique<FutexEntry>(*rt_);
  return *e;
}

CondEntry& RunState::cond(pthread_cond_t* c) {
  auto& e = conds_[c];
  if (!e) {
    e = std::make_unique<CondEntry>(*rt_, clock_of(c));
  } else if (e->cond.waiters() == 0) {
    e->clock = clock_of(c);
  }
  return *e;
}

RwlockEntry& RunState::rwlock(pthread_rwlock_t* rw) {
  auto& e = rwlocks_[rw];
  if (!e) {
    e = std::make_unique<RwlockEntry>(*rt_);
    e->prefer_writers = prefers_writers(rw);
  } else if (e->idle()) {
    e->prefer_writers = prefers_writers(rw);
  }
  return *e;
}

SemEntry& RunState::sem(const void* sem) {
  auto& e = sems_[sem];
  if (!e) e = std::make_unique<SemEntry>(*rt_);
  return *e;
}

void RunState::forget_rwlock(const pthread_rwlock_t* rw) {
  auto it = rwlocks_.find(rw);
  if (it != rwlocks_.end() && it->second->idle()) rwlocks_.erase(it);
}

void RunState::forget_sem(const void* sem) {
  auto it = sems_.find(sem);
  if (it != sems_.end() && it->second->posted.waiters() == 0) sems_.erase(it);
}

void RunState::forget_mutex(const pthread_mutex_t* m) {
  auto it = mutexes_.find(m);
  if (it == mutexes_.end()) return;
  const MutexEntry& e = *it->second;
  if (e.owner == nullptr && e.mutex.waiters() == 0 && e.timed_waiters == 0) mutexes_.erase(it);
}

void RunState::forget_cond(const pthread_cond_t* c) {
  auto it = conds_.find(c);
  if (it != conds_.end() && it->second->cond.waiters() == 0) conds_.erase(it);
}

}  // namespace bubble::interpose::detail

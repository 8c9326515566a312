#pragma once

// What the interposer keeps for one intercepting bubble run: a record per bubble thread (the
// pthread_t the standard library sees) and the side tables from the addresses of pthread mutexes
// and condition variables to the bubble primitives standing in for them. Only the run's threads
// touch it, and exactly one of them runs at a time (on the bubble's OS thread, or with
// ThreadModel::os_threads on OS threads that hand the run to each other), so nothing is locked.

#include <pthread.h>

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include <bubble/cond_var.hpp>
#include <bubble/detail/intercept.hpp>
#include <bubble/mutex.hpp>
#include <bubble/runtime.hpp>

namespace bubble::interpose::detail {

// A bubble thread as the pthread API sees it; its address is its pthread_t.
struct ThreadRecord {
  std::unique_ptr<ThreadHandle> handle;  // Null for threads not started by pthread_create.
  void* result = nullptr;                // What the start routine returned.
  bool detached = false;
  bool joined = false;
};

// The bubble Mutex standing in for one pthread_mutex_t (std::mutex is one), with the pthread
// semantics on top (recursive and error-checking kinds, and waiters of timed locks). Reports name
// it `Mutex::lock "pthread_mutex_t"`.
struct MutexEntry {
  explicit MutexEntry(Runtime& rt)
      : mutex("pthread_mutex_t", rt), released_guard(rt), released("pthread_mutex_t timed", rt) {}
  Mutex mutex;
  ThreadRecord* owner = nullptr;  // Who holds it, and how many times (recursive kind).
  unsigned depth = 0;
  int kind = PTHREAD_MUTEX_NORMAL;
  // Timed lockers wait on `released` (guarded by `released_guard`) for an unlock.
  unsigned timed_waiters = 0;
  Mutex released_guard;
  CondVar released;
};

// The bubble CondVar standing in for one pthread_cond_t (std::condition_variable is one), and the
// clock of its timed waits. Reports name it `CondVar::wait "pthread_cond_t"`.
struct CondEntry {
  explicit CondEntry(Runtime& rt, clockid_t c) : cond("pthread_cond_t", rt), clock(c) {}
  CondVar cond;
  clockid_t clock;
};

// The bubble CondVar standing in for the waiters of one futex word (syscall(SYS_futex)), and the
// Mutex that makes a waiter's check of the word and its queueing atomic. Reports name it
// `CondVar::wait "futex word"`.
struct FutexEntry {
  explicit FutexEntry(Runtime& rt) : guard(rt), cond("futex word", rt) {}
  Mutex guard;
  CondVar cond;
};

// The bubble primitives standing in for one pthread_rwlock_t: who holds it (one writer, or
// readers, each read lock counted once per acquisition), and the condition variables its waiters
// wait on, named for reports. `prefer_writers` is glibc's
// PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP kind: readers then wait while a writer waits;
// otherwise (glibc's default, also for std::shared_mutex) a reader takes the lock whenever no
// writer holds it.
struct RwlockEntry {
  explicit RwlockEntry(Runtime& rt)
      : guard(rt),
        readable("pthread_rwlock_t readers", rt),
        writable("pthread_rwlock_t writers", rt) {}
  Mutex guard;
  CondVar readable;  // Readers wait here for the writer to leave.
  CondVar writable;  // Writers wait here for the lock to be free.
  ThreadRecord* writer = nullptr;
  std::vector<ThreadRecord*> readers;
  unsigned waiting_writers = 0;
  bool prefer_writers = false;
  bool idle() const noexcept {
    return writer == nullptr && readers.empty() && waiting_writers == 0 && readable.waiters() == 0;
  }
};

// The bubble primitives the waiters of one sem_t wait on. The count itself stays in the sem_t (in
// glibc's layout), so the semaphore keeps its value across and after intercepted runs.
struct SemEntry {
  explicit SemEntry(Runtime& rt) : guard(rt), posted("sem_t", rt) {}
  Mutex guard;
  CondVar posted;
};

class RunState {
 public:
  explicit RunState(Runtime& rt) : rt_(&rt) {}

  // The state of `rt`, the intercepting bubble running on this OS thread: made on first use in
  // the run, shared by all of the run's threads, destroyed by the bubble when the run ends.
  static RunState& of(Runtime& rt);

  Runtime& runtime() const noexcept { return *rt_; }

  // The record of the running bubble thread (made on first use for threads that were not started
  // by pthread_create, such as the root); nullptr on the bubble's scheduler (timer callbacks).
  ThreadRecord* self();
  // A record for a thread about to be started by pthread_create.
  ThreadRecord& new_thread();
  // The record `t` names if it is one of this run's, nullptr otherwise (a real thread's pthread_t).
  ThreadRecord* find_thread(pthread_t t) const;

  MutexEntry& mutex(pthread_mutex_t* m);
  FutexEntry& futex(const void* word);
  CondEntry& cond(pthread_cond_t* c);
  RwlockEntry& rwlock(pthread_rwlock_t* rw);
  SemEntry& sem(const void* sem);
  // pthread_*_destroy and pthread_*_init: forget the entry of an object (if nobody uses it).
  void forget_mutex(const pthread_mutex_t* m);
  void forget_cond(const pthread_cond_t* c);
  void forget_rwlock(const pthread_rwlock_t* rw);
  void forget_sem(const void* sem);

 private:
  Runtime* rt_;
  std::vector<std::unique_ptr<ThreadRecord>> threads_;
  std::unordered_map<const void*, std::unique_ptr<MutexEntry>> mutexes_;
  std::unordered_map<const void*, std::unique_ptr<CondEntry>> conds_;
  std::unordered_map<const void*, std::unique_ptr<FutexEntry>> futexes_;
  std::unordered_map<const void*, std::unique_ptr<RwlockEntry>> rwlocks_;
  std::unordered_map<const void*, std::unique_ptr<SemEntry>> sems_;
};

}  // namespace bubble::interpose::detail

#pragma once

// What the interposer keeps for one intercepting bubble run: a record per bubble thread (the
// pthread_t the standard library sees) and the side tables from the addresses of pthread mutexes
// and condition variables to the bubble primitives standing in for them. Only the bubble's own OS
// thread ever touches it, and one bubble thread runs at a time, so nothing here is locked.

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

// The bubble Mutex standing in for one pthread_mutex_t, with the pthread semantics on top
// (recursive and error-checking kinds, and waiters of timed locks).
struct MutexEntry {
  explicit MutexEntry(Runtime& rt) : mutex(rt), released_guard(rt), released(rt) {}
  Mutex mutex;
  ThreadRecord* owner = nullptr;  // Who holds it, and how many times (recursive kind).
  unsigned depth = 0;
  int kind = PTHREAD_MUTEX_NORMAL;
  // Timed lockers wait on `released` (guarded by `released_guard`) for an unlock.
  unsigned timed_waiters = 0;
  Mutex released_guard;
  CondVar released;
};

// The bubble CondVar standing in for one pthread_cond_t, and the clock of its timed waits.
struct CondEntry {
  explicit CondEntry(Runtime& rt, clockid_t c) : cond(rt), clock(c) {}
  CondVar cond;
  clockid_t clock;
};

// The bubble CondVar standing in for the waiters of one futex word (syscall(SYS_futex)), and the
// Mutex that makes a waiter's check of the word and its queueing atomic.
struct FutexEntry {
  explicit FutexEntry(Runtime& rt) : guard(rt), cond(rt) {}
  Mutex guard;
  CondVar cond;
};

class RunState {
 public:
  explicit RunState(Runtime& rt) : rt_(&rt), serial_(rt.serial()) {}

  // The state of `rt`, the intercepting bubble running on this OS thread; a fresh one when the
  // previous run of this OS thread has ended (the state of that run is destroyed then).
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
  // pthread_*_destroy and pthread_*_init: forget the entry of an object (if nobody uses it).
  void forget_mutex(const pthread_mutex_t* m);
  void forget_cond(const pthread_cond_t* c);

 private:
  Runtime* rt_;
  std::uint64_t serial_;
  std::vector<std::unique_ptr<ThreadRecord>> threads_;
  std::unordered_map<const void*, std::unique_ptr<MutexEntry>> mutexes_;
  std::unordered_map<const void*, std::unique_ptr<CondEntry>> conds_;
  std::unordered_map<const void*, std::unique_ptr<FutexEntry>> futexes_;
};

}  // namespace bubble::interpose::detail

#pragma once

// Threads outside the bubble that share a pthread mutex or condition variable with its threads: an
// OS thread that is not one of the run's (one that existed before it, such as a pool a static
// initializer started) holds the mutex, or waits on the condition variable. The run's threads use
// the bubble primitives standing in for the object and never touch the pthread object itself, so
// its own state shows outside users only. Such sharing cannot be modelled: the bubble's threads
// would not wait for the outside ones, nor could either wake the other. So the run fails, naming
// the object, the bubble thread and the outside one (docs/unmodified-code.md).

#include <pthread.h>

#include "run_state.hpp"

namespace bubble::interpose::detail {

// If a thread outside the bubble holds `m`, fails the run (the running bubble thread is about to
// lock it, as `operation` says: "locks") and returns true.
// `call` and `where`: the intercepted call ("pthread_mutex_lock") and its caller.
bool fail_if_held_outside(const pthread_mutex_t* m, const MutexEntry& e, const char* operation,
                          const char* call, SourceLocation where);

// If threads outside the bubble wait on `c`, fails the run (the running bubble thread is about to
// notify or wait on it, as `operation` says: "notifies", "waits on") and returns true.
bool fail_if_waited_on_outside(const pthread_cond_t* c, const CondEntry& e, const char* operation,
                               const char* call, SourceLocation where);

}  // namespace bubble::interpose::detail

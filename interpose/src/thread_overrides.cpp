// pthread_create, pthread_join, pthread_detach, pthread_self: inside an
// intercepting bubble, threads are bubble threads (so std::thread and std::jthread are); elsewhere
// the real functions.

#include <pthread.h>

#include <cerrno>
#include <string>

#include "caller.hpp"
#include "real.hpp"
#include "run_state.hpp"
#include "time_mapping.hpp"

using bubble::interpose::detail::intercepting;
using bubble::interpose::detail::RunState;
using bubble::interpose::detail::ThreadRecord;

extern "C" {

int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                   void* arg) noexcept {
  bubble::Runtime* rt = intercepting();
  // Only bubble threads start bubble threads: the bubble's scheduler (its engine, the timer
  // callbacks it runs) starts real ones, as the watchdog's.
  if (rt == nullptr || !bubble::interpose::detail::on_bubble_thread()) [[likely]] {
    return BUBBLE_REAL(pthread_create)(thread, attr, start, arg);
  }
  int detach_state = PTHREAD_CREATE_JOINABLE;
  if (attr != nullptr && pthread_attr_getdetachstate(attr, &detach_state) != 0) return EINVAL;
  try {
    RunState& state = RunState::of(*rt);
    ThreadRecord& record = state.new_thread();
    ThreadRecord* r = &record;
    // Reports tell these threads apart by their bubble thread ids, the same in every run.
    std::string name = "std::thread";
    record.handle = rt->spawn(
        std::move(name),
        [r, start, arg] {
          *::bubble::detail::intercepted_thread_slot() = r;
          r->result = start(arg);
        },
        BUBBLE_CALLER(pthread_create));
    if (detach_state == PTHREAD_CREATE_DETACHED) {
      record.detached = true;
      record.handle.reset();
    }
    *thread = reinterpret_cast<pthread_t>(r);
    return 0;
  } catch (...) {
    return EAGAIN;  // Out of memory, or a bubble that refuses threads (its run has failed).
  }
}

int pthread_join(pthread_t thread, void** result) {
  bubble::Runtime* rt = intercepting();
  if (rt == nullptr) [[likely]]
    return BUBBLE_REAL(pthread_join)(thread, result);
  RunState& state = RunState::of(*rt);
  ThreadRecord* r = state.find_thread(thread);
  if (r == nullptr) return BUBBLE_REAL(pthread_join)(thread, result);
  if (r == state.self()) return EDEADLK;
  if (r->handle == nullptr || r->detached || r->joined) return EINVAL;
  r->handle->join(BUBBLE_CALLER(pthread_join));
  r->joined = true;
  r->handle.reset();
  if (result != nullptr) *result = r->result;
  return 0;
}

int pthread_detach(pthread_t thread) noexcept {
  bubble::Runtime* rt = intercepting();
  if (rt == nullptr) [[likely]]
    return BUBBLE_REAL(pthread_detach)(thread);
  RunState& state = RunState::of(*rt);
  ThreadRecord* r = state.find_thread(thread);
  if (r == nullptr) return BUBBLE_REAL(pthread_detach)(thread);
  if (r->handle == nullptr || r->detached || r->joined) return EINVAL;
  // Dropping the handle detaches the bubble thread: it runs on, and the run still waits for it.
  r->detached = true;
  r->handle.reset();
  return 0;
}

pthread_t pthread_self() noexcept {
  bubble::Runtime* rt = intercepting();
  if (rt == nullptr) [[likely]]
    return BUBBLE_REAL(pthread_self)();
  ThreadRecord* self = nullptr;
  try {
    self = RunState::of(*rt).self();
  } catch (...) {
    // Out of memory for the record: the OS thread's identity is the best left to give.
  }
  if (self == nullptr) return BUBBLE_REAL(pthread_self)();
  return reinterpret_cast<pthread_t>(self);
}

}  // extern "C"

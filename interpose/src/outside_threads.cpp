#include "outside_threads.hpp"

#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <bubble/detail/intercept.hpp>

namespace bubble::interpose::detail {
namespace {

constexpr const char* kOutside =
    "not a thread of this bubble (one that existed before the run, such as a thread a static "
    "initializer started): the bubble cannot order its threads with threads outside it, so they "
    "must not share locks or condition variables";

// "OS thread 4711 "pool"", from the kernel's name of the thread.
std::string os_thread_text(pid_t tid) {
  std::string name;
  std::ifstream comm("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::getline(comm, name);
  std::string text = "OS thread " + std::to_string(tid);
  if (!name.empty()) text += " \"" + name + "\"";
  if (tid == ::gettid()) text += " (the one running this bubble, which locked it before the run)";
  return text;
}

}  // namespace

bool fail_if_held_outside(const pthread_mutex_t* m, const MutexEntry& e, const char* operation,
                          const char* call, SourceLocation where) {
  // glibc's lock word: 0 when free; the owner's kernel thread id while held.
  if (__atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) == 0) [[likely]]
    return false;
  const pid_t owner = __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
  const std::string holder = owner != 0 ? os_thread_text(owner) : std::string("an OS thread");
  ::bubble::detail::fail_intercepted_run(std::string(operation) + " pthread_mutex_t (object #" +
                                             std::to_string(e.mutex.id()) + ") while " + holder +
                                             " holds it, " + kOutside,
                                         call, where);
  return true;
}

bool fail_if_waited_on_outside(const pthread_cond_t* c, const CondEntry& e, const char* operation,
                               const char* call, SourceLocation where) {
  // glibc's count of waiters, in the bits above the three flag bits of __wrefs.
  const unsigned waiters = __atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) >> 3;
  if (waiters == 0) [[likely]]
    return false;
  ::bubble::detail::fail_intercepted_run(
      std::string(operation) + " pthread_cond_t (object #" + std::to_string(e.cond.id()) +
          ") while " + std::to_string(waiters) + " OS thread(s) wait on it, " + kOutside,
      call, where);
  return true;
}

}  // namespace bubble::interpose::detail

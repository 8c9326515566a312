#pragma once

// Private: what a bubble thread runs on under Options::thread_model = ThreadModel::os_threads. Each
// bubble thread has an OS thread of its own, and exactly one of a bubble's OS threads runs at a
// time: the others wait at their Baton until the engine hands them the run (the design of folly's
// DeterministicSchedule). The engine's bookkeeping is the same as with fibers; only the switch
// differs.
//
// Every call here runs with the standard-library interposer switched off on the calling OS thread
// (detail::tl_intercepting_runtime cleared for the duration), so that the engine's own thread
// creation, futex waits and joins reach the C library, and leaves the thread's errno as it found
// it.

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace bubble::detail {

// Where one OS thread waits for the run to be handed to it: a word that post() sets and wait()
// takes, with a futex to sleep on. Not std::binary_semaphore: its inline template may be the copy
// of a user's translation unit compiled with bubble::instrument, whose hooks would see the
// engine's own hand-over as the program's memory accesses.
class Baton {
 public:
  // Blocks the calling OS thread until post() has been called, and consumes that post.
  void wait() noexcept;
  // Lets the OS thread waiting at this baton (or the next to wait) go on.
  void post() noexcept;

 private:
  std::atomic<std::uint32_t> turn_{0};  // 1: posted and not yet taken.
};

// Hands the run from the calling OS thread to the one waiting at `to`, then blocks at `self` until
// the run is handed back.
void hand_over(Baton& self, Baton& to) noexcept;

// Starts an OS thread running entry(arg), with a stack of `stack_size` bytes (at least the
// system's minimum). Throws std::system_error if the system refuses.
pthread_t start_os_thread(std::size_t stack_size, void* (*entry)(void*), void* arg);

// Waits for an OS thread started by start_os_thread to end (its thread_local destructors run
// before it ends) and releases it.
void join_os_thread(pthread_t thread) noexcept;

// Lets an OS thread started by start_os_thread end on its own without being joined (a thread the
// teardown of a failed run abandoned: it waits at its baton forever).
void detach_os_thread(pthread_t thread) noexcept;

}  // namespace bubble::detail

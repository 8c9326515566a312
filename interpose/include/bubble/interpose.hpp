#pragma once

// bubble::interpose runs unmodified standard-library code in a bubble: linked into a program
// (CMake: target_link_libraries(my_tests PRIVATE bubble::interpose)), it replaces the libc and
// pthread entry points beneath std::thread, std::mutex, std::condition_variable, the std::chrono
// clocks, std::this_thread's sleeps and yield, and the futex waits beneath std::atomic wait/notify,
// std::counting_semaphore, std::latch, std::barrier and std::future. A bubble run with
// Options::intercept_std = true then sees those calls made by its threads as its own: std::thread
// starts a bubble thread, std::mutex and std::condition_variable block durably (deadlocks are
// reported, time jumps), steady_clock reads virtual time and sleep_for sleeps in virtual time.
// Everywhere else — no bubble, a bubble without intercept_std, other OS threads — every call is the
// real one, after one thread-local load. What is and is not intercepted: docs/unmodified-code.md.

namespace bubble::interpose {

// True when standard-library calls made here are routed into a bubble: the calling OS thread
// runs an intercepting bubble (Options::intercept_std) and the caller is one of its threads, not
// its scheduler running a timer callback. Only meaningful in a program that links
// bubble::interpose.
bool active() noexcept;

}  // namespace bubble::interpose

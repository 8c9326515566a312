#pragma once

#include <string>
#include <string_view>

#include <bubble/runtime.hpp>

// The hook through which bubble::interpose (interpose/) finds the bubble of the calling thread.
// The framework does not depend on the interposer: it only publishes, per OS thread, which
// intercepting bubble (Options::intercept_std) is running, gives each of that bubble's threads
// one pointer-sized slot the interposer may use, and keeps one state for the whole run. Runs
// without intercept_std touch none of these.

namespace bubble::detail {

// The bubble running on this OS thread if its Options::intercept_std is true; nullptr otherwise
// (no bubble, or a bubble that does not intercept). Set when bubble::run starts such a bubble and
// cleared when it returns. Constant-initialized, so reading it is one thread-local load and works
// at any time, also before main and during static destruction: the interposer's fast path.
extern constinit thread_local Runtime* tl_intercepting_runtime;

// Only while tl_intercepting_runtime is set: the slot of the running bubble thread, initially
// nullptr, for the interposer's own record of that thread; nullptr on the bubble's scheduler (in
// timer callbacks), where nothing is intercepted. The slot lives as long as the thread's record;
// the bubble never reads it.
void** intercepted_thread_slot() noexcept;

// The interposer's state of one whole run, kept by the bubble: `state` starts as nullptr; when the
// run ends (after its threads have exited, before run() returns or throws) the bubble calls
// destroy(state) if both are set.
struct InterceptedRunState {
  void* state = nullptr;
  void (*destroy)(void*) noexcept = nullptr;
};

// Only while tl_intercepting_runtime is set: the running bubble's InterceptedRunState, the same
// for every thread of the run on whichever OS thread it runs (ThreadModel::os_threads).
InterceptedRunState* intercepted_run_state() noexcept;

// Only while tl_intercepting_runtime is set, on one of its threads: fails the run, as a failure of
// the program, with `what` the running thread did ("thread #2 "std::thread" " + what) in the call
// `operation` (a string literal: "pthread_mutex_lock") at `where`, which the report shows as the
// thread's last operation: something the interposer detects that the bubble cannot model, such
// as an object shared with a thread outside the bubble. The report is written at once; the thread
// goes on, and its next blocking call is torn down.
void fail_intercepted_run(const std::string& what, std::string_view operation,
                          SourceLocation where);

}  // namespace bubble::detail

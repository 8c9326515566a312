#pragma once

// The records the bubble's engine keeps: something to switch to (Ctx: a bubble thread, or the
// scheduler, "main"), a bubble thread (BThread), a timer's slot (TimerSlot), and the C++
// runtime's exception state that each switch saves and restores. Private to the framework.

#include <cxxabi.h>
#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/context/fiber.hpp>

#include <bubble/dependencies.hpp>
#include <bubble/detail/intrusive_list.hpp>
#include <bubble/detail/wait_queue.hpp>
#include <bubble/random.hpp>
#include <bubble/runtime.hpp>

#include "engine/os_thread.hpp"
#include "engine/report/call_stacks.hpp"
#include "engine/stack_pool.hpp"

namespace bubble::engine {

using boost::context::fiber;

// The C++ runtime's per-OS-thread exception state (libsupc++ / libc++abi __cxa_eh_globals):
// the stack of caught exceptions and the count of uncaught ones. Saved per fiber. (ARM EHABI adds
// a third member; that target is not supported.)
#if defined(__ARM_EABI_UNWINDER__)
#error "bubble: the fiber engine does not save ARM EHABI exception state"
#endif
struct EhGlobals {
  void* caught = nullptr;
  unsigned int uncaught = 0;
  // The structure's tail padding, named so that a switch copies the whole 16 bytes as one
  // (nothing reads it, in the C++ runtime's structure either).
  unsigned int padding = 0;
};
static_assert(sizeof(EhGlobals) == 16 && alignof(EhGlobals) == 8);

inline EhGlobals* eh_globals() noexcept {
  return reinterpret_cast<EhGlobals*>(abi::__cxa_get_globals());
}

class Bubble;

// Something the engine can switch to: a bubble thread or the scheduler (main).
struct Ctx {
  fiber ctx;
  EhGlobals eh;
  int error = 0;  // Its errno while it is switched out (a new thread starts with 0).
  // Where its stack was when it last switched out (switch_to's frame, beside the saved
  // registers), for touch_next_stack(); nullptr until it first does.
  const char* switched_out_at = nullptr;
  const void* stack_bottom = nullptr;
  std::size_t stack_size = 0;
  // A canary-checked stack's lowest word (Options::stack_guard = canary); nullptr otherwise.
  const std::uint64_t* canary = nullptr;
  // ThreadModel::os_threads: where this context's OS thread waits for the run, and that thread
  // (a bubble thread's own; none for main, which is the OS thread that called run()).
  std::unique_ptr<detail::Baton> baton;
  pthread_t os_thread{};
};

// Aborts the process: the canary of `t`'s stack was overwritten (defined with the failures).
[[noreturn, gnu::cold]] void stack_overflow(const Ctx& t) noexcept;

// Checks the canary of a stack that is switched out of or ends.
inline void check_canary(const Ctx& c) noexcept {
  if (c.canary != nullptr && *c.canary != detail::PooledStack::kCanary) [[unlikely]]
    stack_overflow(c);
}

enum class ThreadState : std::uint8_t { runnable, running, blocked, exited };

inline const char* state_name(ThreadState s) {
  switch (s) {
    case ThreadState::runnable:
      return "runnable";
    case ThreadState::running:
      return "running";
    case ThreadState::blocked:
      return "blocked";
    case ThreadState::exited:
      return "exited";
  }
  return "?";
}

// One bubble thread. Owned by the bubble while it has not exited and by its ThreadHandle while
// the handle exists; freed when neither holds it.
struct BThread : Ctx {
  Bubble* bubble = nullptr;  // nullptr once the run has ended.
  std::uint64_t id = 0;
  std::string name;
  std::function<void()> body;
  SourceLocation spawned_at;
  ThreadState state = ThreadState::runnable;
  // While blocked: what on, the WaitInfo given to the park that blocks it (the caller's, alive
  // until park returns), or abandoned_what. Read only while the thread is blocked: once park
  // returns it points into a frame that is gone.
  const WaitInfo* what = nullptr;
  // The kind and location of its last scheduling point or park (at first: "spawned" and where
  // it was spawned), copied at every one: what reports say of a thread that is not blocked
  // (runnable, running, or exited while the run fails), and the watchdog of a running one.
  std::string_view last_kind;
  SourceLocation last_where;
  WaitInfo abandoned_what;      // What an abandoned thread is reported blocked on.
  Waiter* waiter = nullptr;     // The waiter it is parked on.
  TimerId park_timer = 0;       // The timer of its park deadline, if any.
  bool unwind = false;          // Torn down: its blocking calls throw Unwind.
  bool unwind_resumed = false;  // The teardown woke it to unwind it (it does so once).
  bool in_join = false;         // Parked in join(): never unwound from there.
  // Operations in a row that may not progress (fairness), in the bits below kIdle, and kIdle: the
  // thread was descheduled for fairness since its last progress.
  std::uint32_t polls = 0;
  static constexpr std::uint32_t kIdle = std::uint32_t{1} << 31;
  std::uint32_t poll_count() const noexcept { return polls & ~kIdle; }
  bool abandoned = false;  // Abandoned by the teardown: never resumed again.
  int unwinds_thrown = 0;
  bool has_handle = true;  // A ThreadHandle refers to this record.
  bool joined = false;
  std::uint64_t priority = 0;  // PCT priority (higher runs first).
  detail::WaitQueue joiners;   // Threads blocked in join().
  // On the bubble's list of threads that have not exited (in creation order), then, if a handle
  // still refers to it, on its list of exited threads.
  detail::ListHook<BThread> list_hook;
  // bubble::random(): the key of this thread's stream (from its parent's key and its number among
  // the parent's children), how many threads it has spawned, and the stream, made on first use.
  std::uint64_t random_key = 0;
  std::uint64_t children = 0;
  std::optional<Random> random;
  // With Options::symbolize_stacks: where it last blocked, and where it was spawned.
  std::unique_ptr<detail::CapturedStack> blocked_stack;
  std::unique_ptr<detail::CapturedStack> spawn_stack;
  void* intercept_slot = nullptr;  // detail::intercepted_thread_slot(): the interposer's record.
  // With Options::dependencies: the object of the step it runs or will run next (its last point's;
  // at first its own object, which no other thread touches), and 1 + the decision that chose it
  // to run that step (0: none yet).
  std::uint64_t step_object = 0;
  std::uint32_t chosen_by = 0;
  bool step_reads = false;  // That step only reads its object (an atomic load).
};

// With Options::dependencies: a thread's own object, the one of its first step (and of the step
// after each of its spawns), which no other thread touches; and its exit, on which its joiners'
// steps after the join depend.
inline std::uint64_t own_object(const BThread* t) noexcept {
  return (std::uint64_t{1} << 63) | t->id;
}
inline std::uint64_t exit_object(const BThread* t) noexcept {
  return RunDependencies::exit_object(static_cast<std::uint32_t>(t->id));
}

// A timer's slot: what it does when it fires. TimerEntry::slot() indexes Bubble::slots_.
struct TimerSlot {
  std::uint64_t seq = 0;  // The creation sequence of the timer in the slot.
  bool active = false;
  BThread* thread = nullptr;  // A park deadline; otherwise `callback`.
  std::function<void()> callback;
};

}  // namespace bubble::engine

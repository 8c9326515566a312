// The teardown of a failed run: the threads that are left are unwound (their blocking calls throw
// bubble::Unwind, so their destructors run) or, where unwinding cannot go on, abandoned; and
// std::terminate on a bubble thread, which abandons the thread instead of ending the process.
//
// The policy (docs/design/engine-failures.md, "Teardown"). The failure's report is composed when
// the failure is decided, before anything is torn down. From then on time stops. Threads go on as
// they are until nothing can run (a wake-up is a wake-up, a join returns once its thread has ended,
// so that a destructor that waits for other threads, ~Pool or ~Thread, finishes); then the youngest
// blocked thread is woken to be unwound (its park throws Unwind, and its destructors run), since
// objects usually live on older threads' stacks than the threads that wait on them. A thread that
// is unwinding waits normally (throwing from a destructor would terminate). Threads that keep
// waking each other for kTeardownPatience steps without all blocking are all unwound at their next
// blocking call. A blocking call of the C library that is noexcept fails instead (bubble::interpose
// returns EDEADLK, on which std::mutex and the atomic waits throw std::system_error).
//
// A thread whose unwinding cannot go on is abandoned: never resumed again; its stack returns to the
// pool when the run ends (under LeakSanitizer it stays mapped and scanned instead, so that what
// its frames own is not reported as leaked) and what its frames own on the heap is leaked. That
// happens when a destructor calls std::terminate (a joinable std::thread destroyed, or Unwind
// reaching a destructor that blocks on something no thread will signal), when a thread catches
// Unwind and goes on kMaxUnwinds times, when it blocks for good where it cannot be unwound (in a
// join, or while unwinding), and when the teardown itself runs for kMaxTeardownSteps.

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <typeinfo>

#include <bubble/detail/demangle.hpp>
#include "engine/bubble.hpp"

#ifdef BUBBLE_ENGINE_ASAN
#include <sanitizer/lsan_interface.h>
#endif

namespace bubble::engine {

constinit thread_local const std::string* tl_teardown_message = nullptr;

namespace {

// The terminate handler the process had before bubble's, called for a std::terminate that is not
// a bubble thread's.
std::terminate_handler g_previous_terminate = nullptr;

// Where the handles of abandoned fibers go: a boost::context::fiber that is destroyed unwinds its
// stack, which an abandoned fiber must never do, so each is moved here and forgotten, never
// destroyed. (The record it points to is on the fiber's stack, which is reclaimed.)
alignas(fiber) unsigned char g_forgotten_fiber[sizeof(fiber)];

}  // namespace

const std::string* teardown_message_of_this_thread() noexcept {
  if (tl_teardown_message != nullptr) return tl_teardown_message;
  return tl_bubble != nullptr ? tl_bubble->teardown_message() : nullptr;
}

// std::terminate's handler while bubbles run. On a bubble thread it ends the thread instead of the
// process (terminate_current). Elsewhere it prints the failure of a run being torn down on this OS
// thread, if any, and runs the handler the process had before.
[[noreturn]] void bubble_terminate() {
  if (Bubble* b = tl_bubble; b != nullptr && b->on_bubble_thread()) b->terminate_current();
  if (const std::string* message = teardown_message_of_this_thread(); message != nullptr) {
    std::fprintf(stderr,
                 "bubble: std::terminate was called while the threads of a failed run were torn "
                 "down. The run had failed with:\n%s\n",
                 message->c_str());
    std::fflush(stderr);
  }
  if (g_previous_terminate != nullptr) g_previous_terminate();
  std::abort();
}

void install_terminate_handler() noexcept {
  const std::terminate_handler current = std::get_terminate();
  if (current == &bubble_terminate) return;
  g_previous_terminate = current;
  std::set_terminate(&bubble_terminate);
}

// std::terminate on the running bubble thread: a failure of the run if it is not failing already
// (naming the exception being handled, if any), then the thread is abandoned.
void Bubble::terminate_current() noexcept {
  BThread* t = current_;
  if (!failed_) {
    std::string why =
        "thread #" + std::to_string(t->id) + " \"" + t->name + "\" called std::terminate";
    try {
      if (const std::exception_ptr e = std::current_exception()) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          why += " while handling " + detail::demangle(typeid(ex).name()) + ": " + ex.what();
        } catch (...) {
          why += " while handling an exception not derived from std::exception";
        }
      } else if (std::uncaught_exceptions() > 0) {
        why +=
            " while unwinding its stack (a destructor that lets an exception out, or a "
            "joinable std::thread destroyed)";
      } else {
        why +=
            " (a joinable std::thread destroyed, an exception leaving a noexcept function, or "
            "a direct call)";
      }
      fail(why, false);
    } catch (...) {
      // Out of memory for the message: the thread is abandoned all the same.
    }
  }
  abandon_current("(abandoned: it called std::terminate)");
}

// The teardown begins: time stops (see the policy at the top of this file).
void Bubble::begin_unwind() {
  unwinding_ = true;
  steps_since_resume_ = 0;
  set_teardown_message(&failure_message_);
}

// Wakes the youngest blocked thread that can be unwound, so that its park throws Unwind; returns
// false if there is none. The youngest first, because a thread's objects are usually created
// before the threads that use them (a pool, a channel or a wait group before its workers): the
// youngest thread is the one whose stack others are least likely to be parked on, and it unlinks
// itself from what it waits on while that still exists. Never a thread parked in join (its target
// is unwound first and its exit ends the join normally), nor one blocked in a destructor that an
// exception is running (throwing there would terminate; its saved `uncaught` count tells), nor one
// already woken once to unwind.
bool Bubble::resume_one_for_unwinding() {
  for (BThread* t = live_threads_.back(); t != nullptr; t = ThreadList::prev(*t)) {
    if (t->state != ThreadState::blocked || t->in_join || t->unwind_resumed ||
        t->eh.uncaught != 0 || t->abandoned) {
      continue;
    }
    t->unwind = true;
    t->unwind_resumed = true;
    if (t->park_timer != 0) {
      cancel_timer(t->park_timer);
      t->park_timer = 0;
    }
    make_runnable(t);
    steps_since_resume_ = 0;
    return true;
  }
  return false;
}

// Every thread's next blocking call throws Unwind (threads spawned from now on too).
void Bubble::unwind_everyone() noexcept {
  unwind_all_ = true;
  for (BThread& t : live_threads_) t.unwind = true;
}

void Bubble::teardown_guard() {
  if (++teardown_steps_ > kMaxTeardownSteps) {
    abandon_current("(abandoned: it kept running while its run was torn down)");
  }
  if (++steps_since_resume_ == kTeardownPatience) unwind_everyone();
}

void Bubble::unwind_now(BThread* t) {
  if (t->in_join || std::uncaught_exceptions() != 0) return;
  if (++t->unwinds_thrown > kMaxUnwinds) {
    abandon_current("(abandoned: it caught bubble::Unwind and went on)");
  }
  throw Unwind{};
}

void Bubble::abandon_current(const char* why) noexcept {
  BThread* t = current_;
  t->state = ThreadState::blocked;
  t->abandoned = true;
  t->waiter = nullptr;
  t->abandoned_what = WaitInfo{why, 0, t->last_where};
  t->what = &t->abandoned_what;
  t->last_kind = t->abandoned_what.kind;
  current_ = nullptr;
  switch_to(main_);
  std::abort();  // Never resumed.
}

// Abandons `t`, blocked for good, when the run ends: its fiber is never resumed, its stack goes
// back to the pool (or, under LeakSanitizer, stays mapped and scanned, so that what the abandoned
// frames own is not reported as leaked), and its record is kept (a handle may still delete it).
void Bubble::abandon(BThread* t) noexcept {
  if (os_threads_) {
    // Its OS thread waits at its baton forever: leak the baton, let the thread go.
    static_cast<void>(t->baton.release());
    detail::detach_os_thread(t->os_thread);
  } else {
    new (g_forgotten_fiber) fiber(std::move(t->ctx));
    boost::context::stack_context stack;
    stack.size = t->stack_size;
    stack.sp = const_cast<char*>(static_cast<const char*>(t->stack_bottom)) + t->stack_size;
#ifdef BUBBLE_ENGINE_ASAN
    __lsan_register_root_region(t->stack_bottom, t->stack_size);
#else
    detail::PooledStack(options_.stack_size, options_.stack_guard == StackGuard::page)
        .deallocate(stack);
#endif
  }
  t->bubble = nullptr;
  ++abandoned_;
}

}  // namespace bubble::engine

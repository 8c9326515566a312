// The life of a bubble thread: spawn, the body, exit, join and the handle. (The teardown of a
// failed run, which unwinds the threads that are left, is in engine/teardown.cpp.)

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <bubble/detail/intercept.hpp>
#include <bubble/trace.hpp>

#include "engine/bubble.hpp"
#include "engine/random_key.hpp"

namespace bubble::engine {

void Bubble::fiber_main(BThread* t) {
  if (!t->unwind) {
    try {
      t->body();
    } catch (const Unwind&) {
      // Torn down: the stack is unwound.
    } catch (...) {
      fail_with_exception(t, std::current_exception());
    }
  }
  try {
    t->body = nullptr;
  } catch (const Unwind&) {
  } catch (...) {
    fail_with_exception(t, std::current_exception());
  }
}

Ctx* Bubble::exit_current(BThread* t) {
  t->state = ThreadState::exited;
  if (races_) [[unlikely]]
    races_->exited(static_cast<std::uint32_t>(t->id));
  trace(Trace::EventKind::exit, t->id, {}, 0, {});
  step(nullptr);
  last_progress_ = steps_.load(std::memory_order_relaxed);  // An exit is progress (a join ends).
  while (Waiter* w = t->joiners.pop_front()) unpark(*w);
  if (deps_ != nullptr) log_exit(t);  // Its last step, which the wake-ups above are part of.
  live_threads_.remove(*t);
  --live_;
  Ctx* next = &main_;
  current_ = nullptr;
  if (!failed_ && !queue_.empty() && !timer_due()) {
    BThread* n = queue_.take(decide(nullptr, nullptr));
    touch_next_stack();
    n->state = ThreadState::running;
    current_ = n;
    if (tracing_) [[unlikely]]
      trace_event(Trace::EventKind::run, n->id, {}, 0, {});
    next = n;
  }
  if (t->has_handle) {
    dead_threads_.push_front(*t);  // Kept for its handle.
  } else {
    destroy_record(t);
  }
  return next;
}

void Bubble::destroy_record(BThread* t) noexcept {
  delete t;
}

// ThreadModel::fibers: gives `t` its fiber, on a pooled stack. If that throws, deletes `t`.
void Bubble::start_fiber(BThread* t) {
  boost::context::stack_context sctx;
  const bool guarded = options_.stack_guard == StackGuard::page;
  detail::PooledStack alloc(options_.stack_size, guarded, &sctx);
  try {
    t->ctx = fiber(std::allocator_arg, alloc,
                   [this, t](fiber&& caller) { return thread_main(t, std::move(caller)); });
  } catch (...) {
    delete t;
    throw;
  }
  // The stack's bounds, for AddressSanitizer's switch annotations (Boost keeps its control
  // record at the top of the same allocation).
  t->stack_size = sctx.size;
  t->stack_bottom = static_cast<const char*>(sctx.sp) - sctx.size;
  if (!guarded) t->canary = static_cast<const std::uint64_t*>(t->stack_bottom);
}

// ThreadModel::os_threads: the OS thread of bubble thread `record`. It waits for its first turn,
// runs the thread's body as a fiber would, and hands the run on when the body is done; then its
// thread_local destructors run, outside the bubble, before the bubble joins it.
void* Bubble::os_thread_main(void* record) {
  auto* t = static_cast<BThread*>(record);
  t->baton->wait();
  t->bubble->enter_os_thread(t);
  return nullptr;
}

void Bubble::enter_os_thread(BThread* t) {
  tl_bubble = this;
  install_crash_report();
  detail::set_current_runtime(this);
  detail::tl_tracing = tracing_;
  if (races_) [[unlikely]] {
    // The C library reuses the stacks of ended threads: their accesses are not this one's.
    pthread_attr_t attr;
    if (pthread_getattr_np(t->os_thread, &attr) == 0) {
      void* stack = nullptr;
      std::size_t size = 0;
      if (pthread_attr_getstack(&attr, &stack, &size) == 0) races_->forget(stack, size);
      pthread_attr_destroy(&attr);
    }
  }
  if (options_.intercept_std) detail::tl_intercepting_runtime = this;
  const pthread_t self = t->os_thread;
  fiber_main(t);
  Ctx* next = exit_current(t);  // May delete t.
  from_ = nullptr;
  running_ = next;
  exited_os_threads_.push_back(self);  // Reserved at spawn: does not allocate.
  detail::tl_intercepting_runtime = nullptr;
  detail::tl_tracing = false;
  detail::set_current_runtime(nullptr);
  tl_bubble = nullptr;
  next->baton->post();
}

void Bubble::join_exited_os_threads() noexcept {
  for (const pthread_t thread : exited_os_threads_) detail::join_os_thread(thread);
  exited_os_threads_.clear();
}

std::unique_ptr<ThreadHandle> Bubble::do_spawn(std::string name, std::function<void()> body,
                                               SourceLocation where) {
  check_thread("spawn");
  if (!body) throw std::invalid_argument("bubble::Runtime::spawn: empty body for \"" + name + "\"");
  queue_.reserve(live_ + 1);  // Pushing the new thread (unpark, noexcept) never allocates.
  auto* t = new BThread;
  t->bubble = this;
  t->id = ++thread_ids_;
  t->name = std::move(name);
  t->body = std::move(body);
  t->spawned_at = where;
  t->last_kind = "spawned";
  t->last_where = where;
  if (capture_stacks_) [[unlikely]] {
    t->blocked_stack = std::make_unique<detail::CapturedStack>();
    t->spawn_stack = std::make_unique<detail::CapturedStack>();
    detail::capture_stack(*t->spawn_stack, 1);
  }
  t->unwind = unwind_all_;  // A thread spawned during the teardown runs normally, as the others.
  if (current_ != nullptr) {
    t->random_key = detail::derive_random_key(current_->random_key, ++current_->children);
  } else {  // The root, or a thread spawned by a timer callback.
    t->random_key = detail::derive_random_key(random_key_, ++callback_children_);
  }
  scheduler_->spawned(*t);
  if (deps_ != nullptr) {
    t->step_object = own_object(t);
    log_edge(RunDependencies::EventKind::spawn, t);
  }
  if (os_threads_) {
    try {
      // Room for every thread that may exit before the next join: enter_os_thread pushes
      // without allocating.
      if (exited_os_threads_.capacity() < thread_ids_) exited_os_threads_.reserve(2 * thread_ids_);
      t->baton = std::make_unique<detail::Baton>();
      t->os_thread = detail::start_os_thread(options_.stack_size, &Bubble::os_thread_main, t);
    } catch (...) {
      delete t;
      throw;
    }
  } else {
    start_fiber(t);
  }
  live_threads_.push_back(*t);
  ++live_;
  if (races_) [[unlikely]] {
    races_->spawned(race_thread(), static_cast<std::uint32_t>(t->id), t->name);
    // A pooled stack's earlier threads' accesses are not this thread's history.
    if (t->stack_bottom != nullptr) races_->forget(t->stack_bottom, t->stack_size);
  }
  if (trace_) {
    trace_->add_thread(t->id, t->name);
    trace(Trace::EventKind::spawn, current_id(), trace_->note(t->name), t->id, where);
  }
  t->state = ThreadState::runnable;
  queue_.push_back(t);
  auto handle = std::make_unique<ThreadHandleImpl>(t);
  // Spawning is a scheduling point of the spawning thread. The spawn is done: the step after it
  // touches nothing of another thread's.
  if (current_ != nullptr) {
    if (deps_ != nullptr) next_point_object_ = own_object(current_);
    schedule_point(WaitInfo{"spawn", t->id, where});
  }
  return handle;
}

void Bubble::join(BThread* t, SourceLocation where) {
  check_thread("join");
  if (t->joined) throw std::logic_error("bubble: thread \"" + t->name + "\" joined twice");
  if (t == current_) {
    throw std::logic_error("bubble: thread \"" + t->name + "\" cannot join itself");
  }
  t->joined = true;
  const WaitInfo what{"Thread::join", t->id, where};
  // The joiner sees everything the joined thread did (race detection).
  const auto joined_edge = [&] {
    if (races_) [[unlikely]]
      races_->joined(race_thread(), static_cast<std::uint32_t>(t->id));
  };
  if (current_ == nullptr) {
    if (t->state == ThreadState::exited) return joined_edge();
    throw std::logic_error("bubble: Thread::join of \"" + t->name +
                           "\" would block in a timer callback of " + name_);
  }
  // The steps after the join depend on t's exit.
  if (t->state == ThreadState::exited) {
    if (deps_ != nullptr) next_point_object_ = exit_object(t);
    schedule_point(what);
    joined_edge();
    return;
  }
  Waiter w;
  prepare(w);
  t->joiners.push_back(w);
  BThread* self = current_;
  self->in_join = true;
  try {
    // Only t's exit unparks w; the loop makes that a fact rather than an assumption.
    while (t->state != ThreadState::exited) {
      if (deps_ != nullptr) next_point_object_ = exit_object(t);
      park(w, kNoDeadline, what);
      next_point_object_ = 0;  // Unused if park returned without a point.
    }
  } catch (...) {
    self->in_join = false;
    if (w.queued()) t->joiners.remove(w);
    throw;
  }
  self->in_join = false;
  if (w.queued()) t->joiners.remove(w);
  joined_edge();
}

void Bubble::release_handle(BThread* t) noexcept {
  t->has_handle = false;
  if (t->state != ThreadState::exited) return;  // Detached: freed when it exits.
  dead_threads_.remove(*t);
  destroy_record(t);
}

}  // namespace bubble::engine

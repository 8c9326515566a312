#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include <bubble/detail/intrusive_list.hpp>
#include <bubble/detail/not_instrumented.hpp>
#include <bubble/errc.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>
#include <bubble/time.hpp>

namespace bubble {

namespace detail {

class ContextState;
struct AfterDoneState;
struct ContextAccess;  // Internal access for the framework's own sources.

// The part of a context's shared state that Context's inline accessors read. status is 0 while
// the context is not done, then the errc value of err() (canceled or deadline_exceeded); it is
// written once, with release order, after the cause.
struct ContextStateBase {
  std::atomic<int> status{0};
  // False only for background(), which can never end.
  bool can_end = false;
};

// One registration in a context's list of callbacks (intrusive; owned by a Context::Callback or
// by a child context). Fields other than `invoke` are guarded by the context's lock.
struct ContextCallbackNode {
  ListHook<ContextCallbackNode> hook;  // On the context's list while registered and not run.
  void (*invoke)(ContextCallbackNode*) noexcept = nullptr;
  void* owner = nullptr;  // The Callback or child ContextState that owns the node.
  // While the cancelling thread runs this node: the thread running it (a runtime thread record
  // in a bubble, where threads share an OS thread; an OS-thread token otherwise), that thread's
  // controlled runtime (nullptr outside a bubble), and a flag on its stack that the node's owner
  // sets when it deregisters from inside the callback.
  const void* running_on = nullptr;
  Runtime* running_runtime = nullptr;
  bool* destroyed = nullptr;
  // A bubble thread that deregisters the node while it runs on another bubble thread parks on
  // this waiter; the cancelling thread unparks it when the callback has returned.
  Waiter* remover = nullptr;
  // Set (release) by the cancelling thread when the callback has returned.
  std::atomic<bool> finished{false};
};

}  // namespace detail

class CancelFunc;

// Context carries a cancellation signal, with a cause and an optional deadline, across API
// boundaries and threads: the semantics of Go's context package, without values.
//
// A Context is a cheap, copyable handle on shared state; copies observe the same context. A
// context ends ("is done") exactly once: when its CancelFunc is called, when its deadline passes
// on its runtime's clock, or when its parent ends; it never ends otherwise, and never un-ends.
// Ending a context ends all its children (contexts derived from it), and runs its callbacks.
//
// Thread safety: every member may be called concurrently from any thread.
class Context {
 public:
  class Callback;

  // The background context (same as background()).
  Context();

  // The root context: never done, no deadline, no cause. One process-wide shared state, usable
  // from every runtime. Returned by reference to one process-wide handle, so using it (for example
  // as a default argument) costs no reference-count traffic; copy it freely.
  static const Context& background() noexcept {
    // Inline, because every call that takes a context defaults to this one: the hot paths of
    // the primitives read it without a call.
    static const Context* const background = make_background();
    return *background;
  }

  // Where the runtime goes: every factory here that needs a clock (with_deadline, with_timeout)
  // takes the runtime last, defaulting to current_runtime(), as everywhere in bubble. with_cancel
  // takes none: it creates no timer and never waits, and a child's deadline, if any, is its
  // parent's, already on the parent's runtime. Context::wait blocks on current_runtime().
  //
  // A child of `parent` and the function that cancels it. The child ends when cancel is called
  // (err() == errc::canceled, cause() == the cause given to cancel) or when `parent` ends (with
  // the parent's err() and cause()). If `parent` is already done, the child is done at once.
  // The child is deregistered from `parent` when it ends or when its last handle (Context,
  // CancelFunc, Callback) is destroyed, so cancelled or forgotten children do not accumulate.
  static std::pair<Context, CancelFunc> with_cancel(const Context& parent);
  // The same, for a child called `name` in deadlock reports ("Context::wait "request"
  // (object #5)"); the name is recorded once, here, on current_runtime().
  static std::pair<Context, CancelFunc> with_cancel(const Context& parent, std::string_view name);

  // Like with_cancel, and the child also ends with errc::deadline_exceeded when rt.now() reaches
  // `deadline` (a timer scheduled with rt.schedule_at; it is cancelled when the child ends first).
  // If `parent`'s deadline is not later than `deadline`, the child keeps the parent's deadline and
  // needs no timer of its own (Go's WithDeadline). A deadline that has already passed ends the
  // child at once with errc::deadline_exceeded. The child's deadline() is min(parent's, deadline).
  // Deadlines are time points of `rt`'s clock: only compare contexts of the same runtime.
  static std::pair<Context, CancelFunc> with_deadline(const Context& parent, TimePoint deadline,
                                                      Runtime& rt = current_runtime());

  // with_deadline(parent, rt.now() + timeout, rt), saturating at the end of time.
  static std::pair<Context, CancelFunc> with_timeout(const Context& parent, Duration timeout,
                                                     Runtime& rt = current_runtime());

  // with_deadline and with_timeout for a child called `name` in deadlock reports (recorded
  // once, here).
  static std::pair<Context, CancelFunc> with_deadline(const Context& parent, TimePoint deadline,
                                                      std::string_view name,
                                                      Runtime& rt = current_runtime());
  static std::pair<Context, CancelFunc> with_timeout(const Context& parent, Duration timeout,
                                                     std::string_view name,
                                                     Runtime& rt = current_runtime());

  // The context's object id, shown in reports next to its name ("Context::wait (object #5)");
  // unique among the objects of the runtime that made it. 0 for background().
  std::uint64_t id() const noexcept;

  // True once the context has ended. Never blocks; lock-free.
  BUBBLE_NOT_INSTRUMENTED bool done() const noexcept {
    return state_base()->status.load(std::memory_order_acquire) != 0;
  }

  // An empty std::error_code while the context is not done; errc::canceled or
  // errc::deadline_exceeded once it is.
  BUBBLE_NOT_INSTRUMENTED std::error_code err() const noexcept {
    const int s = state_base()->status.load(std::memory_order_acquire);
    return s == 0 ? std::error_code{} : make_error_code(static_cast<errc>(s));
  }

  // Go's context.Cause: the cause given to the CancelFunc that ended this context (or one of its
  // ancestors); err() when that cause was empty or the context ended by its deadline; an empty
  // std::error_code while the context is not done.
  std::error_code cause() const noexcept;

  // The time point (on the clock of the runtime that set it) at which the context ends by itself,
  // or nullopt when it has no deadline.
  std::optional<TimePoint> deadline() const noexcept;

  // False when the context can never end (background()); true for every context made by
  // with_cancel, with_deadline or with_timeout. Lets a primitive skip registering a Callback.
  bool can_end() const noexcept { return state_base()->can_end; }

  // The number of Callbacks and live children currently registered on this context: a snapshot,
  // for tests and monitoring (a child leaves when it ends or is destroyed, a Callback when it is
  // destroyed or has run). Always 0 for background(), which keeps no registrations.
  std::size_t registrations() const noexcept;

  // Blocks the calling thread, on current_runtime(), until the context is done; returns at once
  // if it already is. A scheduling point in a bubble; in a bubble the wait is a park (the thread
  // is blocked, and a run whose threads all wait on contexts that nothing will end deadlocks).
  void wait(SourceLocation where = SourceLocation::current()) const;

  // True when both handles refer to the same context.
  friend bool operator==(const Context& a, const Context& b) noexcept {
    return a.state_ == b.state_;
  }

 private:
  friend class CancelFunc;
  friend class Callback;
  friend struct detail::ContextAccess;
  friend class detail::ContextState;
  // The background context's one handle, made on the first call of background() and never
  // destroyed: usable from static destructors and detached threads at exit.
  static const Context* make_background();
  explicit Context(std::shared_ptr<detail::ContextStateBase> state) noexcept
      : state_(std::move(state)) {}
  const detail::ContextStateBase* state_base() const noexcept { return state_.get(); }

  // Always non-null; points at a detail::ContextState (defined in primitives/context.cpp).
  std::shared_ptr<detail::ContextStateBase> state_;
};

// CancelFunc ends the context it was returned with. Cheap to copy; all copies cancel the same
// context. Calling it on a context that is already done does nothing (the first cause stands).
// Cancelling runs the context's callbacks and cancels its children inline, on the calling thread,
// before returning. A default-constructed CancelFunc does nothing.
//
// Thread safety: may be called concurrently from any thread, including from timer callbacks.
class CancelFunc {
 public:
  CancelFunc() = default;

  // Cancels with cause errc::canceled.
  void operator()() const { (*this)(std::error_code{}); }

  // Cancels with `cause` (err() becomes errc::canceled; cause() returns `cause`, or
  // errc::canceled if `cause` is empty).
  void operator()(std::error_code cause) const;

 private:
  friend class Context;
  friend struct detail::ContextAccess;
  explicit CancelFunc(std::shared_ptr<detail::ContextStateBase> state) noexcept
      : state_(std::move(state)) {}
  std::shared_ptr<detail::ContextStateBase> state_;
};

// Context::Callback registers `fn` to run once when the context ends, like std::stop_callback.
//
// - If the context is already done, the constructor runs fn before returning, on the calling
//   thread. Otherwise fn runs on the thread that ends the context (the canceller, or the runtime's
//   timer callback for a deadline), inline, outside the context's internal lock.
// - The rule for fn: it must not block, since it may run in a runtime timer callback, where
//   nothing can block (in a bubble, park there throws). It may take a detail::SpinLock, unpark a
//   waiter, cancel another context, send with Channel::try_send_from_callback, and spawn a
//   thread. It is not atomic with respect to other threads: in a bubble, spawning is a scheduling
//   point of the cancelling thread, so other bubble threads may run (random and PCT schedules do
//   switch there) before fn returns; on the system runtime other threads run in parallel anyway.
// - The destructor deregisters fn. If fn is running on another thread at that moment, the
//   destructor blocks until fn has returned, so fn's captures may be destroyed right after: on
//   the system runtime (or when fn runs on a thread of another runtime) it spins, then yields; in
//   a bubble, when fn runs on another thread of the same bubble (preempted inside fn), it parks,
//   so that thread runs on and finishes fn (a bubble torn down meanwhile still waits for fn
//   before the destructor returns). If fn is running on the calling thread (fn destroys its own
//   Callback), it does not wait. A bubble's timer callback cannot wait: destroying, from one, a
//   Callback whose fn is running on a bubble thread aborts the process with a message.
// - Keeps the context alive while registered. Neither copyable nor movable.
// - An empty fn throws std::invalid_argument.
// - An exception escaping fn calls std::terminate.
class Context::Callback {
 public:
  Callback(const Context& ctx, std::function<void()> fn);
  ~Callback();
  Callback(const Callback&) = delete;
  Callback& operator=(const Callback&) = delete;

 private:
  static void invoke(detail::ContextCallbackNode* node) noexcept;
  detail::ContextCallbackNode node_;
  std::function<void()> fn_;
  std::shared_ptr<detail::ContextStateBase> state_;
};

// The handle returned by after_done: the registration of a function to run when a context ends.
//
// Naming: bubble has two "run this later" functions, one per concept, like Go. after_func
// (timer.hpp, Go's time.AfterFunc) runs a function once a duration has elapsed and returns an
// AfterFunc; after_done (here, Go's context.AfterFunc) runs a function once a context is done and
// returns an AfterDone. They used to share the name after_func, overloaded on the first argument,
// which hid that they wait for different things and return different handles.
class AfterDone {
 public:
  AfterDone() = default;

  // Stops the association between the context and the function. Returns true if this call
  // prevented the function from being started; false if it had already been started (the context
  // ended) or stopped, or for a default-constructed handle. Never blocks on the function.
  bool stop();

 private:
  friend AfterDone after_done(const Context&, std::function<void()>, Runtime&);
  std::shared_ptr<detail::AfterDoneState> state_;
};

// Go's context.AfterFunc: once `ctx` is done, runs `fn` in a new thread of `rt`
// (rt.spawn("after_done", ...), detached), at most once. If `ctx` is already done, the thread is
// started before after_done returns. The registration lives until the context ends or stop() is
// called; destroying the handle does not cancel it. For a context that can never end, fn never
// runs and nothing is registered. An empty fn throws std::invalid_argument.
AfterDone after_done(const Context& ctx, std::function<void()> fn, Runtime& rt = current_runtime());

}  // namespace bubble

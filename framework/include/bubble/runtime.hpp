#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>

#include <bubble/detail/intrusive_list.hpp>
#include <bubble/detail/not_instrumented.hpp>
#include <bubble/source_location.hpp>
#include <bubble/time.hpp>

namespace bubble {

class Runtime;
class Context;

// WaitInfo says what a thread is about to block on, or which operation reached a scheduling
// point: the kind of operation ("Mutex::lock", "Channel::receive", "sleep"), the identity of the
// object (from Runtime::new_object_id(), so that reports are identical from run to run) and the
// source location of the call. A bubble shows it in deadlock reports and traces.
//
// A wait on several things at once (bubble::select) also lists them: `cases` points at
// `case_count` WaitInfos, one per case in argument order (each with its own kind, object id and
// location). They live in the waiting call's frame, so a runtime may read them only while the
// thread is blocked on this wait (a bubble's deadlock report does), never after it returned.
// A primitive that can say who could release a blocked thread also passes itself as `object`
// and a `describe` function: a deadlock report calls describe(object, detail) for each thread
// blocked on it, while the thread is still blocked (so the object is alive), and never on the
// hot path. Primitives leave both null at scheduling points.
// What an operation at a scheduling point tells a bubble about progress. A thread that waits for
// another without blocking (a spin-wait) repeats operations that change nothing: a bubble
// deschedules a thread that makes nothing else for Options::fair_bound operations in a row, so
// that the thread it waits for runs (fairness), and reports a livelock when no thread has made
// progress for Options::livelock_steps steps.
enum class Progress : std::uint8_t {
  // The operation changes what other threads can see (a store, a send, a release, a spawn).
  made,
  // The operation only looks, or gives the processor away: a yield, an atomic load, a failed
  // compare-exchange, a sleep or wait whose deadline has passed, Notification::has_been_notified.
  // Counts towards fairness and towards a livelock.
  none,
  // The operation may only look: a Mutex's lock and unlock (the bubble does not see whether the
  // critical section writes), a try_lock, Semaphore::try_acquire, Channel::try_send. Counts
  // towards fairness, never towards a livelock (a loop of them may be doing real work).
  maybe,
};

struct WaitDetail;
struct WaitInfo {
  std::string_view kind;
  std::uint64_t object_id = 0;
  SourceLocation where;
  const WaitInfo* cases = nullptr;
  std::size_t case_count = 0;
  const void* object = nullptr;
  void (*describe)(const void* object, WaitDetail& detail) = nullptr;
  // What the operation tells a bubble about progress (fairness and livelocks: see Progress).
  Progress progress = Progress::made;
  // True for a wait that touches nothing other threads share and that only its deadline ends (a
  // sleep without a context): partial-order reduction (RunDependencies) then counts the step it
  // starts as the thread's own, independent of every other thread's, instead of as one on an
  // unknown object, dependent with all. Leave it false for any wait another thread can end.
  bool private_wait = false;
};

// What a blocked thread's object tells a report (WaitInfo::describe) about who could release it.
struct WaitDetail {
  // The owner token of the thread that holds the object (for a Mutex: the record that
  // Runtime::prepare binds to a waiter), or nullptr if nobody holds it or it is not tracked.
  const void* holder = nullptr;
  // When `holder` took it, on the runtime's clock (meaningful only with a holder).
  TimePoint held_since{};
  // A short description of the object's state for the report ("1 of 3 units free, wants 2"),
  // or empty.
  std::string state;
};

// The outcome of Runtime::park.
enum class ParkResult {
  notified,   // Another thread called Runtime::unpark on the waiter.
  timed_out,  // The deadline passed first; nobody had unparked the waiter.
};

// Waiter is one blocking call of one thread: the handle another thread uses to wake it.
//
// A primitive creates a Waiter on the blocked thread's stack, binds it with Runtime::prepare,
// links it into its own wait queue under its own internal lock, releases that lock and calls
// Runtime::park. A waker removes the waiter from the queue and hands it its result under the
// primitive's lock, releases the lock, and only then calls Runtime::unpark (detail::WakeList),
// holding the Runtime in a local: from the first unpark on, the woken thread may return and
// destroy the primitive, so the waker touches only the waiters and the runtime. A waiter whose
// park timed out takes the lock again and, if it is still queued, removes itself; if a waker
// dequeued it first, it parks again (no deadline) until that waker's unpark arrives. That
// protocol is what keeps a Waiter alive for as long as any other thread can reach it, and it is
// the same in every runtime (docs/design/primitives.md, "The parking protocol").
//
// The public data members are the hooks of the intrusive lists a waiter goes through
// (detail::WaitQueue, then detail::WakeList) and the slots a primitive uses to hand a result to
// the waiter; runtimes use thread_ and notified_.
class Waiter {
 public:
  Waiter() = default;
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  // True once Runtime::unpark has been called on this waiter.
  BUBBLE_NOT_INSTRUMENTED bool notified() const noexcept {
    return notified_.load(std::memory_order_acquire);
  }

  // The links of the primitive's wait queue (detail::WaitQueue) while the waiter is in it; only
  // the queue changes them.
  detail::ListHook<Waiter> queue_hook;
  // The links of the detail::WakeList of the waker that dequeued the waiter, until it unparks it.
  detail::ListHook<Waiter> wake_hook;

  // True while the waiter is in a wait queue. Read under the lock that guards the queue.
  bool queued() const noexcept { return queue_hook.linked(); }

  // Free slots for the primitive that queued the waiter (a weight, a pointer to a value, a status).
  std::uint64_t word = 0;
  void* data = nullptr;
  int status = 0;

 private:
  friend class Runtime;
  std::atomic<bool> notified_{false};
  void* thread_ = nullptr;  // The runtime's record of the thread that will park on this waiter.
};

// ThreadHandle is a runtime's handle on a thread started by Runtime::spawn.
//
// The two handles on a thread differ in what dropping them does: destroying a ThreadHandle
// without joining *detaches* the thread (it runs on, and the runtime reclaims it when it ends),
// while destroying a bubble::Thread *joins* it. Prefer bubble::Thread. Because a dropped handle
// detaches silently, Runtime::spawn is [[nodiscard]]: keep the handle and join it, or say that
// the thread is meant to run on with bubble::detach(rt.spawn(...)).
class ThreadHandle {
 public:
  virtual ~ThreadHandle() = default;
  // Blocks the calling thread until the thread has returned from its body. Joining twice, or
  // joining the calling thread itself, throws std::logic_error.
  virtual void join(SourceLocation where = SourceLocation::current()) = 0;
  // The name given to Runtime::spawn.
  virtual const std::string& name() const noexcept = 0;
};

// Detaches the thread `handle` refers to: the thread runs on to the end of its body, and its
// runtime reclaims it then; nothing can join it any more. This is what destroying the handle
// does; the call says so where it is meant, as in `detach(rt.spawn("logger", fn))`. A null
// handle does nothing.
inline void detach(std::unique_ptr<ThreadHandle> handle) noexcept {
  handle.reset();
}

// Identifies a timer scheduled with Runtime::schedule_at; 0 is never a valid id.
using TimerId = std::uint64_t;

// Runtime is the clock and the scheduler that every bubble component takes, by reference, in its
// constructor. It is a small kernel: a clock, threads, parking, timers and scheduling points.
// Every primitive (Mutex, CondVar, Channel, Context, ...) is written once on top of it, so the
// same code runs on real threads (bubble::system_runtime()) and in a bubble, where time is virtual
// and a controlled scheduler picks which thread runs.
//
// Thread safety: every member may be called from any thread of this runtime, concurrently.
// Calling a controlled runtime (a bubble) from a thread that does not belong to it throws
// std::logic_error naming the runtime and the operation.
class Runtime {
 public:
  // Leaves the process-wide registry of live runtimes (see the constructor).
  virtual ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // A short name for messages: "system", or a bubble's Options::name ("bubble" by default).
  virtual std::string_view name() const noexcept = 0;

  // --- Clock ------------------------------------------------------------------------------

  // The current time on this runtime's monotonic clock. Never decreases.
  virtual TimePoint now() const noexcept = 0;

  // The current calendar time, for logs and traces. A bubble starts at 2000-01-01T00:00:00Z
  // (or the start its options name) and moves with its virtual clock.
  virtual WallTime wall_now() const noexcept = 0;

  // --- Threads ----------------------------------------------------------------------------

  // Starts a thread of this runtime that runs `body`. `name` appears in reports and traces.
  // An exception escaping `body` is a failure of the runtime: the system runtime calls
  // std::terminate, a bubble fails the run and rethrows the exception from bubble::run.
  // Returns the thread's handle; dropping it detaches the thread, so discarding the result is a
  // warning: join it, or pass it to bubble::detach. (spawn is not virtual because GCC does not
  // diagnose a discarded [[nodiscard]] result of a virtual call; runtimes implement do_spawn.)
  [[nodiscard]] std::unique_ptr<ThreadHandle> spawn(
      std::string name, std::function<void()> body,
      SourceLocation where = SourceLocation::current()) {
    return do_spawn(std::move(name), std::move(body), where);
  }

  // An opaque token that identifies the calling thread among the threads of this runtime: the
  // same in every call from one thread for as long as that thread lives, and different for any
  // two threads of this runtime alive at the same time (a thread that has ended may leave its
  // token to a later one). Never nullptr. Compare tokens; never dereference one. Never blocks;
  // not a scheduling point. Primitives use it to recognize a thread: the owner of a Mutex, the
  // thread that runs a Context::Callback.
  //
  // Meaningful only on a thread of this runtime. On a runtime that is not controlled (the system
  // runtime) every OS thread is one of its threads, and the token is the calling OS thread's. A
  // bubble, whose threads share one OS thread, returns its record of the calling bubble thread;
  // called from anywhere else (one of its timer callbacks, or a thread outside the bubble), it
  // returns the calling OS thread's token, which no bubble thread's token equals. Inline, and one
  // thread-local address on a runtime that is not controlled.
  const void* current_thread_token() const noexcept {
    if (!controlled_) [[likely]]
      return &tl_os_thread_token_;
    return controlled_thread_token();
  }

  // --- Parking ----------------------------------------------------------------------------

  // Binds `waiter` to the calling thread, before it is queued anywhere. Must be called once per
  // Waiter, by the thread that will park on it.
  virtual void prepare(Waiter& waiter) = 0;

  // Blocks the calling thread until another thread calls unpark(waiter) or `deadline` passes
  // (kNoDeadline: no deadline). Returns at once if the waiter was already unparked. Returns
  // notified if the waiter was unparked, timed_out otherwise; never returns spuriously. Once park
  // has returned notified, the unparking thread no longer touches the Waiter, so the caller may
  // end its life (Waiter::notified() alone does not promise that on every runtime: only park's
  // result does).
  // `what` is what the thread is blocked on, shown in deadlock reports. In a bubble that has
  // failed, park throws bubble::Unwind to unwind the thread: the caller must unlink its waiter
  // (under its lock) before letting the exception through.
  virtual ParkResult park(Waiter& waiter, TimePoint deadline, const WaitInfo& what) = 0;

  // Wakes the thread parked (or about to park) on `waiter`, which the caller has removed from its
  // queue under that queue's lock and has released the lock since (see Waiter). The caller must
  // not touch the primitive after the call begins: the woken thread may already have destroyed
  // it. Never blocks; never switches threads.
  virtual void unpark(Waiter& waiter) noexcept = 0;

  // --- Timers -----------------------------------------------------------------------------

  // Calls `callback` once, at `deadline` or soon after, on a thread of the runtime's choosing.
  // Callbacks must not block: they wake threads, close channels, cancel contexts. A deadline
  // that has already passed makes the timer due at once. Returns an id for cancel_timer.
  virtual TimerId schedule_at(TimePoint deadline, std::function<void()> callback) = 0;

  // Cancels a timer. Returns true if the timer had not fired and now never will; false if it
  // had fired, is firing, or was already cancelled. Never blocks.
  virtual bool cancel_timer(TimerId id) noexcept = 0;

  // --- Scheduling -------------------------------------------------------------------------

  // A place where a controlled scheduler may switch to another runnable thread: called by every
  // primitive operation. Only called when controlled() is true (the primitives check inline).
  virtual void schedule_point(const WaitInfo& what) = 0;

  // Lets other threads run: a scheduling point in a bubble, std::this_thread::yield() otherwise.
  virtual void yield(SourceLocation where = SourceLocation::current()) = 0;

  // A choice among `n` alternatives that the program leaves to the runtime: which of several
  // ready cases of a select proceeds. Returns an index in [0, n); 0 at once when n <= 1. `what`
  // names the operation (for traces). Never blocks; never switches threads.
  //
  // In a bubble it is a scheduling decision with n candidates, like a pick among runnable
  // threads: fifo returns 0 (the first candidate); random and PCT draw from the strategy's
  // generator; choices consumes the next pick (modulo n); the index is recorded in the run's
  // Schedule (Schedule::picks), so Options::replay and Strategy::choices reproduce it. On other
  // runtimes (the default implementation) it is uniform, drawn from bubble::random() of the
  // calling thread.
  virtual std::size_t choose(std::size_t n, const WaitInfo& what);

  // A fresh identity for a primitive object, unique within this runtime and, in a bubble,
  // the same from run to run.
  virtual std::uint64_t new_object_id() noexcept = 0;

  // A fresh identity, as new_object_id(), for an object the user called `name` (empty: no
  // name). A primitive calls it once, at construction; nothing per operation. A bubble keeps the
  // name for the rest of the run and shows it in deadlock reports next to the id ("Mutex::lock
  // "accounts" (object #3)"); the system runtime ignores names (it writes no reports, and a
  // process that creates primitives without end must not grow a registry of them).
  std::uint64_t new_object_id(std::string_view name) {
    const std::uint64_t id = new_object_id();
    if (!name.empty()) [[unlikely]]
      name_object(id, name);
    return id;
  }

  // True for runtimes whose scheduler decides every interleaving (a bubble). Inline so that the
  // primitives' fast paths pay one predictable branch and no virtual call on the system runtime.
  bool controlled() const noexcept { return controlled_; }

  // Identifies this runtime among every runtime the process has created: never 0, never reused
  // (unlike its address, which a later runtime may get). The primitives record it to check that
  // their callers run on their runtime without dereferencing one that may have ended.
  std::uint64_t serial() const noexcept { return serial_; }

  // --- Race detection ----------------------------------------------------------------------
  // How a primitive's operations synchronize, as race detection sees them (a bubble running code
  // compiled with bubble::instrument; docs/unmodified-code.md): sync_release(id) as an operation
  // of the object `id` publishes what the calling thread did before it (unlock, send, notify,
  // release of permits, count_down, done), sync_acquire(id) once an operation has observed such a
  // publication (lock, receive, a wait that returns because of one). A wake-up (unpark) is an
  // edge by itself, so a primitive needs these only where a thread may observe another's
  // operation without having parked. Inline: one load and a branch, and nothing else unless the
  // runtime checks races.
  void sync_release(std::uint64_t object) {
    if (checks_races_) [[unlikely]]
      synchronize(object, true);
  }
  void sync_acquire(std::uint64_t object) {
    if (checks_races_) [[unlikely]]
      synchronize(object, false);
  }
  // Whether sync_release and sync_acquire do anything.
  bool checks_races() const noexcept { return checks_races_; }

  // --- Conveniences built on the kernel ----------------------------------------------------

  // Blocks the calling thread until now() >= deadline. In a bubble this takes no real time.
  void sleep_until(TimePoint deadline, SourceLocation where = SourceLocation::current());
  // Blocks the calling thread for `d` (nothing happens for d <= 0 beyond a scheduling point).
  void sleep_for(Duration d, SourceLocation where = SourceLocation::current());

  // Sleeps that a context can cut short (Go's `select { case <-time.After(d): case <-ctx.Done():
  // }`). Block until `deadline` (or for `d`) or until `ctx` is done, whichever comes first. Return
  // {} when the full sleep has elapsed (now() >= deadline, even if ctx ended at that same instant),
  // or ctx.err() (errc::canceled or errc::deadline_exceeded) as soon as ctx ended before that:
  // in a bubble, at exactly the virtual instant it ended. A sleep that is already over
  // (deadline <= now(), d <= 0) returns {} after a scheduling point; otherwise a context that is
  // already done returns its error at once, after a scheduling point. A context that can never end
  // (background()) makes a plain sleep. In a bubble the sleep is a park: the thread counts as
  // blocked while it sleeps.
  [[nodiscard]] std::error_code sleep_until(TimePoint deadline, const Context& ctx,
                                            SourceLocation where = SourceLocation::current());
  [[nodiscard]] std::error_code sleep_for(Duration d, const Context& ctx,
                                          SourceLocation where = SourceLocation::current());

 protected:
  // Enters the process-wide registry of live runtimes, which the primitives consult (on their
  // error path only) to tell a runtime that is still alive from one that has ended.
  explicit Runtime(bool controlled) noexcept;

  // Records `name` for the object `id` (see new_object_id(std::string_view)). The default
  // ignores it.
  virtual void name_object(std::uint64_t id, std::string_view name);

  // Records a release (`release`) or an acquire of `object` for race detection; called only
  // while checks_races() is set. The default does nothing.
  virtual void synchronize(std::uint64_t object, bool release);
  // Turns sync_release / sync_acquire on or off.
  void set_checks_races(bool on) noexcept { checks_races_ = on; }

  // Implements spawn (same contract); the only way a runtime starts threads.
  virtual std::unique_ptr<ThreadHandle> do_spawn(std::string name, std::function<void()> body,
                                                 SourceLocation where) = 0;

  // current_thread_token() on a controlled runtime. The default returns the calling OS thread's
  // token, which is right for a runtime whose threads are OS threads.
  virtual const void* controlled_thread_token() const noexcept;

  // Accessors for implementations: the thread record bound by prepare(), and the unpark flag.
  static void*& thread_slot(Waiter& w) noexcept { return w.thread_; }
  BUBBLE_NOT_INSTRUMENTED static void mark_notified(Waiter& w) noexcept {
    w.notified_.store(true, std::memory_order_release);
  }

 private:
  // One byte per OS thread: its address is the OS thread's token (current_thread_token).
  static inline thread_local char tl_os_thread_token_ = 0;

  const bool controlled_;
  bool checks_races_ = false;
  const std::uint64_t serial_;
  // The hook of the registry of live runtimes (guarded by the registry's lock, in
  // kernel/runtime.cpp).
  detail::ListHook<Runtime> live_hook_;
  friend struct RuntimeRegistry;
};

// The process-wide runtime backed by real threads and the steady clock. Never destroyed.
Runtime& system_runtime() noexcept;

// The runtime of the calling thread: its bubble when called from a bubble thread (or a bubble's
// timer callback), the system runtime otherwise.
Runtime& current_runtime() noexcept;

// True when the calling thread belongs to a bubble.
bool in_bubble() noexcept;

// Blocks the calling thread for `d` on current_runtime()'s clock.
void sleep_for(Duration d, SourceLocation where = SourceLocation::current());
// Blocks the calling thread until `deadline` on current_runtime()'s clock.
void sleep_until(TimePoint deadline, SourceLocation where = SourceLocation::current());
// Runtime::sleep_for / sleep_until with a context, on current_runtime()'s clock.
[[nodiscard]] std::error_code sleep_for(Duration d, const Context& ctx,
                                        SourceLocation where = SourceLocation::current());
[[nodiscard]] std::error_code sleep_until(TimePoint deadline, const Context& ctx,
                                          SourceLocation where = SourceLocation::current());
// A scheduling point on current_runtime().
void yield(SourceLocation where = SourceLocation::current());

namespace detail {
// Sets the runtime that current_runtime() returns on this OS thread (nullptr: the system
// runtime). Used by a bubble's scheduler when it switches to and from its threads.
void set_current_runtime(Runtime* runtime) noexcept;
}  // namespace detail

}  // namespace bubble

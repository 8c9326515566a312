#pragma once

// The bubble's engine (a simulated Runtime): the Bubble class. Private to the framework; the
// records it keeps are in engine/records.hpp, and its members are defined in the files of
// framework/src/engine/ (docs/design/engine.md lists them).
//
// Structure:
//   - Bubble (a Runtime) owns the threads (BThread records), the run queue, the timer heap, the
//     strategy's scheduler and the recorded schedule.
//   - Every thread, and the scheduler (the stack of run(), "main"), is a Ctx: something to switch
//     to. Threads switch directly to one another when the current one blocks or is preempted
//     (one context switch per hand-off); they switch to main only when timers are due, nothing
//     is runnable, or the run has failed. Timer callbacks run on main.
//   - Each switch saves and restores the C++ runtime's exception globals (caught exceptions,
//     uncaught count), so exceptions in flight on different fibers do not mix, and errno, so each
//     bubble thread has its own as on a real thread; and it announces the switch to
//     AddressSanitizer when it is on.

#include <bubble/bubble.hpp>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <bubble/detail/atomic_hooks.hpp>
#include <bubble/detail/failure_observer.hpp>
#include <bubble/detail/intercept.hpp>
#include <bubble/detail/intrusive_list.hpp>
#include <bubble/detail/wait_queue.hpp>

#include "engine/pick_record.hpp"
#include "engine/races.hpp"
#include "engine/records.hpp"
#include "engine/report/thread_report.hpp"
#include "engine/report/wait_graph.hpp"
#include "engine/run_queue.hpp"
#include "engine/strategies/scheduler.hpp"
#include "engine/timer_heap.hpp"
#include "engine/watchdog.hpp"

// BUBBLE_ENGINE_ASAN: defined when AddressSanitizer instruments this build (GCC or Clang).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUBBLE_ENGINE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define BUBBLE_ENGINE_ASAN 1
#endif

namespace bubble::engine {

// The strategy text that reproduces a run: seeded strategies reproduce themselves; a choices
// strategy (or a replay) is reproduced by the schedule it recorded.
std::string replay_strategy_text(const Strategy& strategy, const Schedule& schedule);
// What replay lines start with: "replay: BUBBLE_STRATEGY=", after the LD_PRELOAD of a preloaded
// interposer (engine/interposer_presence.cpp).
std::string replay_prefix();

// While a failed run is torn down, the failure that started the teardown (for the terminate
// handler; nullptr otherwise).
extern constinit thread_local const std::string* tl_teardown_message;

// Makes bubble's handler std::terminate's (once per process, and again if another replaced it):
// on a bubble thread it abandons the thread (Bubble::terminate_current) instead of ending the
// process; elsewhere it runs the handler that was there before. Called when a run starts.
void install_terminate_handler() noexcept;

// Installs the crash report's signal handlers (once per process) and an alternate signal stack on
// the calling OS thread (once per thread): a crash on a thread that runs a bubble prints the run's
// report before the process ends (engine/crash.cpp). Called when a run starts, and by each OS
// thread of ThreadModel::os_threads.
void install_crash_report() noexcept;

// The failure of the run whose teardown is on this OS thread: tl_teardown_message, set on the
// bubble's own OS thread, or (ThreadModel::os_threads) the failure of the bubble this OS thread
// runs a thread of, if it is being torn down.
const std::string* teardown_message_of_this_thread() noexcept;

}  // namespace bubble::engine

namespace bubble::detail {
// The observer set_failure_observer gave the calling OS thread, and its context.
std::pair<FailureObserver, void*> failure_observer() noexcept;
}  // namespace bubble::detail

namespace bubble::engine {

// The bubble whose run() is on this OS thread's stack; nullptr elsewhere.
extern constinit thread_local Bubble* tl_bubble;

class ThreadHandleImpl;

class Bubble final : public Runtime {
 public:
  explicit Bubble(const Options& options);
  ~Bubble() override;

  RunResult execute(std::function<void(Runtime&)> root);
  void wait(SourceLocation where);

  // --- Runtime ---
  std::string_view name() const noexcept override { return name_; }
  TimePoint now() const noexcept override { return now_; }
  WallTime wall_now() const noexcept override { return WallTime{now_.time_since_epoch()}; }
  std::unique_ptr<ThreadHandle> do_spawn(std::string name, std::function<void()> body,
                                         SourceLocation where) override;
  void prepare(Waiter& waiter) override;
  // The running bubble thread's record; the OS thread's token elsewhere (timer callbacks, other
  // OS threads).
  const void* controlled_thread_token() const noexcept override {
    if (tl_bubble == this && current_ != nullptr) return current_;
    return Runtime::controlled_thread_token();
  }
  ParkResult park(Waiter& waiter, TimePoint deadline, const WaitInfo& what) override;
  void unpark(Waiter& waiter) noexcept override;
  TimerId schedule_at(TimePoint deadline, std::function<void()> callback) override;
  Random* random_source() noexcept;
  // detail::trace_record and detail::trace_now (trace.hpp): markers and lock events.
  std::string_view record_marker(Trace::EventKind kind, std::string_view what, std::uint64_t object,
                                 SourceLocation where, Duration span, bool contended) {
    const std::string_view kept =
        kind == Trace::EventKind::note ? trace_->note(std::string(what)) : trace_->intern(what);
    trace_->add(
        Trace::Event{now_ - start_, current_id(), kind, kept, object, where, span, contended});
    trace_->reserve_spare(live_ + 1);  // As trace_event: room for unpark's wake-ups.
    return kept;
  }
  Duration elapsed() const noexcept { return now_ - start_; }
  // The failure message std::terminate prints during the teardown (see bubble_terminate), on
  // every OS thread of the bubble; nullptr outside the teardown.
  const std::string* teardown_message() const noexcept { return teardown_message_; }
  void set_teardown_message(const std::string* message) noexcept {
    tl_teardown_message = message;
    teardown_message_ = message;
  }
  // detail::intercepted_run_state(): the interposer's state of this run.
  detail::InterceptedRunState* intercept_run_state() noexcept { return &intercept_run_state_; }
  // detail::intercepted_thread_slot(): the running thread's slot, nullptr on main.
  void** intercept_slot() noexcept {
    return current_ != nullptr ? &current_->intercept_slot : nullptr;
  }
  bool cancel_timer(TimerId id) noexcept override;
  void schedule_point(const WaitInfo& what) override;
  // The hooks of atomic operations (detail/atomic_hooks.hpp; engine/atomics.cpp).
  void atomic_point(const void* object, detail::AtomicSource source, detail::AtomicOp op,
                    std::memory_order order, SourceLocation where) noexcept;
  void atomic_cas_outcome(const void* object, bool exchanged, std::memory_order success,
                          std::memory_order failure) noexcept;
  void atomic_order_only(const void* object, detail::AtomicOp op, std::memory_order order) noexcept;
  void atomic_name(const void* object, std::string_view name);
  void atomic_forget(const void* object) noexcept;
  void atomic_park(const void* object, SourceLocation where);
  void atomic_unpark(const void* object, bool all) noexcept;
  // Race detection (detail/race_hooks.hpp; engine/memory.cpp): plain accesses of code compiled
  // with bubble::instrument, fresh memory, and the shadow call stack. The first access starts
  // the detector.
  void memory_access(const void* address, std::size_t size, bool write, const void* pc);
  void memory_fresh(const void* address, std::size_t size);
  void function_entry(const void* pc);
  void function_exit() noexcept;
  std::size_t choose(std::size_t n, const WaitInfo& what) override;
  void yield(SourceLocation where) override;
  std::uint64_t new_object_id() noexcept override { return ++object_ids_; }
  void synchronize(std::uint64_t object, bool release) override;
  void name_object(std::uint64_t id, std::string_view name) override {
    object_names_.insert_or_assign(id, std::string(name));
    if (trace_) trace_->add_object(id, std::string(name));  // Traces show the names too.
  }

  // How many timer slots the storage this OS thread keeps for its next run has room for (0
  // when it keeps none); for tests.
  static std::size_t kept_timer_slots() noexcept;

  // Used by ThreadHandleImpl.
  void join(BThread* t, SourceLocation where);
  void release_handle(BThread* t) noexcept;
  void check_thread(const char* op) const {
    if (tl_bubble != this) [[unlikely]]
      foreign(op);
  }
  // Whether the calling OS thread is running one of this bubble's threads (not its scheduler).
  bool on_bubble_thread() const noexcept { return tl_bubble == this && current_ != nullptr; }
  // std::terminate on the running bubble thread (engine/teardown.cpp): fails the run if it has
  // not failed yet, then abandons the thread. Never returns.
  [[noreturn]] void terminate_current() noexcept;
  // A crash (signal `sig`; 0: AddressSanitizer ended the process) on an OS thread that runs this
  // bubble: writes the report to standard error (engine/crash.cpp).
  void report_crash(int sig, const siginfo_t* info) noexcept;
  // Fails the run with what the running thread did: "thread #2 "name" " + what, in `operation`
  // (static text) at `where`, which becomes its last operation.
  void fail_on_current_thread(const std::string& what, std::string_view operation,
                              SourceLocation where);

 private:
  friend class ThreadHandleImpl;

  [[noreturn]] void foreign(const char* op) const;
  [[noreturn]] void foreign_noexcept(const char* op) const noexcept;
  [[noreturn, gnu::noinline, gnu::cold]] void bad_park(const BThread* t,
                                                       const WaitInfo& what) const;

  // Switching.
  void switch_to(Ctx& to);
  void arrived(fiber&& from) noexcept;
  void run_thread(BThread* t);  // Main: resume t.
  void leave_blocked();         // The current thread is blocked or preempted: run someone else.
  // Runs `next` (taken from the run queue) in place of `self`, the current thread, until a
  // thread switches back to self, which is then the running thread again. Inline, in
  // engine/switch.cpp: the hand-off's own path.
  void run_instead(BThread* self, BThread* next);
  void hand_off(BThread* self, BThread* next);  // run_instead with tracing off.
  [[gnu::noinline]] ParkResult park_general(BThread* t, Waiter& waiter, TimePoint deadline,
                                            const WaitInfo& what);
  fiber thread_main(BThread* t, fiber&& caller);  // The outermost frame of t's fiber.
  void fiber_main(BThread* t);
  void start_fiber(BThread* t);  // ThreadModel::fibers: t's fiber, on a pooled stack.
  // ThreadModel::os_threads: the body of a bubble thread's OS thread, and its part in the bubble.
  static void* os_thread_main(void* record);
  void enter_os_thread(BThread* t);
  void join_exited_os_threads() noexcept;
  Ctx* exit_current(BThread* t);  // Bookkeeping when t's body is done; returns where to go.
  // The teardown of a failed run (engine/teardown.cpp).
  void maybe_unwind(BThread* t);
  [[gnu::noinline]] void unwind_now(BThread* t);
  // Abandons the running thread (`why` is what reports say it is blocked on): switches away and
  // never comes back.
  [[noreturn]] void abandon_current(const char* why) noexcept;
  // Abandons `t`, a thread blocked for good, when the run ends; reclaims its stack.
  void abandon(BThread* t) noexcept;
  void teardown_guard();
  bool resume_one_for_unwinding();
  void unwind_everyone() noexcept;
  // Unwinds a thread may swallow (catch (...) without rethrowing) before it is abandoned.
  static constexpr int kMaxUnwinds = 8;
  static constexpr std::uint64_t kMaxTeardownSteps = 10'000'000;
  // Steps the teardown lets threads run without every one of them blocking before it unwinds
  // them all (a livelock that outlived the failure).
  static constexpr std::uint64_t kTeardownPatience = 100'000;
  // Operations in a row that may not progress after which a thread that spins in the teardown (for
  // a thread that will never come, as in a livelock) is abandoned.
  static constexpr std::uint32_t kTeardownSpins = 10'000;

  // Scheduling.
  std::size_t decide(BThread* first, BThread* last);
  void step(const WaitInfo* what);  // With `what`: the current thread's last point.
  // park's step: t is current_, and blocks on `what` unless the park returns at once. True if
  // the step reached next_step_event_ (step_event ran), which it always does off the fast path.
  bool step_of(BThread* t, const WaitInfo& what);
  [[gnu::noinline]] void schedule_point_slow(BThread* t, const WaitInfo& what, std::uint64_t s);
  // kTracing: whether tracing is on (the fast path of schedule_point knows it is off, so its
  // switch has no run event to record).
  template <bool kTracing>
  [[gnu::noinline]] void preempt(BThread* t, std::size_t i);
  // A scheduling point's decision among [t, queue...] (a strategy that may preempt, a non-empty
  // run queue): t keeps running or is preempted. Out of line, to keep fifo's path short.
  template <bool kTracing>
  [[gnu::noinline]] void decide_at_point(BThread* t);
  void step_event(std::uint64_t s);
  // Fairness and livelocks (Options::fair_bound, livelock_steps). made_progress records that t
  // changed something at step s (an operation of Progress::made, a block, a spawn, an exit), and
  // progress() the same for the running thread, if any, at the current step (a timer fired, a
  // compare-exchange succeeded). polled counts an operation of Progress::none or maybe and says
  // whether fairness or the livelock check has something to do (then poll_slow does it).
  void made_progress(BThread* t, std::uint64_t s) noexcept {
    t->polls = 0;
    last_progress_ = s;
  }
  void progress() noexcept {
    last_progress_ = steps_.load(std::memory_order_relaxed);
    if (current_ != nullptr) current_->polls = 0;
  }
  bool polled(BThread* t, Progress progress, std::uint64_t s) noexcept {
    if (progress == Progress::maybe) last_progress_ = s;
    return (++t->polls & ~BThread::kIdle) >= fair_bound_ || s - last_progress_ >= livelock_steps_;
  }
  // After polled returned true, with the run not failed: fails the run for a livelock, or
  // deschedules t for fairness (returns true if it did: t has been switched out and back).
  bool poll_slow(BThread* t, const WaitInfo& what);
  // t goes behind the other runnable threads (the strategy is told: PCT lowers it); when every
  // runnable thread is idle it waits for the next timer instead, as if blocked.
  void deschedule_for_fairness(BThread* t, const WaitInfo& what);
  void wait_idle_for_next_timer(BThread* t, const WaitInfo& what);
  void fail_livelock(const BThread* t, const WaitInfo& what);
  // unpark's part for a thread with a park deadline or when tracing: cancels the deadline's timer,
  // records the wake-up, then makes t runnable. Out of line, to keep unpark a leaf.
  [[gnu::noinline]] void unpark_slow(BThread* t) noexcept;
  void update_next_step_event();
  // Options::dependencies (engine/dependencies.cpp): the end of t's step at a point of t on
  // `object` (its next step's), the decision just taken (first/last as decide's, idx its pick),
  // a spawn or wake-up by the running thread, and the moments nothing can be reordered across.
  void log_point(BThread* t, std::uint64_t object);
  void log_exit(BThread* t);
  void log_choice(const BThread* first, const BThread* last, std::size_t idx);
  void log_edge(RunDependencies::EventKind kind, const BThread* to) noexcept;
  void log_barrier();
  // The last step logged counts as one on every object (object 0): it ended where the engine
  // looked at every thread, or did what every thread may see. So do a step that ends at a yield or
  // where fairness deschedules its thread (which runs next depends on who else can run), and a
  // step whose end finds timers due while threads can run (it made one due at once, with a zero
  // timeout or a deadline already passed; they fire at the end of that step, which then touched
  // whatever their callbacks touch).
  void log_last_step_touches_all() noexcept;
  bool timer_due() const noexcept { return !heap_.empty() && heap_.top().deadline <= now_; }
  void make_runnable(BThread* t) noexcept;
  static constexpr std::size_t kTouchAheadFrom = 256;
  static constexpr std::size_t kTouchBatchFrom = 2048;
  static constexpr std::size_t kTouchBatch = 8;
  void touch_next_stack() noexcept;
  // touch_next_stack's loads, out of line: of the front thread's stack, or with more than
  // kTouchBatchFrom live threads of the first kTouchBatch threads' stacks.
  [[gnu::noinline]] void touch_stacks_ahead() noexcept;

  // Timers.
  TimerId add_timer(TimePoint deadline, BThread* thread, std::function<void()> callback);
  void free_slot(std::uint32_t slot) noexcept;
  void fire_due_timers();
  // Storage kept from run to run: the timer heap, slots, free list and due list (all empty)
  // that the last run on this OS thread left. A run that grows them afresh faults in their
  // memory again (glibc returns large freed blocks to the system), which at 10,000 sleeping
  // threads cost a fifth of the run on a machine with slow page faults. The constructor borrows
  // them; the destructor gives them back, or, when they hold more than 1,024 slots and the run
  // used less than a quarter of them, frees them instead (so a big run's memory is returned after
  // the next, smaller run), as the recorded picks are kept (engine/pick_record.hpp). Defined with
  // the timers.
  void borrow_timer_storage() noexcept;
  void keep_timer_storage() noexcept;
  void fire(const TimerEntry& e);
  bool pop_stale() noexcept;

  // Race detection (engine/memory.cpp). races_ is null until the first plain access of code
  // compiled with bubble::instrument; every hook of the engine tests it first.
  RaceDetector& race_detector();
  std::uint32_t race_thread() const noexcept {
    return current_ != nullptr ? static_cast<std::uint32_t>(current_->id) : 0;
  }
  void report_race(const Race& race);
  std::string race_access_lines(const Access& access, const char* which);
  std::string describe_address(const void* address) const;

  // Failures. `details`, if any, follows the failure's first line (the message and when).
  void fail(const std::string& message, bool deadlock, const std::string& details = {});
  void fail_with_exception(BThread* t, std::exception_ptr e);
  std::string thread_report() const;
  std::vector<detail::ReportThread> report_threads() const;
  std::string replay_line() const;
  std::string when() const;
  void begin_unwind();
  void scheduler_loop();
  void destroy_record(BThread* t) noexcept;

  [[gnu::always_inline]] void trace(Trace::EventKind kind, std::uint64_t thread,
                                    std::string_view what, std::uint64_t object,
                                    SourceLocation where) {
    if (tracing_) [[unlikely]]
      trace_event(kind, thread, what, object, where);
  }
  [[gnu::noinline]] void trace_event(Trace::EventKind kind, std::uint64_t thread,
                                     std::string_view what, std::uint64_t object,
                                     SourceLocation where) {
    trace_->add(Trace::Event{now_ - start_, thread, kind, trace_->intern(what), object, where});
    // Room for the wake-ups unpark records before the next event recorded here: at most one per
    // blocked thread, since a thread is woken once per block and blocking records an event here.
    trace_->reserve_spare(live_ + 1);
  }
  // unpark's event: noexcept, so it only uses the room trace_event reserved (no allocation).
  [[gnu::noinline]] void trace_wake(const BThread* t) noexcept {
    trace_->add(Trace::Event{now_ - start_, t->id, Trace::EventKind::wake, {}, current_id(), {}});
  }
  std::uint64_t current_id() const noexcept { return current_ != nullptr ? current_->id : 0; }

  static std::string describe_for_watchdog(const void* self);

  const Options options_;
  std::string name_;
  Strategy strategy_;
  const TimePoint start_;
  TimePoint now_;
  std::uint64_t max_steps_;

  // Threads.
  Ctx main_;
  Ctx* running_ = &main_;
  Ctx* from_ = nullptr;         // The context that switched to the one now running (null: exited).
  BThread* current_ = nullptr;  // The running bubble thread; nullptr on main.
  using ThreadList = detail::IntrusiveList<BThread, &BThread::list_hook>;
  ThreadList live_threads_;  // Threads that have not exited, in creation order.
  ThreadList dead_threads_;  // Exited threads whose handles still exist.
  std::size_t live_ = 0;
  std::uint64_t thread_ids_ = 0;
  std::uint64_t object_ids_ = 0;
  // The names given to objects (Runtime::new_object_id(name)), for reports.
  std::unordered_map<std::uint64_t, std::string> object_names_;
  // The atomics the run has seen (bubble::Atomic, instrumented code), by address: their object
  // ids and the threads blocked in their wait().
  struct AtomicObject {
    std::uint64_t id = 0;
    detail::WaitQueue waiters;
  };
  std::unordered_map<const void*, AtomicObject> atomics_;
  const void* last_atomic_address_ = nullptr;  // The last atomic_object() found, and its entry.
  AtomicObject* last_atomic_ = nullptr;
  AtomicObject& atomic_object(const void* object);
  RunQueue<BThread> queue_;
  // How many more picks take threads whose stacks touch_stacks_ahead has loaded.
  std::size_t touched_ahead_ = 0;
  EhGlobals* eh_ = nullptr;
  int* errno_ = nullptr;  // The OS thread's errno, which every fiber on it shares.
  bool root_returned_ = false;
  Waiter* waiter_ = nullptr;  // bubble::wait() in progress.
  BThread* waiting_thread_ = nullptr;

  // Timers.
  TimerHeap heap_;
  std::vector<TimerSlot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t timer_seq_ = 0;
  std::uint64_t timers_fired_ = 0;
  std::vector<TimerEntry> due_;
  std::size_t timer_slots_used_ = 0;  // slots_.size() when the run ended (keep_timer_storage).

  // Strategy state and recording.
  std::unique_ptr<Scheduler> scheduler_;  // The strategy's decisions.
  // Scheduler::uniform_source() of scheduler_: when set, decide() and choose() draw from it
  // directly instead of asking the scheduler (the same draws, without the virtual call).
  Rng* uniform_ = nullptr;
  // bubble::random(): the key every stream is derived from (Options::random_seed), the threads
  // spawned outside any thread (the root, then threads spawned by timer callbacks), and the
  // stream of timer callbacks, made on first use.
  std::uint64_t random_key_ = 0;
  std::uint64_t callback_children_ = 0;
  std::optional<Random> callback_random_;
  PickRecord picks_;  // The schedule recorded.
  // Fairness (Options::fair_bound; no bound: BThread::kIdle, more than a poll count can reach) and
  // livelocks (Options::livelock_steps; none: the largest value), and the step of the last
  // progress.
  std::uint32_t fair_bound_ = 0;
  std::uint64_t livelock_steps_ = 0;
  std::uint64_t last_progress_ = 0;
  std::atomic<std::uint64_t> steps_{0};
  // The next step at which step_event() has work; 0 while off_fast_path_, so that the fast
  // paths test one condition for both (step_event at a step with no work does nothing).
  std::uint64_t next_step_event_ = 0;

  // Failure and teardown.
  bool failed_ = false;
  bool unwinding_ = false;
  bool deadlock_ = false;
  std::string failure_message_;
  std::exception_ptr failure_exception_;
  // detail::set_failure_observer's observer when the run started, called by fail().
  detail::FailureObserver failure_observer_ = nullptr;
  void* failure_observer_context_ = nullptr;
  std::size_t abandoned_ = 0;
  std::uint64_t teardown_steps_ = 0;
  std::uint64_t steps_since_resume_ = 0;  // Teardown steps since a thread was woken to unwind.
  bool unwind_all_ = false;               // Every thread's blocking calls throw Unwind.
  const std::string* teardown_message_ = nullptr;  // See teardown_message().

  std::unique_ptr<RaceDetector> races_;
  // A timer callback is running on main: code there is the program's (race detection checks it as
  // thread 0); the rest of main's code is the engine's own.
  bool in_timer_callback_ = false;
  // Whether the running code is the program's: a bubble thread's, or a timer callback's. The
  // engine's own code may run instrumented copies of the standard library's templates (the linker
  // keeps one copy of each), whose accesses are not the program's.
  bool program_running() const noexcept { return current_ != nullptr || in_timer_callback_; }

  std::shared_ptr<Trace> trace_;
  bool tracing_ = false;
  bool capture_stacks_ = false;  // Options::symbolize_stacks is set.
  bool fifo_ = false;            // The strategy is fifo (a fast path at scheduling points).
  // tracing_ || capture_stacks_ || failed_, kept up to date where those are set: while it is
  // set, next_step_event_ is 0, which sends the fast paths of park and schedule_point to their
  // general paths, for all three at once.
  bool off_fast_path_ = false;
  RunDependencies* deps_ = nullptr;  // Options::dependencies.
  // The object log_point gives the next step instead of its point's WaitInfo::object_id (spawn
  // and join name a thread there, for reports), or 0.
  std::uint64_t next_point_object_ = 0;
  // Whether the step after the next point only reads its object (atomic_point of a load).
  bool next_point_reads_ = false;
  bool os_threads_ = false;  // Options::thread_model is os_threads.
  // ThreadModel::os_threads: the OS threads of exited bubble threads, not yet joined.
  std::vector<pthread_t> exited_os_threads_;
  // The interposer's state of the run (Options::intercept_std), destroyed when the run ends.
  detail::InterceptedRunState intercept_run_state_;
  detail::WatchdogEntry watchdog_;
  Runtime* previous_runtime_ = nullptr;
};

class ThreadHandleImpl final : public ThreadHandle {
 public:
  explicit ThreadHandleImpl(BThread* t) noexcept : t_(t) {}
  ~ThreadHandleImpl() override {
    if (t_->bubble != nullptr) {
      t_->bubble->release_handle(t_);
    } else {
      delete t_;  // The run has ended; the thread has exited.
    }
  }
  void join(SourceLocation where) override {
    if (t_->bubble == nullptr) {
      if (t_->joined) throw std::logic_error("bubble: thread \"" + t_->name + "\" joined twice");
      t_->joined = true;
      return;
    }
    t_->bubble->join(t_, where);
  }
  const std::string& name() const noexcept override { return t_->name; }

 private:
  BThread* t_;
};

// --- The small members of the hot path, inline in every translation unit --------------------

// Called by the blocking calls (park, yield) of a thread: throws Unwind if the run is being torn
// down. Never while another exception is in flight on this fiber (a destructor run by the
// unwinding itself may block: it then blocks normally), and never in join() (joining a thread
// that is being unwound is how destructors of thread owners finish). A thread that swallowed
// Unwind (catch (...) without rethrow) gets another one at its next blocking call; one that keeps
// swallowing it is abandoned.
inline void Bubble::maybe_unwind(BThread* t) {
  if (t->unwind) [[unlikely]]
    unwind_now(t);
}

inline void Bubble::step(const WaitInfo* what) {
  const std::uint64_t s = steps_.load(std::memory_order_relaxed) + 1;
  steps_.store(s, std::memory_order_relaxed);
  if (current_ != nullptr && what != nullptr) {
    current_->last_kind = what->kind;
    current_->last_where = what->where;
  }
  if (s >= next_step_event_) [[unlikely]]
    step_event(s);
}

inline bool Bubble::step_of(BThread* t, const WaitInfo& what) {
  const std::uint64_t s = steps_.load(std::memory_order_relaxed) + 1;
  steps_.store(s, std::memory_order_relaxed);
  t->what = &what;
  t->last_kind = what.kind;
  t->last_where = what.where;
  if (s >= next_step_event_) [[unlikely]] {
    step_event(s);
    return true;
  }
  return false;
}

// Called when a thread has been picked and taken from the run queue: loads the stack lines that
// resuming the thread now at the front of the queue (under fifo, the next one to run) reads
// first, its saved registers and the frames of its park (from a line below switched_out_at to four
// above), so that with many threads their TLB and cache misses are taken before the picked thread
// runs rather than when the front one is resumed. Only with more than kTouchAheadFrom live
// threads: with fewer, their stacks are within the TLB's reach and the loads would be pure cost.
// With more than kTouchBatchFrom, it loads the stacks of the first kTouchBatch threads of the
// queue at once, every kTouchBatch picks (touched_ahead_ counts the picks left), so that their
// misses overlap one another instead of stalling the processor once per thread. Every pick that
// can take from a queue of many threads calls it (the scheduler loop, leave_blocked, a thread's
// exit), so that the count stays in step with the picks.
// Real loads, not prefetch instructions: a prefetch that misses the TLB is dropped, a load is not
// (scale_bench's BM_SleepingThreads/10000 and /100000 back the loads, the batches, the range and
// the thresholds). Not under AddressSanitizer, which would report loads from the redzones in the
// other thread's frames.
inline void Bubble::touch_next_stack() noexcept {
#ifndef BUBBLE_ENGINE_ASAN
  if (live_ <= kTouchAheadFrom || queue_.empty()) return;
  if (touched_ahead_ > 0) {
    --touched_ahead_;
    return;
  }
  touch_stacks_ahead();
#endif
}

inline void Bubble::make_runnable(BThread* t) noexcept {
  t->state = ThreadState::runnable;
  queue_.push_back(t);
}

}  // namespace bubble::engine

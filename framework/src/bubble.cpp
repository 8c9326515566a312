// The bubble: a simulated Runtime. Threads are Boost.Context fibers on the OS thread that called
// run(); a scheduler picks which one runs at every scheduling point; time is virtual.
//
// Structure:
//   - Bubble (a Runtime) owns the threads (BThread records), the run queue, the timer heap, the
//     strategy's state and the recorded schedule.
//   - Every thread, and the scheduler (the stack of run(), "main"), is a Ctx: something to switch
//     to. Threads switch directly to one another when the current one blocks or is preempted
//     (one context switch per hand-off); they switch to main only when timers are due, nothing
//     is runnable, or the run has failed. Timer callbacks run on main.
//   - Each switch saves and restores the C++ runtime's exception globals (caught exceptions,
//     uncaught count), so exceptions in flight on different fibers do not mix, and announces the
//     switch to AddressSanitizer when it is on.

#include <bubble/bubble.hpp>

#include <cxxabi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include <boost/context/fiber.hpp>

#include <bubble/detail/intercept.hpp>
#include <bubble/detail/wait_queue.hpp>

#include "bubble_os_thread.hpp"
#include "bubble_random.hpp"
#include "bubble_report.hpp"
#include "bubble_stack.hpp"
#include "bubble_stacks.hpp"
#include "bubble_waits.hpp"
#include "bubble_watchdog.hpp"
#include "demangle.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUBBLE_ENGINE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define BUBBLE_ENGINE_ASAN 1
#endif
#ifdef BUBBLE_ENGINE_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace bubble {

// --- RunFailure / RunResult -------------------------------------------------------------------

RunFailure::RunFailure(const std::string& message, Schedule schedule, Strategy strategy,
                       std::shared_ptr<const Trace> trace)
    : std::runtime_error(message),
      schedule_(std::move(schedule)),
      strategy_(std::move(strategy)),
      trace_(std::move(trace)) {}

const Trace& RunFailure::trace() const noexcept {
  static const Trace kEmpty;
  return trace_ ? *trace_ : kEmpty;
}

void RunFailure::rethrow_original() const {
  // bubble::run throws a RunFailure that carries the thread's exception with
  // std::throw_with_nested, which makes the thrown object derive from std::nested_exception too.
  const auto* nested = dynamic_cast<const std::nested_exception*>(this);
  if (nested != nullptr && nested->nested_ptr() != nullptr) nested->rethrow_nested();
}

namespace {

// The strategy text that reproduces a run: seeded strategies reproduce themselves; a choices
// strategy (or a replay) is reproduced by the schedule it recorded.
std::string replay_strategy_text(const Strategy& strategy, const Schedule& schedule) {
  switch (strategy.kind()) {
    case Strategy::Kind::fifo:
    case Strategy::Kind::random:
    case Strategy::Kind::pct:
      return strategy.to_string();
    case Strategy::Kind::choices:
      return schedule.picks.empty() ? std::string("fifo") : "choices:" + schedule.to_string();
  }
  return strategy.to_string();
}

}  // namespace

std::string RunResult::replay_line() const {
  return "replay: BUBBLE_STRATEGY=" + replay_strategy_text(strategy, schedule);
}

namespace {

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
};

EhGlobals* eh_globals() noexcept {
  return reinterpret_cast<EhGlobals*>(abi::__cxa_get_globals());
}

using detail::location_text;

// The scheduler's random source: bubble::Random (xoshiro256** seeded with splitmix64, the same
// sequence on every platform), plus the cheap, slightly biased draw the picks use.
class Rng {
 public:
  void seed(std::uint64_t seed) noexcept { random_ = Random(seed); }
  std::uint64_t next() noexcept { return random_(); }
  // Uniform in [0, n) for n < 2^32 (Lemire's multiply-shift; the tiny bias is irrelevant here).
  std::uint32_t below(std::uint64_t n) noexcept {
    return static_cast<std::uint32_t>(((next() >> 32) * (n & 0xffffffffULL)) >> 32);
  }

 private:
  Random random_{0};
};

class Bubble;

// Something the engine can switch to: a bubble thread or the scheduler (main).
struct Ctx {
  fiber ctx;
  EhGlobals eh;
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

const char* state_name(ThreadState s) {
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
  WaitInfo what;                // While blocked: what on. Otherwise: the last scheduling point.
  Waiter* waiter = nullptr;     // The waiter it is parked on.
  TimerId park_timer = 0;       // The timer of its park deadline, if any.
  bool unwind = false;          // Torn down: its blocking calls throw Unwind.
  bool unwind_resumed = false;  // The teardown woke it to unwind it (it does so once).
  bool in_join = false;         // Parked in join(): never unwound from there.
  int unwinds_thrown = 0;
  bool has_handle = true;  // A ThreadHandle refers to this record.
  bool joined = false;
  std::uint64_t priority = 0;    // PCT priority (higher runs first).
  detail::WaitQueue joiners;     // Threads blocked in join().
  BThread* prev_live = nullptr;  // The list of threads that have not exited, in creation order.
  BThread* next_live = nullptr;
  // bubble::random(): the key of this thread's stream (from its parent's key and its number among
  // the parent's children), how many threads it has spawned, and the stream, made on first use.
  std::uint64_t random_key = 0;
  std::uint64_t children = 0;
  std::optional<Random> random;
  // With Options::symbolize_stacks: where it last blocked, and where it was spawned.
  std::unique_ptr<detail::CapturedStack> blocked_stack;
  std::unique_ptr<detail::CapturedStack> spawn_stack;
  void* intercept_slot = nullptr;  // detail::intercepted_thread_slot(): the interposer's record.
};

// A ring buffer of runnable threads; removal at any index (strategies pick from the middle).
// A thread is in it at most once, so spawn reserves room for every live thread and pushing never
// allocates: Runtime::unpark, which is noexcept, pushes.
class RunQueue {
 public:
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  BThread* operator[](std::size_t i) const noexcept { return buf_[(head_ + i) & mask_]; }
  // Makes room for `n` threads (may throw std::bad_alloc).
  void reserve(std::size_t n) {
    if (n > buf_.size()) [[unlikely]]
      grow(n);
  }
  void push_back(BThread* t) noexcept {
    if (size_ == buf_.size()) [[unlikely]]
      overflow();
    buf_[(head_ + size_) & mask_] = t;
    ++size_;
  }
  void push_front(BThread* t) noexcept {
    if (size_ == buf_.size()) [[unlikely]]
      overflow();
    head_ = (head_ - 1) & mask_;
    buf_[head_] = t;
    ++size_;
  }
  BThread* take(std::size_t i) noexcept {
    BThread* t = (*this)[i];
    if (i == 0) {  // The common case (fifo, and every pick of 0): pop the front.
      head_ = (head_ + 1) & mask_;
    } else if (i < size_ / 2) {
      for (std::size_t j = i; j > 0; --j) buf_[(head_ + j) & mask_] = buf_[(head_ + j - 1) & mask_];
      head_ = (head_ + 1) & mask_;
    } else {
      for (std::size_t j = i; j + 1 < size_; ++j) {
        buf_[(head_ + j) & mask_] = buf_[(head_ + j + 1) & mask_];
      }
    }
    --size_;
    return t;
  }
  void clear() noexcept { size_ = head_ = 0; }

 private:
  [[gnu::noinline]] void grow(std::size_t n) {
    std::size_t size = buf_.empty() ? 16 : buf_.size();
    while (size < n) size *= 2;
    std::vector<BThread*> bigger(size);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    buf_ = std::move(bigger);
    head_ = 0;
    mask_ = buf_.size() - 1;
  }
  [[noreturn, gnu::cold]] static void overflow() noexcept {
    std::fprintf(stderr, "bubble: internal error: the run queue holds more threads than exist\n");
    std::abort();
  }
  std::vector<BThread*> buf_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
};

// A pending timer in the heap: its deadline and key = creation sequence << 24 | slot. Ordering by
// (deadline, key) is (deadline, creation order); the key is also the TimerId.
struct TimerEntry {
  TimePoint deadline;
  std::uint64_t key;
  std::uint32_t slot() const noexcept { return static_cast<std::uint32_t>(key & kSlotMask); }
  std::uint64_t seq() const noexcept { return key >> kSlotBits; }
  static constexpr int kSlotBits = 24;
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
};

// A 4-ary min-heap of timers: half the depth of a binary heap, and the children of a node share
// cache lines, which matters with a million pending timers.
class TimerHeap {
 public:
  bool empty() const noexcept { return v_.empty(); }
  const TimerEntry& top() const noexcept { return v_.front(); }
  void clear() noexcept { v_.clear(); }
  void push(const TimerEntry& e) {
    v_.push_back(e);
    std::size_t i = v_.size() - 1;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!less(e, v_[parent])) break;
      v_[i] = v_[parent];
      i = parent;
    }
    v_[i] = e;
  }
  void pop() noexcept {
    const TimerEntry last = v_.back();
    v_.pop_back();
    const std::size_t n = v_.size();
    if (n == 0) return;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = std::min(first + 4, n);
      for (std::size_t c = first + 1; c < end; ++c) {
        if (less(v_[c], v_[best])) best = c;
      }
      if (!less(v_[best], last)) break;
      v_[i] = v_[best];
      i = best;
    }
    v_[i] = last;
  }

 private:
  static bool less(const TimerEntry& a, const TimerEntry& b) noexcept {
    return a.deadline != b.deadline ? a.deadline < b.deadline : a.key < b.key;
  }
  std::vector<TimerEntry> v_;
};

struct TimerSlot {
  std::uint64_t seq = 0;  // The creation sequence of the timer in the slot.
  bool active = false;
  BThread* thread = nullptr;  // A park deadline; otherwise `callback`.
  std::function<void()> callback;
};

// While a failed run is torn down, an Unwind that reaches a noexcept function (a destructor blocked
// on something no thread can signal any more) terminates the process: say why, and show the
// failure that started the teardown, before the previous handler runs.
thread_local const std::string* tl_teardown_message = nullptr;
std::terminate_handler g_previous_terminate = nullptr;

// The failure of the run whose teardown is on this OS thread: tl_teardown_message, set on the
// bubble's own OS thread, or (ThreadModel::os_threads) the failure of the bubble this OS thread
// runs a thread of, if it is being torn down. Defined after Bubble.
const std::string* teardown_message_of_this_thread() noexcept;

[[noreturn]] void teardown_terminate() {
  if (const std::string* message = teardown_message_of_this_thread(); message != nullptr) {
    std::fprintf(
        stderr,
        "bubble: std::terminate was called while unwinding the threads of a failed run "
        "(bubble::Unwind probably reached a noexcept function: a destructor blocked on something "
        "no thread can signal). "
        "The run had failed with:\n%s\n",
        message->c_str());
    std::fflush(stderr);
  }
  if (g_previous_terminate != nullptr) g_previous_terminate();
  std::abort();
}

// The bubble whose run() is on this OS thread's stack; nullptr elsewhere.
thread_local Bubble* tl_bubble = nullptr;

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
  // The failure message std::terminate prints during the teardown (see teardown_terminate), on
  // every OS thread of the bubble; nullptr outside the teardown.
  const std::string* teardown_message() const noexcept { return teardown_message_; }
  void set_teardown_message(const std::string* message) noexcept {
    tl_teardown_message = message;
    teardown_message_ = message;
  }
  // detail::intercepted_thread_slot(): the running thread's slot, nullptr on main.
  void** intercept_slot() noexcept {
    return current_ != nullptr ? &current_->intercept_slot : nullptr;
  }
  bool cancel_timer(TimerId id) noexcept override;
  void schedule_point(const WaitInfo& what) override;
  std::size_t choose(std::size_t n, const WaitInfo& what) override;
  void yield(SourceLocation where) override;
  std::uint64_t new_object_id() noexcept override { return ++object_ids_; }
  void name_object(std::uint64_t id, std::string_view name) override {
    object_names_.insert_or_assign(id, std::string(name));
    if (trace_) trace_->add_object(id, std::string(name));  // Traces show the names too.
  }

  // Used by ThreadHandleImpl.
  void join(BThread* t, SourceLocation where);
  void release_handle(BThread* t) noexcept;
  void check_thread(const char* op) const {
    if (tl_bubble != this) [[unlikely]]
      foreign(op);
  }

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
  void fiber_main(BThread* t);
  void start_fiber(BThread* t);
  static void* os_thread_main(
      void* record);  // ThreadModel::os_threads: a bubble thread's OS thread.
  void enter_os_thread(BThread* t);
  void join_exited_os_threads() noexcept;
  Ctx* exit_current(BThread* t);  // Bookkeeping when t's body is done; returns where to go.
  void maybe_unwind(BThread* t);
  [[gnu::noinline]] void unwind_now(BThread* t);
  [[noreturn]] void abandon_current();
  void teardown_guard();
  bool resume_one_for_unwinding();
  void unwind_everyone() noexcept;
  static constexpr int kMaxUnwinds = 1000;
  static constexpr std::uint64_t kMaxTeardownSteps = 10'000'000;
  // Steps the teardown lets threads run without every one of them blocking before it unwinds
  // them all (a livelock that outlived the failure).
  static constexpr std::uint64_t kTeardownPatience = 100'000;

  // Scheduling.
  std::size_t decide(BThread* first, BThread* last);
  std::uint32_t pick(std::size_t n, BThread* first, BThread* last);
  std::uint32_t pick_other(std::size_t n);
  void record(std::uint32_t idx);
  void record_pick(std::uint32_t idx);
  void step(const WaitInfo* what);
  [[gnu::noinline]] void schedule_point_slow(BThread* t, const WaitInfo& what, std::uint64_t s);
  [[gnu::noinline]] void preempt(BThread* t, std::size_t i);
  void step_event(std::uint64_t s);
  void update_next_step_event();
  bool timer_due() const noexcept { return !heap_.empty() && heap_.top().deadline <= now_; }
  void make_runnable(BThread* t) noexcept;

  // Timers.
  TimerId add_timer(TimePoint deadline, BThread* thread, std::function<void()> callback);
  void free_slot(std::uint32_t slot) noexcept;
  void fire_due_timers();
  void fire(const TimerEntry& e);
  bool pop_stale() noexcept;

  // Failures.
  void fail(std::string message, bool deadlock);
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
  BThread* live_head_ = nullptr;
  BThread* live_tail_ = nullptr;
  BThread* dead_head_ = nullptr;  // Exited threads whose handles still exist.
  std::size_t live_ = 0;
  std::uint64_t thread_ids_ = 0;
  std::uint64_t object_ids_ = 0;
  // The names given to objects (Runtime::new_object_id(name)), for reports.
  std::unordered_map<std::uint64_t, std::string> object_names_;
  RunQueue queue_;
  EhGlobals* eh_ = nullptr;
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

  // Strategy state and recording.
  Rng rng_;
  // bubble::random(): the key every stream is derived from (Options::random_seed), the threads
  // spawned outside any thread (the root, then threads spawned by timer callbacks), and the
  // stream of timer callbacks, made on first use.
  std::uint64_t random_key_ = 0;
  std::uint64_t callback_children_ = 0;
  std::optional<Random> callback_random_;
  std::size_t choice_pos_ = 0;
  struct ChangePoint {
    std::uint64_t step;
    std::uint64_t priority;
  };
  std::vector<ChangePoint> change_points_;
  std::size_t next_change_ = 0;
  Schedule schedule_;
  std::uint64_t zeros_pending_ = 0;
  std::atomic<std::uint64_t> steps_{0};
  std::uint64_t next_step_event_ = 0;  // The next step at which step_event() has work.

  // Failure and teardown.
  bool failed_ = false;
  bool unwinding_ = false;
  bool deadlock_ = false;
  std::string failure_message_;
  std::exception_ptr failure_exception_;
  std::size_t abandoned_ = 0;
  std::uint64_t teardown_steps_ = 0;
  std::uint64_t steps_since_resume_ = 0;  // Teardown steps since a thread was woken to unwind.
  bool unwind_all_ = false;               // Every thread's blocking calls throw Unwind.
  const std::string* teardown_message_ = nullptr;  // See teardown_message().

  std::shared_ptr<Trace> trace_;
  bool tracing_ = false;
  bool capture_stacks_ = false;  // Options::symbolize_stacks is set.
  bool fifo_ = false;            // The strategy is fifo (a fast path at scheduling points).
  bool os_threads_ = false;      // Options::thread_model is os_threads.
  // ThreadModel::os_threads: the OS threads of exited bubble threads, not yet joined.
  std::vector<pthread_t> exited_os_threads_;
  detail::WatchdogEntry watchdog_;
  Runtime* previous_runtime_ = nullptr;
};

const std::string* teardown_message_of_this_thread() noexcept {
  if (tl_teardown_message != nullptr) return tl_teardown_message;
  return tl_bubble != nullptr ? tl_bubble->teardown_message() : nullptr;
}

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

// --- Construction and the run -------------------------------------------------------------

Bubble::Bubble(const Options& options)
    : Runtime(/*controlled=*/true),
      options_(options),
      strategy_(options.replay ? options.replay->to_strategy() : options.strategy),
      start_(TimePoint{options.start.time_since_epoch()}),
      now_(start_),
      max_steps_(options.max_steps) {
  // The default name is the same for every run: failure messages must not depend on how many
  // bubbles the process ran before (a replay prints exactly what the original printed).
  name_ = options.name.empty() ? std::string("bubble") : options.name;
  if (options.stack_size == 0) {
    throw std::invalid_argument("bubble::run: Options::stack_size must be > 0, got 0");
  }
  if (options.max_virtual_time < Duration::zero()) {
    throw std::invalid_argument("bubble::run: Options::max_virtual_time must be >= 0, got " +
                                format_duration(options.max_virtual_time));
  }
  rng_.seed(strategy_.seed());
  random_key_ = detail::derive_random_key(options.random_seed, 0);
  fifo_ = strategy_.kind() == Strategy::Kind::fifo;
  if (strategy_.kind() == Strategy::Kind::pct) {
    // depth - 1 change points, uniformly in [1, steps]; the i-th drawn lowers the running
    // thread's priority to depth - i, below every initial priority (>= depth).
    const auto depth = static_cast<std::uint64_t>(strategy_.depth());
    for (std::uint64_t i = 1; i < depth; ++i) {
      change_points_.push_back({1 + rng_.next() % strategy_.steps(), depth - i});
    }
    std::stable_sort(change_points_.begin(), change_points_.end(),
                     [](const ChangePoint& a, const ChangePoint& b) { return a.step < b.step; });
  }
  if (options.trace) {
    trace_ = std::make_shared<Trace>();
    trace_->set_level(options.trace_level);
    tracing_ = true;
  }
  capture_stacks_ = static_cast<bool>(options.symbolize_stacks);
  os_threads_ = options.thread_model == ThreadModel::os_threads;
  if (os_threads_) main_.baton = std::make_unique<detail::Baton>();
  update_next_step_event();
}

Bubble::~Bubble() {
  // Timer callbacks may own objects whose destructors call back into the runtime: move them out
  // first.
  std::vector<TimerSlot> slots = std::move(slots_);
  slots_.clear();
  heap_.clear();
  slots.clear();
}

void Bubble::foreign(const char* op) const {
  throw std::logic_error(std::string("bubble::Runtime::") + op + ": " + name_ +
                         " called from an OS thread that is not running it (a bubble's objects " +
                         "may be used only by its own threads)");
}

void Bubble::foreign_noexcept(const char* op) const noexcept {
  std::fprintf(stderr,
               "bubble::Runtime::%s: %s called from an OS thread that is not running it (a "
               "bubble's objects may be used only by its own threads)\n",
               op, name_.c_str());
  std::abort();
}

RunResult Bubble::execute(std::function<void(Runtime&)> root) {
  eh_ = eh_globals();
  previous_runtime_ = &current_runtime();
  tl_bubble = this;
  detail::set_current_runtime(this);
  detail::tl_tracing = tracing_;
  struct Restore {
    Bubble* b;
    ~Restore() {
      tl_bubble = nullptr;
      detail::tl_tracing = false;
      detail::tl_intercepting_runtime = nullptr;
      detail::set_current_runtime(b->previous_runtime_ == &system_runtime() ? nullptr
                                                                            : b->previous_runtime_);
      if (b->options_.watchdog.count() > 0) detail::watchdog_unregister(b->watchdog_);
      detail::PooledStack::run_ended();  // Keeps the stacks this run needed, returns the rest.
    }
  } restore{this};
  if (options_.watchdog.count() > 0) {
    watchdog_.progress = &steps_;
    watchdog_.limit = options_.watchdog;
    watchdog_.describe = &Bubble::describe_for_watchdog;
    watchdog_.context = this;
    detail::watchdog_register(watchdog_);
  }
  // After the watchdog's registration, which reads the real clock on this OS thread.
  if (options_.intercept_std) detail::tl_intercepting_runtime = this;

  auto handle = spawn(
      "root",
      [this, root = std::move(root)] {
        root(*this);
        root_returned_ = true;
      },
      SourceLocation{});  // No location: the trace does not depend on who called run().
  scheduler_loop();
  set_teardown_message(nullptr);
  join_exited_os_threads();  // Their thread_local destructors have run when this returns.

  // Every thread has exited (or was abandoned). Timer callbacks may own objects whose
  // destructors call back into the runtime: destroy them while this OS thread still runs it.
  while (!slots_.empty()) {
    std::vector<TimerSlot> slots = std::move(slots_);
    slots_.clear();
    free_slots_.clear();
    heap_.clear();
  }
  handle.reset();
  // Records of exited threads whose handles outlive the run no longer refer to the bubble.
  for (BThread* t = dead_head_; t != nullptr; t = t->next_live) t->bubble = nullptr;
  dead_head_ = nullptr;

  if (failed_) {
    schedule_.picks.shrink_to_fit();
    std::shared_ptr<const Trace> trace = trace_;
    if (failure_exception_) {
      try {
        std::rethrow_exception(failure_exception_);
      } catch (const std::exception&) {
        if (options_.rethrow_original) {
          std::fprintf(stderr, "%s\n", failure_message_.c_str());
          std::fflush(stderr);
          throw;
        }
        std::throw_with_nested(RunFailure(failure_message_, schedule_, strategy_, trace));
      }
      // Not derived from std::exception: rethrown unchanged (documented in bubble.hpp).
    }
    if (deadlock_) throw DeadlockError(failure_message_, schedule_, strategy_, trace);
    throw RunFailure(failure_message_, schedule_, strategy_, trace);
  }
  RunResult result;
  result.schedule = std::move(schedule_);
  result.strategy = strategy_;
  result.steps = steps_.load(std::memory_order_relaxed);
  result.elapsed = now_ - start_;
  result.threads = thread_ids_;
  result.timers_fired = timers_fired_;
  if (trace_) result.trace = std::move(*trace_);
  return result;
}

// The scheduler: runs threads, fires timers, advances time, detects the end and deadlocks.
void Bubble::scheduler_loop() {
  for (;;) {
    if (!exited_os_threads_.empty()) [[unlikely]]
      join_exited_os_threads();
    if (failed_ && !unwinding_) begin_unwind();
    if (!unwinding_ && timer_due()) fire_due_timers();
    if (!queue_.empty()) {
      const std::size_t idx = decide(nullptr, nullptr);
      run_thread(queue_.take(idx));
      continue;
    }
    if (live_ == 0) break;
    if (unwinding_) {
      if (resume_one_for_unwinding()) continue;
      set_teardown_message(nullptr);
      // Threads blocked where they cannot be unwound (in join, or in a destructor run by an
      // exception) and that nothing can wake: abandon them (their stacks and what they own leak;
      // the failure message says so).
      for (BThread* t = live_head_; t != nullptr;) {
        BThread* next = t->next_live;
        if (os_threads_) {
          // Its OS thread waits at its baton forever: leak the baton, let the thread go.
          static_cast<void>(t->baton.release());
          detail::detach_os_thread(t->os_thread);
        } else {
          // Leak the fiber: destroying it would throw into a frame that is already unwinding.
          new fiber(std::move(t->ctx));
        }
        t->bubble = nullptr;  // A handle may still delete the record; nothing else will.
        ++abandoned_;
        --live_;
        t = next;
      }
      live_head_ = live_tail_ = nullptr;
      // The note goes before the replay line, which stays last.
      failure_message_.insert(failure_message_.rfind('\n') + 1,
                              "(" + std::to_string(abandoned_) +
                                  " thread(s) blocked again while being unwound and were "
                                  "abandoned: their stacks leak)\n");
      break;
    }
    if (waiter_ != nullptr) {
      trace(Trace::EventKind::wait, waiting_thread_->id, "bubble::wait", 0, {});
      unpark(*waiter_);
      continue;
    }
    // Nothing can run. Advance time to the next timer, unless the root has returned.
    while (pop_stale()) {
    }
    if (!heap_.empty() && !root_returned_) {
      const TimePoint next = heap_.top().deadline;
      if (next - start_ > options_.max_virtual_time) {
        fail("virtual time budget exhausted: Options::max_virtual_time = " +
                 format_duration(options_.max_virtual_time) + " (the next timer is due at " +
                 format_wall_time(WallTime{next.time_since_epoch()}) + ")",
             false);
        continue;
      }
      now_ = next;
      trace(Trace::EventKind::advance, 0, {}, 0, {});
      fire_due_timers();
      continue;
    }
    if (root_returned_) {
      fail("root has returned but blocked threads remain", true);
    } else {
      fail("all threads are blocked and no timer is pending", true);
    }
  }
}

// The teardown of a failed run (docs/ARCHITECTURE.md, "Teardown"). Threads go on running
// normally — a wake-up is a wake-up, a join returns when its thread has exited — but time stops.
// Whenever no thread can run, one blocked thread is woken to be unwound: its park throws Unwind.
// Its unwinding may wake others normally (a worker's exit wakes the pool's shutdown), which then
// run on until they block again.
void Bubble::begin_unwind() {
  unwinding_ = true;
  steps_since_resume_ = 0;
  set_teardown_message(&failure_message_);
  std::terminate_handler previous = std::set_terminate(&teardown_terminate);
  if (previous != &teardown_terminate) g_previous_terminate = previous;
}

// Wakes the youngest blocked thread that can be unwound, so that its park throws Unwind; returns
// false if there is none. The youngest first, because a thread's objects are usually created
// before the threads that use them (a pool, a channel or a wait group before its workers): the
// youngest thread is the one whose stack others are least likely to be parked on, and it unlinks
// itself from what it waits on while that still exists. Never a thread parked in join (its target
// is unwound first and its exit ends the join normally), nor one blocked in a destructor that an
// exception is running (throwing there would terminate), nor one already woken to unwind.
bool Bubble::resume_one_for_unwinding() {
  for (BThread* t = live_tail_; t != nullptr; t = t->prev_live) {
    if (t->state != ThreadState::blocked || t->in_join || t->unwind_resumed ||
        t->eh.uncaught != 0) {
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

// The teardown has run for kTeardownPatience steps without every thread blocking (threads that
// keep waking each other): every thread's next blocking call throws Unwind.
void Bubble::unwind_everyone() noexcept {
  unwind_all_ = true;
  for (BThread* t = live_head_; t != nullptr; t = t->next_live) t->unwind = true;
}

// --- Switching ----------------------------------------------------------------------------

void Bubble::switch_to(Ctx& to) {
  Ctx* self = running_;
  if (os_threads_) [[unlikely]] {
    from_ = self;
    running_ = &to;
    // Each OS thread has its own exception state; only the count the teardown reads is kept.
    self->eh.uncaught = static_cast<unsigned int>(std::uncaught_exceptions());
    detail::hand_over(*self->baton, *to.baton);
    return;
  }
  check_canary(*self);
  from_ = self;
  running_ = &to;
  self->eh = *eh_;
  *eh_ = to.eh;
#ifdef BUBBLE_ENGINE_ASAN
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, to.stack_bottom, to.stack_size);
  fiber from = std::move(to.ctx).resume();
  const void* from_bottom = nullptr;
  std::size_t from_size = 0;
  __sanitizer_finish_switch_fiber(fake_stack, &from_bottom, &from_size);
  if (from_ == &main_) {
    main_.stack_bottom = from_bottom;
    main_.stack_size = from_size;
  }
#else
  fiber from = std::move(to.ctx).resume();
#endif
  arrived(std::move(from));
}

void Bubble::arrived(fiber&& from) noexcept {
  if (from_ != nullptr) from_->ctx = std::move(from);
}

void Bubble::run_thread(BThread* t) {
  t->state = ThreadState::running;
  current_ = t;
  if (tracing_) [[unlikely]]
    trace_event(Trace::EventKind::run, t->id, {}, 0, {});
  switch_to(*t);
  current_ = nullptr;
}

// The current thread has blocked (or was preempted and queued): pick who runs next.
void Bubble::leave_blocked() {
  BThread* self = current_;
  if (failed_ || queue_.empty() || timer_due()) {
    current_ = nullptr;
    switch_to(main_);
  } else {
    const std::size_t idx = decide(nullptr, nullptr);
    BThread* next = queue_.take(idx);
    if (next != self) {
      next->state = ThreadState::running;
      current_ = next;
      if (tracing_) [[unlikely]]
        trace_event(Trace::EventKind::run, next->id, {}, 0, {});
      switch_to(*next);
    }
  }
  current_ = self;
  self->state = ThreadState::running;
}

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

void Bubble::unwind_now(BThread* t) {
  if (t->in_join || std::uncaught_exceptions() != 0) return;
  if (++t->unwinds_thrown > kMaxUnwinds) abandon_current();
  throw Unwind{};
}

void Bubble::abandon_current() {
  BThread* t = current_;
  t->state = ThreadState::blocked;
  t->waiter = nullptr;
  t->what = WaitInfo{"(abandoned: it kept running while its run was torn down)", 0, t->what.where};
  current_ = nullptr;
  switch_to(main_);
  std::abort();  // Never resumed.
}

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
  trace(Trace::EventKind::exit, t->id, {}, 0, {});
  step(nullptr);
  while (Waiter* w = t->joiners.pop_front()) unpark(*w);
  // Unlink from the live list.
  if (t->prev_live != nullptr) {
    t->prev_live->next_live = t->next_live;
  } else {
    live_head_ = t->next_live;
  }
  if (t->next_live != nullptr) {
    t->next_live->prev_live = t->prev_live;
  } else {
    live_tail_ = t->prev_live;
  }
  --live_;
  Ctx* next = &main_;
  current_ = nullptr;
  if (!failed_ && !queue_.empty() && !timer_due()) {
    BThread* n = queue_.take(decide(nullptr, nullptr));
    n->state = ThreadState::running;
    current_ = n;
    if (tracing_) [[unlikely]]
      trace_event(Trace::EventKind::run, n->id, {}, 0, {});
    next = n;
  }
  if (t->has_handle) {
    // Keep the record for its handle, in the list of exited threads.
    t->prev_live = nullptr;
    t->next_live = dead_head_;
    if (dead_head_ != nullptr) dead_head_->prev_live = t;
    dead_head_ = t;
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
    t->ctx = fiber(std::allocator_arg, alloc, [this, t](fiber&& caller) {
#ifdef BUBBLE_ENGINE_ASAN
      const void* from_bottom = nullptr;
      std::size_t from_size = 0;
      __sanitizer_finish_switch_fiber(nullptr, &from_bottom, &from_size);
      if (from_ == &main_) {
        main_.stack_bottom = from_bottom;
        main_.stack_size = from_size;
      }
#endif
      arrived(std::move(caller));
      fiber_main(t);
      check_canary(*t);
      Ctx* next = exit_current(t);
      from_ = nullptr;  // This fiber is finished: nobody stores its continuation.
      running_ = next;
      *eh_ = next->eh;
#ifdef BUBBLE_ENGINE_ASAN
      __sanitizer_start_switch_fiber(nullptr, next->stack_bottom, next->stack_size);
#endif
      return std::move(next->ctx);
    });
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
  detail::set_current_runtime(this);
  detail::tl_tracing = tracing_;
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
  t->what = WaitInfo{"spawned", 0, where};
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
  if (strategy_.kind() == Strategy::Kind::pct) {
    t->priority = static_cast<std::uint64_t>(strategy_.depth()) + (rng_.next() >> 2);
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
  // Link into the live list.
  t->prev_live = live_tail_;
  if (live_tail_ != nullptr) {
    live_tail_->next_live = t;
  } else {
    live_head_ = t;
  }
  live_tail_ = t;
  ++live_;
  if (trace_) {
    trace_->add_thread(t->id, t->name);
    trace(Trace::EventKind::spawn, current_id(), trace_->note(t->name), t->id, where);
  }
  t->state = ThreadState::runnable;
  queue_.push_back(t);
  auto handle = std::make_unique<ThreadHandleImpl>(t);
  // Spawning is a scheduling point of the spawning thread.
  if (current_ != nullptr) schedule_point(WaitInfo{"spawn", t->id, where});
  return handle;
}

// --- Parking ------------------------------------------------------------------------------

void Bubble::prepare(Waiter& waiter) {
  check_thread("prepare");
  thread_slot(waiter) = current_;
}

ParkResult Bubble::park(Waiter& waiter, TimePoint deadline, const WaitInfo& what) {
  check_thread("park");
  BThread* t = current_;
  if (t == nullptr || thread_slot(waiter) != t) [[unlikely]]
    bad_park(t, what);
  maybe_unwind(t);
  if (waiter.notified()) return ParkResult::notified;
  if (unwinding_) teardown_guard();
  step(&what);
  if (deadline <= now_) {
    // Already due: a scheduling point, then the timeout (unless woken meanwhile).
    if (failed_ || !queue_.empty() || timer_due()) {
      t->state = ThreadState::runnable;
      queue_.push_front(t);
      leave_blocked();
    }
    maybe_unwind(t);
    return waiter.notified() ? ParkResult::notified : ParkResult::timed_out;
  }
  t->state = ThreadState::blocked;
  t->waiter = &waiter;  // t->what was set by step().
  if (capture_stacks_) [[unlikely]]
    detail::capture_stack(*t->blocked_stack, 1);
  if (deadline != kNoDeadline) t->park_timer = add_timer(deadline, t, nullptr);
  if (tracing_) [[unlikely]]
    trace_event(Trace::EventKind::block, t->id, what.kind, what.object_id, what.where);
  leave_blocked();
  t->waiter = nullptr;
  if (t->park_timer != 0) {
    cancel_timer(t->park_timer);
    t->park_timer = 0;
  }
  maybe_unwind(t);
  return waiter.notified() ? ParkResult::notified : ParkResult::timed_out;
}

void Bubble::bad_park(const BThread* t, const WaitInfo& what) const {
  if (t == nullptr) {
    throw std::logic_error(std::string("bubble::Runtime::park: ") + std::string(what.kind) +
                           " would block in a timer callback of " + name_ +
                           "; timer callbacks must not block");
  }
  throw std::logic_error("bubble::Runtime::park: the waiter was not prepared by thread \"" +
                         t->name + "\"");
}

void Bubble::unpark(Waiter& waiter) noexcept {
  if (tl_bubble != this) [[unlikely]]
    foreign_noexcept("unpark");
  mark_notified(waiter);
  auto* t = static_cast<BThread*>(thread_slot(waiter));
  if (t == nullptr || t->state != ThreadState::blocked || t->waiter != &waiter) return;
  if (t->park_timer != 0) {
    cancel_timer(t->park_timer);
    t->park_timer = 0;
  }
  if (tracing_) [[unlikely]]
    trace_wake(t);
  make_runnable(t);
}

Random* Bubble::random_source() noexcept {
  std::optional<Random>& r = current_ != nullptr ? current_->random : callback_random_;
  if (!r) {
    r.emplace(current_ != nullptr ? current_->random_key
                                  : detail::derive_random_key(random_key_, 0));
  }
  return &*r;
}

void Bubble::make_runnable(BThread* t) noexcept {
  t->state = ThreadState::runnable;
  queue_.push_back(t);
}

void Bubble::join(BThread* t, SourceLocation where) {
  check_thread("join");
  if (t->joined) throw std::logic_error("bubble: thread \"" + t->name + "\" joined twice");
  if (t == current_) {
    throw std::logic_error("bubble: thread \"" + t->name + "\" cannot join itself");
  }
  t->joined = true;
  const WaitInfo what{"Thread::join", t->id, where};
  if (current_ == nullptr) {
    if (t->state == ThreadState::exited) return;
    throw std::logic_error("bubble: Thread::join of \"" + t->name +
                           "\" would block in a timer callback of " + name_);
  }
  if (t->state == ThreadState::exited) {
    schedule_point(what);
    return;
  }
  Waiter w;
  prepare(w);
  t->joiners.push_back(w);
  BThread* self = current_;
  self->in_join = true;
  try {
    // Only t's exit unparks w; the loop makes that a fact rather than an assumption.
    while (t->state != ThreadState::exited) park(w, kNoDeadline, what);
  } catch (...) {
    self->in_join = false;
    if (w.queued()) t->joiners.remove(w);
    throw;
  }
  self->in_join = false;
  if (w.queued()) t->joiners.remove(w);
}

void Bubble::release_handle(BThread* t) noexcept {
  t->has_handle = false;
  if (t->state != ThreadState::exited) return;  // Detached: freed when it exits.
  if (t->prev_live != nullptr) {
    t->prev_live->next_live = t->next_live;
  } else {
    dead_head_ = t->next_live;
  }
  if (t->next_live != nullptr) t->next_live->prev_live = t->prev_live;
  destroy_record(t);
}

// --- Scheduling -----------------------------------------------------------------------------

inline void Bubble::step(const WaitInfo* what) {
  const std::uint64_t s = steps_.load(std::memory_order_relaxed) + 1;
  steps_.store(s, std::memory_order_relaxed);
  if (current_ != nullptr && what != nullptr) current_->what = *what;
  if (s >= next_step_event_) [[unlikely]]
    step_event(s);
}

// A step at which something happens: the step budget runs out, or a PCT change point.
void Bubble::step_event(std::uint64_t s) {
  if (max_steps_ != 0 && s > max_steps_ && !failed_) {
    fail("step budget exhausted: Options::max_steps = " + std::to_string(max_steps_), false);
  }
  while (next_change_ < change_points_.size() && change_points_[next_change_].step <= s) {
    if (change_points_[next_change_].step == s && current_ != nullptr) {
      current_->priority = change_points_[next_change_].priority;
    }
    ++next_change_;
  }
  update_next_step_event();
}

void Bubble::update_next_step_event() {
  std::uint64_t next = max_steps_ != 0 && !failed_ ? max_steps_ + 1 : ~std::uint64_t{0};
  if (next_change_ < change_points_.size()) {
    next = std::min(next, change_points_[next_change_].step);
  }
  next_step_event_ = next;
}

// The hot path of every primitive operation: count the step, remember the operation, and, when
// nothing else has to happen (no tracing, no failure, no due timer, no step event, and either an
// empty run queue or fifo, which never preempts), record the decision and return. Everything else
// goes to schedule_point_slow, which does exactly what this function did before it had a fast path.
void Bubble::schedule_point(const WaitInfo& what) {
  check_thread("schedule_point");
  BThread* t = current_;
  if (t == nullptr) return;  // A timer callback: the scheduler is already deciding.
  // No Unwind here: scheduling points happen in destructors (unlock), which must not throw.
  const std::uint64_t s = steps_.load(std::memory_order_relaxed) + 1;
  steps_.store(s, std::memory_order_relaxed);
  t->what = what;
  if (s >= next_step_event_ || tracing_ || failed_ || timer_due() || (!fifo_ && !queue_.empty()))
      [[unlikely]] {
    schedule_point_slow(t, what, s);
    return;
  }
  // fifo never preempts: the decision (when there is one) is recorded, nothing else happens.
  if (!queue_.empty()) record(0);
}

void Bubble::schedule_point_slow(BThread* t, const WaitInfo& what, std::uint64_t s) {
  if (s >= next_step_event_) step_event(s);
  if (tracing_) [[unlikely]]
    trace_event(Trace::EventKind::op, t->id, what.kind, what.object_id, what.where);
  if (failed_ || timer_due()) {
    if (unwinding_) teardown_guard();
    t->state = ThreadState::runnable;
    queue_.push_front(t);  // Main decides among [t, queue...], as below.
    leave_blocked();
    return;
  }
  if (queue_.empty()) return;
  if (fifo_) {
    record(0);
    return;
  }
  const std::size_t idx = decide(t, nullptr);
  if (idx != 0) preempt(t, idx - 1);
}

// schedule_point_slow picked queue_[i] over the running thread t: t goes to the back of the queue.
void Bubble::preempt(BThread* t, std::size_t i) {
  BThread* next = queue_.take(i);
  t->state = ThreadState::runnable;
  queue_.push_back(t);
  next->state = ThreadState::running;
  current_ = next;
  if (tracing_) [[unlikely]]
    trace_event(Trace::EventKind::run, next->id, {}, 0, {});
  switch_to(*next);
  current_ = t;
  t->state = ThreadState::running;
}

void Bubble::teardown_guard() {
  if (++teardown_steps_ > kMaxTeardownSteps) abandon_current();
  if (++steps_since_resume_ == kTeardownPatience) unwind_everyone();
}

void Bubble::yield(SourceLocation where) {
  check_thread("yield");
  BThread* t = current_;
  if (t == nullptr) return;
  // A thread that yields during the teardown is unwound: it would otherwise keep the teardown
  // from ever finding every thread blocked (a spin loop outliving the failure).
  if (unwinding_) t->unwind = true;
  maybe_unwind(t);
  const WaitInfo what{"yield", 0, where};
  step(&what);
  trace(Trace::EventKind::op, t->id, what.kind, 0, where);
  if (queue_.empty() && !timer_due() && !failed_) return;
  if (unwinding_) teardown_guard();
  t->state = ThreadState::runnable;
  queue_.push_back(t);
  leave_blocked();
  maybe_unwind(t);
}

// Candidates: `first` (if any), the run queue in order, `last` (if any). Returns an index into
// the run queue when first is null, else an index into the whole list.
std::size_t Bubble::decide(BThread* first, BThread* last) {
  const std::size_t n = queue_.size() + (first != nullptr) + (last != nullptr);
  if (n <= 1 || unwinding_) return 0;
  const std::uint32_t idx = pick(n, first, last);
  record(idx);
  return idx;
}

std::uint32_t Bubble::pick(std::size_t n, BThread* first, BThread* last) {
  switch (strategy_.kind()) {
    case Strategy::Kind::fifo:
      return 0;
    case Strategy::Kind::random:
      return rng_.below(n);
    case Strategy::Kind::choices: {
      const auto& picks = strategy_.picks();
      if (choice_pos_ >= picks.size()) return 0;
      return static_cast<std::uint32_t>(picks[choice_pos_++] % n);
    }
    case Strategy::Kind::pct: {
      std::size_t best = 0;
      const BThread* best_t = nullptr;
      for (std::size_t i = 0; i < n; ++i) {
        const BThread* c;
        if (first != nullptr) {
          c = i == 0 ? first : queue_[i - 1];
        } else {
          c = i < queue_.size() ? queue_[i] : last;
        }
        if (best_t == nullptr || c->priority > best_t->priority ||
            (c->priority == best_t->priority && c->id < best_t->id)) {
          best = i;
          best_t = c;
        }
      }
      return static_cast<std::uint32_t>(best);
    }
  }
  return 0;
}

// A decision among n > 1 candidates that are not threads (due timers, ready select cases): fifo
// takes the first; choices consumes a pick; random and PCT draw from the generator.
std::uint32_t Bubble::pick_other(std::size_t n) {
  switch (strategy_.kind()) {
    case Strategy::Kind::fifo:
      return 0;
    case Strategy::Kind::choices:
      return pick(n, nullptr, nullptr);
    case Strategy::Kind::random:
    case Strategy::Kind::pct:
      return rng_.below(n);
  }
  return 0;
}

std::size_t Bubble::choose(std::size_t n, const WaitInfo& /*what*/) {
  check_thread("choose");
  if (n <= 1 || unwinding_) return 0;
  const std::uint32_t idx = pick_other(n);
  record(idx);
  return idx;
}

inline void Bubble::record(std::uint32_t idx) {
  ++schedule_.decisions;
  if (idx == 0) {
    ++zeros_pending_;
    return;
  }
  record_pick(idx);
}

void Bubble::record_pick(std::uint32_t idx) {
  if (zeros_pending_ != 0) {
    schedule_.picks.insert(schedule_.picks.end(), zeros_pending_, 0);
    zeros_pending_ = 0;
  }
  schedule_.picks.push_back(idx);
}

// --- Timers ---------------------------------------------------------------------------------

TimerId Bubble::add_timer(TimePoint deadline, BThread* thread, std::function<void()> callback) {
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (slots_.size() > TimerEntry::kSlotMask) {
      throw std::length_error(
          "bubble::Runtime::schedule_at: more than 16777215 pending timers in " + name_);
    }
    // free_slot() (called by cancel_timer and unpark, which are noexcept) must never allocate:
    // keep room in the free list for every slot.
    if (free_slots_.capacity() < slots_.size() + 1) {
      free_slots_.reserve(std::max<std::size_t>(16, 2 * free_slots_.capacity()));
    }
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  TimerSlot& s = slots_[slot];
  s.active = true;
  s.seq = ++timer_seq_;
  s.thread = thread;
  s.callback = std::move(callback);
  const TimerEntry e{deadline, (s.seq << TimerEntry::kSlotBits) | slot};
  heap_.push(e);
  return e.key;
}

// Never allocates: add_timer keeps room in free_slots_ for every slot.
void Bubble::free_slot(std::uint32_t slot) noexcept {
  TimerSlot& s = slots_[slot];
  s.active = false;
  s.thread = nullptr;
  s.seq = 0;
  free_slots_.push_back(slot);
}

TimerId Bubble::schedule_at(TimePoint deadline, std::function<void()> callback) {
  check_thread("schedule_at");
  if (!callback) throw std::invalid_argument("bubble::Runtime::schedule_at: empty callback");
  return add_timer(deadline, nullptr, std::move(callback));
}

bool Bubble::cancel_timer(TimerId id) noexcept {
  if (tl_bubble != this) [[unlikely]]
    foreign_noexcept("cancel_timer");
  const TimerEntry probe{TimePoint{}, id};
  const std::uint32_t slot = probe.slot();
  if (id == 0 || slot >= slots_.size()) return false;
  TimerSlot& s = slots_[slot];
  if (!s.active || s.seq != probe.seq()) return false;
  std::function<void()> callback = std::move(s.callback);
  free_slot(slot);
  // The heap entry stays until it reaches the top (lazy deletion). Destroy the callback last:
  // its destructor may call back into the runtime.
  callback = nullptr;
  return true;
}

bool Bubble::pop_stale() noexcept {
  if (heap_.empty()) return false;
  const TimerEntry& top = heap_.top();
  const TimerSlot& s = slots_[top.slot()];
  if (s.active && s.seq == top.seq()) return false;
  heap_.pop();
  return true;
}

void Bubble::fire_due_timers() {
  // Every timer due at or before now fires before any thread runs. Under fifo they fire in
  // (deadline, creation) order; other strategies pick the order (recorded like any decision).
  while (timer_due() && !failed_) {
    due_.clear();
    while (!heap_.empty() && heap_.top().deadline <= now_) {
      const TimerEntry e = heap_.top();
      heap_.pop();
      const TimerSlot& s = slots_[e.slot()];
      if (s.active && s.seq == e.seq()) due_.push_back(e);
    }
    std::size_t begin = 0;
    while (begin < due_.size() && !failed_) {
      const std::size_t n = due_.size() - begin;
      std::uint32_t idx = 0;
      if (n > 1 && !unwinding_) {
        idx = pick_other(n);
        record(idx);
      }
      TimerEntry e;
      if (idx == 0) {
        e = due_[begin++];
      } else {
        e = due_[begin + idx];
        due_.erase(due_.begin() + static_cast<std::ptrdiff_t>(begin + idx));
      }
      fire(e);
    }
  }
}

void Bubble::fire(const TimerEntry& e) {
  TimerSlot& s = slots_[e.slot()];
  if (!s.active || s.seq != e.seq()) return;  // Cancelled by an earlier callback.
  ++timers_fired_;
  step(nullptr);
  if (s.thread != nullptr) {
    BThread* t = s.thread;
    free_slot(e.slot());
    t->park_timer = 0;
    if (t->state == ThreadState::blocked) {
      trace(Trace::EventKind::timeout, t->id, t->what.kind, t->what.object_id, t->what.where);
      make_runnable(t);
    }
    return;
  }
  std::function<void()> callback = std::move(s.callback);
  free_slot(e.slot());
  trace(Trace::EventKind::timer, 0, {}, e.seq(), {});
  try {
    callback();
    callback = nullptr;
  } catch (...) {
    fail_with_exception(nullptr, std::current_exception());
  }
}

// --- Failures -------------------------------------------------------------------------------

std::string Bubble::when() const {
  return " at " + format_wall_time(WallTime{now_.time_since_epoch()}) + " (virtual time +" +
         format_duration(now_ - start_) + ", step " +
         std::to_string(steps_.load(std::memory_order_relaxed)) + ")";
}

std::string Bubble::replay_line() const {
  std::string line = "replay: BUBBLE_STRATEGY=" + replay_strategy_text(strategy_, schedule_);
  if (!options_.replay_command.empty()) line += " " + options_.replay_command;
  return line;
}

std::vector<detail::ReportThread> Bubble::report_threads() const {
  std::vector<detail::ReportThread> threads;
  for (const BThread* t = live_head_; t != nullptr; t = t->next_live) {
    threads.push_back({t->id, t->name, t, t->state == ThreadState::blocked ? &t->what : nullptr});
  }
  return threads;
}

std::string Bubble::thread_report() const {
  const std::vector<detail::ReportThread> waits = report_threads();
  const detail::ReportView view{waits, &object_names_, start_};
  std::vector<detail::ReportedThread> threads;
  threads.reserve(live_);
  std::size_t index = 0;
  for (const BThread* t = live_head_; t != nullptr; t = t->next_live, ++index) {
    const bool blocked = t->state == ThreadState::blocked;
    std::string details;  // Who could release it; with Options::symbolize_stacks, its stack.
    std::string user_location;
    std::string blocked_on;
    std::string cases;  // A select's cases, listed after its location.
    if (blocked) {
      blocked_on = detail::blocked_on_text(t->what, view);
      details = detail::blocked_detail_lines(waits[index], view);
      for (std::size_t i = 0; i < t->what.case_count; ++i) {
        const WaitInfo& c = t->what.cases[i];
        cases += i == 0 ? ", cases: " : "; ";
        cases += "[" + std::to_string(i) + "] " + detail::blocked_on_text(c, view);
      }
    }
    if (blocked && t->blocked_stack) [[unlikely]] {
      std::string stack = detail::stack_lines(*t->blocked_stack, options_.symbolize_stacks,
                                              "      ", &user_location);
      if (!stack.empty()) {
        details += "    stack, innermost first (> marks the first frame of your code):\n" + stack;
        std::string spawner;
        (void)detail::stack_lines(*t->spawn_stack, options_.symbolize_stacks, "", &spawner);
        if (!spawner.empty()) details += "    spawned at " + spawner + "\n";
      }
    }
    threads.push_back({t->id, t->name, state_name(t->state), blocked, t->what.kind,
                       t->what.object_id, t->what.where, std::move(blocked_on),
                       std::move(user_location), std::move(cases), std::move(details)});
  }
  return detail::format_thread_report(threads);
}

void Bubble::fail(std::string message, bool deadlock) {
  if (failed_) return;
  failed_ = true;
  deadlock_ = deadlock;
  std::string text = "bubble: " + (deadlock ? std::string("deadlock: ") : std::string()) + message +
                     when() + " in " + name_ + "\n";
  if (deadlock) {
    const std::vector<detail::ReportThread> threads = report_threads();
    text += detail::cycle_lines({threads, &object_names_, start_});
  }
  text += thread_report();
  text += replay_line();
  failure_message_ = std::move(text);
  if (trace_) trace(Trace::EventKind::failure, current_id(), trace_->note(message), 0, {});
}

void Bubble::fail_with_exception(BThread* t, std::exception_ptr e) {
  if (failed_) return;
  std::string what;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    what = detail::demangle(typeid(ex).name()) + ": " + ex.what();
  } catch (...) {
    what = "an exception not derived from std::exception";
  }
  std::string who = t != nullptr ? "thread #" + std::to_string(t->id) + " \"" + t->name + "\""
                                 : std::string("a timer callback");
  fail(who + " threw " + what, false);
  failure_exception_ = std::move(e);
}

void stack_overflow(const Ctx& c) noexcept {
  const auto& t = static_cast<const BThread&>(c);
  const std::string runtime = t.bubble != nullptr ? std::string(t.bubble->name()) : "bubble";
  std::fprintf(stderr,
               "bubble: stack overflow in thread #%llu \"%s\" of %s: the canary at the low end "
               "of its %zu-byte stack was overwritten (Options::stack_guard = canary; raise "
               "Options::stack_size). Its last scheduling point was %s at %s. Aborting.\n",
               static_cast<unsigned long long>(t.id), t.name.c_str(), runtime.c_str(), t.stack_size,
               std::string(t.what.kind).c_str(), location_text(t.what.where).c_str());
  std::fflush(stderr);
  std::abort();
}

std::string Bubble::describe_for_watchdog(const void* self) {
  const auto* b = static_cast<const Bubble*>(self);
  const BThread* t = b->current_;
  std::string who = t != nullptr ? "thread #" + std::to_string(t->id) + " \"" + t->name + "\""
                                 : std::string("the scheduler (a timer callback)");
  std::string last = t != nullptr
                         ? std::string(t->what.kind) + " at " + location_text(t->what.where)
                         : std::string("-");
  return "bubble: watchdog: " + who + " of " + b->name_ + " has run for more than " +
         std::to_string(b->options_.watchdog.count()) +
         " ms of real time without reaching a scheduling point (blocked on a std::mutex, in real "
         "I/O, or looping?); its last scheduling point was " +
         last + ". Aborting.";
}

void Bubble::wait(SourceLocation where) {
  BThread* t = current_;
  if (t == nullptr) {
    throw std::logic_error("bubble::wait: called from a timer callback of " + name_);
  }
  if (waiter_ != nullptr) {
    throw std::logic_error("bubble::wait: thread \"" + t->name +
                           "\" called wait() while thread \"" + waiting_thread_->name +
                           "\" is already waiting in " + name_);
  }
  Waiter w;
  prepare(w);
  waiter_ = &w;
  waiting_thread_ = t;
  struct Reset {
    Bubble* b;
    ~Reset() {
      b->waiter_ = nullptr;
      b->waiting_thread_ = nullptr;
    }
  } reset{this};
  park(w, kNoDeadline, WaitInfo{"bubble::wait", 0, where});
}

}  // namespace

RunResult run(const Options& options, std::function<void(Runtime&)> root) {
  if (tl_bubble != nullptr || in_bubble()) {
    throw std::logic_error(std::string("bubble::run: called inside ") +
                           std::string(current_runtime().name()) + "; bubbles cannot be nested");
  }
  if (!root) throw std::invalid_argument("bubble::run: empty root function");
  Bubble bubble(options);
  return bubble.execute(std::move(root));
}

RunResult run(std::function<void(Runtime&)> root) {
  return run(Options{}, std::move(root));
}

void wait(SourceLocation where) {
  Bubble* b = tl_bubble;
  if (b == nullptr) throw std::logic_error("bubble::wait: called outside a bubble");
  b->wait(where);
}

void sleep_and_wait(Duration d, SourceLocation where) {
  sleep_for(d, where);
  wait(where);
}

namespace detail {
Random* bubble_random() noexcept {
  return tl_bubble != nullptr ? tl_bubble->random_source() : nullptr;
}

std::string_view trace_record(Trace::EventKind kind, std::string_view what, std::uint64_t object,
                              SourceLocation where, Duration span, bool contended) {
  return tl_bubble->record_marker(kind, what, object, where, span, contended);
}

Duration trace_now() noexcept {
  return tl_bubble->elapsed();
}

constinit thread_local Runtime* tl_intercepting_runtime = nullptr;

void** intercepted_thread_slot() noexcept {
  return tl_bubble != nullptr ? tl_bubble->intercept_slot() : nullptr;
}
}  // namespace detail

}  // namespace bubble

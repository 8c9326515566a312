// The bubble's run: constructing a Bubble from its Options, execute() (the root thread, the
// scheduler loop, the result or the failure thrown), and RunFailure / RunResult.

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <bubble/detail/intercept.hpp>

#include "engine/bubble.hpp"
#include "engine/random_key.hpp"

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

std::string RunResult::replay_line() const {
  return engine::replay_prefix() + engine::replay_strategy_text(strategy, schedule);
}

namespace engine {

constinit thread_local Bubble* tl_bubble = nullptr;

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

// --- Construction and the run -------------------------------------------------------------

Bubble::Bubble(const Options& options)
    : Runtime(/*controlled=*/true),
      options_(options),
      strategy_(options.replay ? options.replay->to_strategy() : options.strategy),
      start_(TimePoint{options.start.time_since_epoch()}),
      now_(start_),
      max_steps_(options.max_steps) {
  fair_bound_ =
      options.fair_bound != 0 ? std::min(options.fair_bound, BThread::kIdle - 1) : BThread::kIdle;
  livelock_steps_ = options.livelock_steps != 0 ? options.livelock_steps : ~std::uint64_t{0};
  const auto [observer, context] = detail::failure_observer();
  failure_observer_ = observer;
  failure_observer_context_ = context;
  // The default name is the same for every run: failure messages must not depend on how many
  // bubbles the process ran before (a replay prints exactly what the original printed).
  name_ = options.name.empty() ? std::string("bubble") : options.name;
  if (options.stack_size == 0) {
    throw std::invalid_argument("bubble::run: Options::stack_size must be > 0, got 0");
  }
  // Also decides, once per process, what replay lines start with (engine/interposer_presence.cpp).
  if (!intercept_std_available() && options.intercept_std) {
    throw std::invalid_argument(
        "bubble::run: Options::intercept_std is true, but this program has no bubble::interpose, "
        "so its std::thread, std::mutex, clocks and sleeps would run for real, outside the "
        "bubble: link it (CMake: target_link_libraries(<your target> PRIVATE bubble::interpose)) "
        "or preload it (LD_PRELOAD=<prefix>/lib/libbubble_interpose.so)");
  }
  if (options.max_virtual_time < Duration::zero()) {
    throw std::invalid_argument("bubble::run: Options::max_virtual_time must be >= 0, got " +
                                format_duration(options.max_virtual_time));
  }
  scheduler_ = make_scheduler(strategy_);
  random_key_ = detail::derive_random_key(options.random_seed, 0);
  fifo_ = strategy_.kind() == Strategy::Kind::fifo;
  if (options.decisions != nullptr) {
    // Every decision goes through the recording scheduler: no fifo shortcut, no inlined draws
    // (a uniform strategy answers pick_thread and pick_other with the same draws).
    scheduler_ = make_recording_scheduler(std::move(scheduler_), *options.decisions);
    fifo_ = false;
  }
  uniform_ = scheduler_->uniform_source();
  if (options.trace) {
    trace_ = std::make_shared<Trace>();
    trace_->set_level(options.trace_level);
    tracing_ = true;
  }
  capture_stacks_ = static_cast<bool>(options.symbolize_stacks);
  if (options.dependencies != nullptr) {
    if (options.decisions == nullptr) {
      throw std::invalid_argument(
          "bubble::run: Options::dependencies is set but Options::decisions is not (the "
          "dependencies refer to the decisions)");
    }
    deps_ = options.dependencies;
    deps_->events.reserve(64);  // log_edge records spawns and wake-ups without allocating.
  }
  off_fast_path_ = tracing_ || capture_stacks_ || deps_ != nullptr;
  os_threads_ = options.thread_model == ThreadModel::os_threads;
  if (os_threads_) main_.baton = std::make_unique<detail::Baton>();
  update_next_step_event();
  borrow_timer_storage();  // Last: nothing after it throws, so the destructor gives it back.
}

Bubble::~Bubble() {
  // Timer callbacks may own objects whose destructors call back into the runtime: move them out
  // first.
  std::vector<TimerSlot> slots = std::move(slots_);
  slots_.clear();
  heap_.clear();
  slots.clear();
  if (slots_.empty()) slots_.swap(slots);  // Its memory, for the next run.
  keep_timer_storage();
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
  errno_ = &errno;
  previous_runtime_ = &current_runtime();
  tl_bubble = this;
  detail::set_current_runtime(this);
  detail::tl_tracing = tracing_;
  install_terminate_handler();
  install_crash_report();
  struct Restore {
    Bubble* b;
    ~Restore() {
      // The interposer's state of the run, now that every thread has exited.
      detail::InterceptedRunState& run_state = b->intercept_run_state_;
      if (run_state.state != nullptr && run_state.destroy != nullptr) {
        run_state.destroy(run_state.state);
      }
      run_state = {};
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
  timer_slots_used_ = slots_.size();
  while (!slots_.empty()) {
    std::vector<TimerSlot> slots = std::move(slots_);
    slots_.clear();
    free_slots_.clear();
    heap_.clear();
    slots.clear();                           // The callbacks may schedule timers again.
    if (slots_.empty()) slots_.swap(slots);  // Its memory, for the next run.
  }
  handle.reset();
  // Records of exited threads whose handles outlive the run no longer refer to the bubble.
  while (BThread* t = dead_threads_.pop_front()) t->bubble = nullptr;

  Schedule schedule = picks_.schedule();
  if (failed_) {
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
        std::throw_with_nested(RunFailure(failure_message_, schedule, strategy_, trace));
      }
      // Not derived from std::exception: rethrown unchanged (documented in bubble.hpp).
    }
    if (deadlock_) throw DeadlockError(failure_message_, schedule, strategy_, trace);
    throw RunFailure(failure_message_, schedule, strategy_, trace);
  }
  RunResult result;
  result.schedule = std::move(schedule);
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
    if (!unwinding_ && timer_due()) {
      if (deps_ != nullptr) log_last_step_touches_all();
      fire_due_timers();
    }
    if (!queue_.empty()) {
      const std::size_t idx = decide(nullptr, nullptr);
      BThread* const next = queue_.take(idx);
      touch_next_stack();
      run_thread(next);
      continue;
    }
    if (live_ == 0) break;
    if (unwinding_) {
      if (resume_one_for_unwinding()) continue;
      set_teardown_message(nullptr);
      // Threads that could not be unwound (abandoned, or blocked in join or in a destructor run by
      // an exception, with nothing left to wake them): abandoned for good. Their stacks are
      // reclaimed; what their frames own leaks, and the failure message says so.
      while (BThread* t = live_threads_.pop_front()) {
        abandon(t);
        --live_;
      }
      // The note goes before the replay line, which stays last.
      failure_message_.insert(failure_message_.rfind('\n') + 1,
                              "(" + std::to_string(abandoned_) +
                                  " thread(s) could not be unwound and were abandoned: what "
                                  "their stacks own is leaked)\n");
      break;
    }
    if (waiter_ != nullptr) {
      trace(Trace::EventKind::wait, waiting_thread_->id, "bubble::wait", 0, {});
      if (deps_ != nullptr) log_barrier();  // Every other thread is blocked.
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
      if (deps_ != nullptr) log_barrier();
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

}  // namespace engine
}  // namespace bubble

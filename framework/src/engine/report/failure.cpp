// How a bubble run fails: the failure message (what happened, when, every thread and what it
// waits on, the replay line), a stack overflow, and the watchdog's description.

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include <bubble/detail/demangle.hpp>
#include "engine/bubble.hpp"

namespace bubble::engine {

using detail::location_text;

std::string Bubble::when() const {
  return " at " + format_wall_time(WallTime{now_.time_since_epoch()}) + " (virtual time +" +
         format_duration(now_ - start_) + ", step " +
         std::to_string(steps_.load(std::memory_order_relaxed)) + ")";
}

std::string Bubble::replay_line() const {
  std::string line = replay_prefix() + replay_strategy_text(strategy_, picks_.schedule());
  if (!options_.replay_command.empty()) line += " " + options_.replay_command;
  return line;
}

std::vector<detail::ReportThread> Bubble::report_threads() const {
  std::vector<detail::ReportThread> threads;
  for (const BThread& thread : live_threads_) {
    const BThread* t = &thread;
    threads.push_back({t->id, t->name, t, t->state == ThreadState::blocked ? t->what : nullptr});
  }
  return threads;
}

std::string Bubble::thread_report() const {
  const std::vector<detail::ReportThread> waits = report_threads();
  const detail::ReportView view{waits, &object_names_, start_};
  std::vector<detail::ReportedThread> threads;
  threads.reserve(live_);
  std::size_t index = 0;
  for (const BThread* t = live_threads_.front(); t != nullptr; t = ThreadList::next(*t), ++index) {
    const bool blocked = t->state == ThreadState::blocked;
    std::string details;  // Who could release it; with Options::symbolize_stacks, its stack.
    std::string user_location;
    std::string blocked_on;
    std::string cases;  // A select's cases, listed after its location.
    if (blocked) {
      blocked_on = detail::blocked_on_text(*t->what, view);
      details = detail::blocked_detail_lines(waits[index], view);
      for (std::size_t i = 0; i < t->what->case_count; ++i) {
        const WaitInfo& c = t->what->cases[i];
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
    // A blocked thread is shown at what it waits on; any other at its last point.
    threads.push_back({t->id, t->name, state_name(t->state), blocked,
                       blocked ? t->what->kind : t->last_kind, blocked ? t->what->object_id : 0,
                       blocked ? t->what->where : t->last_where, std::move(blocked_on),
                       std::move(user_location), std::move(cases), std::move(details)});
  }
  return detail::format_thread_report(threads);
}

void Bubble::fail(const std::string& message, bool deadlock, const std::string& details) {
  if (failed_) return;
  failed_ = true;
  off_fast_path_ = true;
  next_step_event_ = 0;  // See update_next_step_event.
  deadlock_ = deadlock;
  std::string text = "bubble: " + (deadlock ? std::string("deadlock: ") : std::string()) + message +
                     when() + " in " + name_ + "\n" + details;
  if (deadlock) {
    const std::vector<detail::ReportThread> threads = report_threads();
    text += detail::cycle_lines({threads, &object_names_, start_});
  }
  text += thread_report();
  text += replay_line();
  failure_message_ = std::move(text);
  if (trace_) trace(Trace::EventKind::failure, current_id(), trace_->note(message), 0, {});
  if (failure_observer_ != nullptr) failure_observer_(failure_observer_context_);
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

void Bubble::fail_on_current_thread(const std::string& what, std::string_view operation,
                                    SourceLocation where) {
  BThread* t = current_;
  if (t != nullptr) {
    t->last_kind = operation;
    t->last_where = where;
  }
  fail((t != nullptr ? "thread #" + std::to_string(t->id) + " \"" + t->name + "\" "
                     : std::string("a timer callback ")) +
           what,
       false);
}

void Bubble::fail_livelock(const BThread* t, const WaitInfo& what) {
  const std::uint64_t since = last_progress_;
  fail("livelock: thread #" + std::to_string(t->id) + " \"" + t->name + "\" spun " +
           std::to_string(steps_.load(std::memory_order_relaxed) - since) +
           " steps without progress at " + location_text(what.where) + " (" +
           std::string(what.kind) + "): since step " + std::to_string(since) +
           " every thread has only looked or given the processor away (atomic loads, failed "
           "compare-exchanges, yields, waits already due) while nothing it could wait for "
           "happened (Options::livelock_steps = " +
           std::to_string(livelock_steps_) + ")",
       false);
}

void stack_overflow(const Ctx& c) noexcept {
  const auto& t = static_cast<const BThread&>(c);
  const std::string runtime = t.bubble != nullptr ? std::string(t.bubble->name()) : "bubble";
  std::fprintf(stderr,
               "bubble: stack overflow in thread #%llu \"%s\" of %s: the canary at the low end "
               "of its %zu-byte stack was overwritten (Options::stack_guard = canary; raise "
               "Options::stack_size). Its last scheduling point was %s at %s. Aborting.\n",
               static_cast<unsigned long long>(t.id), t.name.c_str(), runtime.c_str(), t.stack_size,
               std::string(t.last_kind).c_str(), location_text(t.last_where).c_str());
  std::fflush(stderr);
  std::abort();
}

std::string Bubble::describe_for_watchdog(const void* self) {
  const auto* b = static_cast<const Bubble*>(self);
  const BThread* t = b->current_;
  std::string who = t != nullptr ? "thread #" + std::to_string(t->id) + " \"" + t->name + "\""
                                 : std::string("the scheduler (a timer callback)");
  std::string last = t != nullptr
                         ? std::string(t->last_kind) + " at " + location_text(t->last_where)
                         : std::string("-");
  // Read while the thread runs on: it is stuck, so its record and the picks do not change.
  return "bubble: watchdog: " + who + " of " + b->name_ + " has run for more than " +
         std::to_string(b->options_.watchdog.count()) +
         " ms of real time without reaching a scheduling point, so the bubble can neither switch "
         "threads nor move time. A bubble sees the operations of its own primitives, and in a run "
         "with Options::intercept_std the standard library's threads, locks, condition variables, "
         "clocks, sleeps, yields and futex waits (with bubble::instrument, atomics too); it cannot "
         "see a loop that makes none of them (a spin on an atomic without a yield, a computation "
         "that never ends), real I/O (a socket, a pipe, a file that blocks), or a lock it does not "
         "intercept (a pthread_spinlock_t, a pthread_barrier_t, a futex system call made without "
         "syscall(), a lock held by a thread outside the bubble). Its last scheduling point was " +
         last + ".\n" + b->replay_line() + "\nAborting.";
}

}  // namespace bubble::engine

#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <bubble/call_stack.hpp>
#include <bubble/dependencies.hpp>
#include <bubble/runtime.hpp>
#include <bubble/schedule.hpp>
#include <bubble/source_location.hpp>
#include <bubble/strategy.hpp>
#include <bubble/time.hpp>
#include <bubble/trace.hpp>

// The bubble: a simulated Runtime in which time is virtual and a seeded, recorded, replayable
// scheduler decides every interleaving. Semantics follow Go's testing/synctest (Go 1.25).
//
//   bubble::RunResult r = bubble::run({.strategy = bubble::Strategy::random(42)},
//                                     [](bubble::Runtime& rt) {
//     bubble::Thread t("worker", [&] { rt.sleep_for(1s); }, rt);
//     rt.sleep_for(2s);            // returns at once, in real time; now() is exactly start + 2s
//   });
//
// Threads. The root function and every thread spawned inside (Runtime::spawn, bubble::Thread,
// after_func) are fibers on the OS thread that called run(); exactly one runs at a time, and the
// scheduler switches only at scheduling points (every primitive operation, spawn, yield(), and
// when a thread blocks or exits). A run is therefore a pure function of the program, its inputs
// and the strategy. Timer callbacks run on the scheduler itself, between threads: they must not
// block (Runtime::park there throws std::logic_error; scheduling points there do nothing).
//
// Time. now() starts at Options::start and moves only when no thread can run: it then jumps to
// the earliest pending timer, and every timer due at that instant fires (in creation order under
// fifo, in an order drawn from the strategy otherwise) before any thread runs. A timer due at or
// before now() fires at the next scheduling decision, without waiting for idleness. Computation
// takes no virtual time.
//
// End of run. When the root function returns, time stops: the other threads may still run and
// exit, timers due later never fire. run() returns once every thread has exited. Threads still
// blocked then are a deadlock ("root has returned but blocked threads remain").
//
// Failures. run() throws, after unwinding every thread that has not exited (its blocking call
// throws bubble::Unwind, so its destructors run; see Unwind for the order):
//   - DeadlockError when no thread can run, no timer is pending and threads remain blocked;
//   - RunFailure when a budget (max_steps, max_virtual_time) is exhausted;
//   - when an exception escapes a bubble thread (the first one, if several do): an exception
//     derived from std::exception is rethrown as a RunFailure nested with the original
//     (std::throw_with_nested: `catch (const bubble::RunFailure& e)` then
//     `std::rethrow_if_nested(e)` recovers the original, type intact); an exception of any other
//     type (RapidCheck's case results, for one) is rethrown unchanged, so that RC_ASSERT,
//     RC_SUCCEED and RC_DISCARD keep their meaning inside a bubble.
// To catch the original exception by its own type, either of two lines:
//     catch (const bubble::RunFailure& e) { e.rethrow_original(); throw; }  // then by type
//     bubble::run({.rethrow_original = true}, root);  // throws std::out_of_range itself
// The first keeps the RunFailure (its schedule and trace) in hand; the second prints the
// failure's message, replay line included, to stderr and then throws the original exception.
// Every RunFailure's message ends with one line that reproduces the run exactly:
//   "replay: BUBBLE_STRATEGY=<strategy>[ <Options::replay_command>]".
//
// Guards. One process-wide watchdog thread (started on first use, shared by all runs, restarted in
// a child process after fork) aborts the process with a message naming the thread and its last
// scheduling point if a bubble thread runs longer than Options::watchdog in real time without
// reaching a scheduling point (it is blocked on a std::mutex, in real I/O or in an infinite loop).
// Calling a bubble's Runtime (and so any of its primitives) from an OS thread that is not running
// that bubble throws std::logic_error naming the runtime and the operation; for the noexcept
// operations (unpark, cancel_timer) it aborts.
namespace bubble {

// Unwind is thrown by a bubble thread's blocking call (Runtime::park, and so every primitive's
// wait, and yield()) when its run is being torn down after a failure or a deadlock, so that the
// thread's stack unwinds and its destructors run; then the thread ends quietly. It does not
// derive from std::exception. Code on a bubble thread that catches (...) must rethrow it; if it
// is swallowed anyway, the thread's next blocking call throws it again (a thread that keeps
// swallowing it is abandoned, and its stack leaks).
//
// The teardown throws it into one blocked thread at a time, and only when no thread can run:
// until then the threads run normally (time stands still), and a wait that completes — a notify,
// a join whose thread has exited — returns normally. The youngest blocked thread goes first, since
// the objects threads wait on usually belong to older threads (a pool and its workers), so each
// thread unlinks itself from what it waits on while that still exists. So a thread blocked in
// join, ~Thread, Pool::shutdown or ~Pool sees the threads it waits for exit and returns normally.
// Unwind is never thrown by a plain scheduling point (they happen in destructors: Mutex::unlock),
// never by ThreadHandle::join (which waits for the joined thread to end), and never while another
// exception is in flight on the same thread. One case is left: a destructor blocked on something
// no thread will ever signal (nothing else can run) receives it in a noexcept context, and the
// process terminates after printing the failure report.
struct Unwind final {};

// 2000-01-01T00:00:00Z, the default start of a bubble's clock (as in Go's synctest); kStart is
// the same instant as a TimePoint, what now() returns at the start of such a run.
inline constexpr WallTime kDefaultStart{kStart.time_since_epoch()};

// How the stacks of bubble threads catch overflows (Options::stack_guard).
enum class StackGuard : std::uint8_t { page, canary };

// What the threads of a bubble run on (Options::thread_model).
enum class ThreadModel : std::uint8_t {
  // Fibers on the OS thread that called run(), switched in user space (Boost.Context): a switch
  // costs tens of nanoseconds. thread_local variables are shared by all of the bubble's threads.
  fibers,
  // An OS thread for each bubble thread, of which exactly one runs at a time; the others wait until
  // the engine hands them the run. Each bubble thread then has its own thread_local variables (and
  // errno), as on real threads, for code that keeps per-thread state; a switch costs an OS context
  // switch (microseconds; figures in docs/PERFORMANCE.md).
  os_threads,
};

struct Options {
  // Where the clock starts. now() is the TimePoint with the same count since the epoch, and
  // wall_now() the same instant, so traces and logs are identical in every run.
  WallTime start = kDefaultStart;
  // How the scheduler picks among runnable threads (see Strategy). Default: fifo.
  Strategy strategy = Strategy::fifo();
  // If set, replays this recorded schedule exactly (takes precedence over `strategy`).
  std::optional<Schedule> replay{};
  // If set, the run appends every decision it takes among more than one candidate to this vector,
  // in order (see Decision): what ScheduleTree needs to enumerate schedules. Each decision then
  // costs a call through the strategy's interface, also under fifo and random, whose decisions
  // are otherwise inlined. The vector must outlive the run.
  std::vector<Decision>* decisions = nullptr;
  // If set (with `decisions`), the run appends which thread ran which step on which object, and
  // the threads each decision chose among (see RunDependencies): what a ScheduleTree with
  // Reduction::dpor needs. Every scheduling point then leaves the engine's fast path. The log
  // must outlive the run; bubble::run throws std::invalid_argument if it is set without
  // `decisions`.
  RunDependencies* dependencies = nullptr;
  // Records a Trace of the run (RunResult::trace, RunFailure::trace).
  bool trace = false;
  // What the trace shows (with `trace`): TraceLevel::every_event (the default), or
  // skip_uncontended_locks (drops lock/unlock pairs nobody waited for), or blocking_only (only
  // blocking, contended locks and the user's trace_note / trace_span markers: what stays
  // readable in a run with thousands of lock operations). See TraceLevel in trace.hpp.
  TraceLevel trace_level = TraceLevel::every_event;
  // The run fails with RunFailure once it has taken this many scheduling steps (0: no limit).
  // Ends livelocks: threads that keep running without ever letting time advance.
  std::uint64_t max_steps = 100'000'000;
  // Fairness. A thread that makes nothing but operations that may not progress (Progress::none
  // or Progress::maybe: a yield, an atomic load, a failed compare-exchange, a try_lock, a Mutex's
  // lock and unlock, a wait that returns at once) `fair_bound` times in a row is descheduled, under
  // every strategy: the other runnable threads go first (under PCT it drops below every priority),
  // and when every runnable thread has been so descheduled since its last progress, they count as
  // blocked: time moves to the next timer, as when every thread is blocked. So a correct
  // spin-wait lets the thread it waits for run, or the time it waits for come, within a bounded
  // number of steps, and replays like any other run. 0: no fairness (a spin-wait under fifo or
  // PCT may then never end).
  std::uint32_t fair_bound = 1'000;
  // The run fails with a livelock report (`livelock: thread #3 "x" spun 1,000,000 steps without
  // progress at f.cpp:12 (atomic load)`) once the threads have made nothing but Progress::none
  // operations for this many steps in a row, with no timer to wait for: threads that only look,
  // for each other or for what no thread will do. 0: no such check (max_steps still ends the run).
  std::uint64_t livelock_steps = 1'000'000;
  // The run fails with RunFailure if virtual time would move past start + max_virtual_time.
  // Ends livelocks in virtual time (a ticker that nobody stops while the root waits forever).
  Duration max_virtual_time = std::chrono::hours{24 * 365 * 100};
  // Real time a bubble thread may run without reaching a scheduling point before the watchdog
  // aborts the process. Zero (or less) disables the watchdog for this run. Time during which the
  // whole process was paused (stopped in a debugger) does not count.
  std::chrono::milliseconds watchdog{10'000};
  // Usable stack size of each bubble thread (a guard page is added below it: an overflow
  // faults). Stacks are pooled per OS thread without a fixed cap: memory grows with the number
  // of threads alive at once and the pages they touch; when a run ends, the pool keeps the
  // stacks that run needed at its peak and returns the rest to the system.
  std::size_t stack_size = std::size_t{256} * 1024;
  // How overflows of those stacks are caught. page: a guard page below each stack faults on the
  // first access past it (SIGSEGV, at the faulting instruction). canary: no guard page; a canary
  // word at the stack's low end is checked whenever the thread switches out and when it ends,
  // and an overwritten one aborts the process with "bubble: stack overflow in thread #<id>
  // "<name>"" (the overflow may already have corrupted the memory below; a frame that jumps
  // over the canary word without writing it goes unseen). With page guards a
  // bubble needs a kernel mapping per chunk of 64 stacks on Linux 6.13 and later, but two per
  // stack on older kernels (at most ~32,000 threads under the default vm.max_map_count); canary
  // stacks need one per chunk everywhere.
  StackGuard stack_guard = StackGuard::page;
  // What the bubble threads run on (see ThreadModel). The model changes only the cost of a switch
  // and where thread_local variables live: schedules, virtual times, traces and failure reports
  // are the same in both, so a seed or a schedule replays identically in either. With os_threads,
  // stack_size is each OS thread's stack size (at least the system's minimum), stack_guard does
  // not apply (the C library guards thread stacks with a page), and a thread's thread_local
  // destructors run when its OS thread ends, after the bubble thread has exited and outside the
  // bubble (they must not use the bubble's primitives); run() returns once every one has run.
  ThreadModel thread_model = ThreadModel::fibers;
  // A name for messages (Runtime::name()); default "bubble", the same for every run, so that a
  // failure's message is byte-identical in its replays and in other processes.
  std::string name{};
  // Appended to the replay line of failures, e.g. "./pool_tests --gtest_filter=Pool.Drains".
  std::string replay_command{};
  // The seed of the run's random streams (bubble::random(), see random.hpp). It is independent of
  // the strategy, so every schedule of a program (and every replay of one) draws the same numbers
  // in each thread: exploring schedules changes interleavings, not data. Vary it to vary the
  // data; within a RapidCheck property, draw the program's inputs from RapidCheck instead.
  std::uint64_t random_seed = 0;
  // When an exception derived from std::exception escapes a bubble thread, run() writes the
  // failure's message (ending with the replay line) to stderr and rethrows that exception with its
  // own type, instead of a RunFailure nesting it; `EXPECT_THROW(run(...), std::out_of_range)`
  // then works. Other failures (deadlocks, budgets) still throw DeadlockError or RunFailure.
  // Leave it off where failures are expected as RunFailure (the testing glue explores schedules
  // by catching RunFailure).
  bool rethrow_original = false;
  // If set, the run captures call stacks (the return addresses of a bubble thread each time it
  // blocks, and of the code that spawned it), and its failure report lists, under each blocked
  // thread, its stack symbolized by this function and where it was spawned, with the first frame
  // of the user's code (is_user_frame) marked and given as the thread's location: the user's
  // line also when the blocking call is made through std::lock_guard or a container's
  // emplace_back. Each block then costs a stack walk (figures in docs/PERFORMANCE.md), so it is
  // off by default; BUBBLE_TEST replays a failing run once more with it on.
  // bubble::testing::stack_symbolizer() (bubble/testing/stacks.hpp) is one, on GCC's libbacktrace.
  StackSymbolizer symbolize_stacks{};
  // Routes the standard library's threads, locks, clocks and sleeps of this run's threads into the
  // bubble, when bubble::interpose is linked into the program (docs/unmodified-code.md):
  // std::thread becomes a bubble thread, std::mutex a bubble mutex, steady_clock virtual time,
  // sleep_for a virtual sleep. Without bubble::interpose linked it changes nothing. Off by default,
  // so runs that do not ask for it pay nothing.
  bool intercept_std = false;
};

// What a successful run() returns.
struct RunResult {
  // The decisions taken; Options::replay = schedule reproduces the run.
  Schedule schedule{};
  // The strategy the run used (the replay schedule as a choices strategy when replaying).
  Strategy strategy{};
  // Scheduling steps taken (scheduling points, blocks, exits, timer fires).
  std::uint64_t steps = 0;
  // Virtual time from start to the end of the run.
  Duration elapsed{};
  // Threads spawned, the root included.
  std::uint64_t threads = 0;
  // Timer callbacks and park deadlines that fired.
  std::uint64_t timers_fired = 0;
  // The trace (empty unless Options::trace).
  Trace trace{};

  // "replay: BUBBLE_STRATEGY=..." as in failure messages (without replay_command).
  std::string replay_line() const;
  std::string trace_text() const { return trace.text(); }
  std::string trace_json() const { return trace.chrome_json(); }
};

// A failed run: its message says what failed, where and when (virtual time), and ends with the
// replay line. Copies share the trace.
class RunFailure : public std::runtime_error {
 public:
  RunFailure(const std::string& message, Schedule schedule, Strategy strategy,
             std::shared_ptr<const Trace> trace);
  // The schedule recorded up to the failure; replaying it reproduces the failure.
  const Schedule& schedule() const noexcept { return schedule_; }
  // The strategy of the failed run.
  const Strategy& strategy() const noexcept { return strategy_; }
  // The trace up to the failure (empty unless Options::trace).
  const Trace& trace() const noexcept;
  // If the run failed because an exception escaped a bubble thread, rethrows that exception,
  // with its original type (the one nested in this RunFailure). Otherwise (a deadlock, an
  // exhausted budget) returns, so `e.rethrow_original(); throw;` rethrows either the original
  // exception or the RunFailure itself.
  void rethrow_original() const;

 private:
  Schedule schedule_;
  Strategy strategy_;
  std::shared_ptr<const Trace> trace_;
};

// No thread could run, no timer was pending, and threads remained blocked. The message lists
// every thread that had not exited: its id, name, state, what it was blocked on (kind and object
// id) and the source location of the blocking call, then the replay line. More than 20 threads
// with the same state, kind and location are one line instead, counting them and naming the
// first three ("100,000 threads blocked on Channel::receive (object #3) at f.cpp:12: #2 "w",
// #3 "w", #4 "w" and 99,997 more"). Every RunFailure's message lists threads the same way.
class DeadlockError : public RunFailure {
 public:
  using RunFailure::RunFailure;
};

// Runs `root` as the root thread (#1, "root") of a new bubble on the calling OS thread and
// returns once every bubble thread has exited; throws as described above. Calling run() from
// inside a bubble throws std::logic_error. Bad options (a zero stack size, an empty root) throw
// std::invalid_argument, and so does Options::intercept_std in a program that has no interposer
// (intercept_std_available()): its std::thread, std::mutex and clocks would run for real.
RunResult run(const Options& options, std::function<void(Runtime&)> root);
// run() with default options.
RunResult run(std::function<void(Runtime&)> root);

// Whether this process has bubble::interpose, linked into the program or preloaded
// (LD_PRELOAD=libbubble_interpose.so), so that Options::intercept_std can take effect.
bool intercept_std_available() noexcept;

// The line that replays a run of `strategy` in this process ("replay: BUBBLE_STRATEGY=random:7"),
// as failure messages end. In a program whose interposer is preloaded, it starts with the
// LD_PRELOAD that loaded it ("replay: LD_PRELOAD=/usr/lib/libbubble_interpose.so
// BUBBLE_STRATEGY=random:7"), without which the replay would run on real threads.
std::string replay_line(const Strategy& strategy);

// Returns when every other thread of the calling thread's bubble is blocked or has exited.
// Does not move time (timers already due fire first, as at any scheduling decision). Throws
// std::logic_error outside a bubble, in a timer callback, or while another thread of the bubble
// is in wait(). Like Go's synctest.Wait.
void wait(SourceLocation where = SourceLocation::current());

// sleep_for(d) then wait(): the common "let the time pass and everything settle" step.
void sleep_and_wait(Duration d, SourceLocation where = SourceLocation::current());

}  // namespace bubble

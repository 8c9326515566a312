// The system runtime: real threads, a calibrated cycle-counter clock (system/system_clock.hpp), one
// parker per OS thread and one shared timer thread.
//
// Parking. Every OS thread owns a Parker: one 32-bit futex word, after Rust's futex-based thread
// parker (std::thread::park): 0 empty, 1 a wake-up token, and all bits set while the thread
// sleeps. prepare() binds a Waiter to the calling thread's Parker. unpark() reads the Parker from
// the Waiter, sets the waiter's notified flag (release), then puts a token in the Parker and makes
// the futex system call only if the thread sleeps: after the flag is set, the woken thread may
// return and destroy the Waiter, so unpark never touches it again. park() first spins, kSpins
// `pause` rounds watching the waiter's flag; then it sleeps on the futex, taking tokens, until the
// flag is set or the deadline passes.
//
// Spinning only where it can pay (Go's scheduler rule, runtime/proc.go: an M spins only while
// there are idle processors and fewer spinning Ms than half the busy ones). A spin saves the
// waker's futex call and the sleeper's wake-up only if the thread that will wake it is running
// meanwhile; with more awake threads than processors, the spinner takes a processor from a
// thread that could be that waker, or from the holder of the lock it waits for. So the runtime
// counts the threads that hold a parker and are not asleep on it (running, or spinning in
// park), and a thread spins only while that count, itself included, is at most the number of
// processors and fewer than half the processors (at least one) already spin; otherwise it sleeps
// at once. Threads that never parked are not counted (the count is a lower bound); a thread
// blocked elsewhere (a system call, a std::mutex) counts as awake (so the rule errs towards
// sleeping). A token only ever means
// "look at your waiter again", so a stale one (left by an unpark whose waiter's thread saw the
// flag while spinning) costs one more look, never a wrong result.
//
// Parkers outlive their threads: they come from a process-wide free list and are never freed.
// A waker may still be putting its token in a Parker after the waiter's thread saw the flag and
// exited; the Parker is then idle or already another thread's, which wakes once for nothing.
// ThreadSanitizer sees every ordering that matters (they are all on atomics); the futex calls
// only sleep and wake.
//
// Clock. now() is SystemClock::now(). Park deadlines and the timer thread's waits are relative
// (the time left on that clock), so they agree with it whether it reads the cycle counter or
// steady_clock.
//
// Timers. One timer thread, started by the first schedule_at, serves every timer of the process.
// Pending timers are kept in an ordered map keyed by (deadline, id), so the earliest is first,
// ties fire in creation order and cancel_timer removes an entry in O(log n) (a cancelled timer
// leaves nothing behind, unlike a lazily-deleted heap). Callbacks run on the timer thread, outside
// its lock, one at a time.
//
// Lifetime. The runtime is created on first use and never destroyed: system_runtime() returns a
// heap object that is reachable from a function-local static pointer for the whole life of the
// process (so LeakSanitizer sees it as reachable, not leaked). The timer thread is detached and,
// when idle, waits on a condition variable that belongs to that never-destroyed object; at process
// exit it is simply abandoned while waiting, which is safe because nothing it can touch is ever
// destroyed. ThreadSanitizer does not report detached threads. A timer callback that is running
// while the process exits may of course observe static objects being destroyed; timer callbacks
// are short and process exit with live timers is the program's business.

#include <time.h>
#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <unordered_map>
#include <utility>

#include <bubble/detail/cpu_relax.hpp>
#include <bubble/runtime.hpp>

#include "kernel/futex.hpp"
#include "system/system_clock.hpp"

namespace bubble {
namespace {

// Deadlines further away than this are treated as "no deadline", so that converting them for
// the standard library can never overflow (about 114 years).
constexpr Duration kForever = std::chrono::hours(1'000'000);

// A parker's spin, in `pause` rounds. A futex sleep and wake-up cost a few microseconds of system
// calls and scheduling on each side. A pause takes from about ten to about 140 cycles depending
// on the processor, so kSpins pauses are a few microseconds, about what the sleep and wake-up it
// saves would cost. The spin is fixed, the same for every wait: an adaptive bound settled low
// under a pool of empty jobs, whose workers then slept more often per job, and a much larger one
// made such a pool flip, run to run, into a regime of spinning threads at a fraction of the
// throughput (pool_bench's BM_BubblePool/busy:0/measure_latency:1, with
// tools/bench/pool_counts.py for the sleeps per job).
constexpr int kSpins = 256;

// The spin rule's counts (see "Spinning only where it can pay").
struct SpinCensus {
  std::atomic<int> awake{0};     // Threads holding a parker, not asleep on its futex.
  std::atomic<int> spinning{0};  // Of those, threads spinning in park.
  const int processors = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int max_spinning = std::max(1, processors / 2);

  // Whether a thread that is about to park may spin now; if so, it is counted as spinning until
  // it calls spin_ended().
  bool begin_spin() noexcept {
    if (awake.load(std::memory_order_relaxed) > processors) return false;
    int n = spinning.load(std::memory_order_relaxed);
    do {
      if (n >= max_spinning) return false;
    } while (!spinning.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
    return true;
  }
  void spin_ended() noexcept { spinning.fetch_sub(1, std::memory_order_relaxed); }
};

SpinCensus& spin_census() noexcept {
  static SpinCensus census;  // Constant-initialised apart from the processor count.
  return census;
}

// The blocking half of a system thread: one per OS thread while it lives (see "Parking").
struct Parker {
  static constexpr std::uint32_t kEmpty = 0;
  static constexpr std::uint32_t kToken = 1;
  static constexpr std::uint32_t kSleeping = ~std::uint32_t{0};

  std::atomic<std::uint32_t> word{kEmpty};
  Parker* next_free = nullptr;

  // Takes a token if there is one, else sleeps until one comes, `timeout` elapses (nullptr:
  // none) or the futex wakes spuriously. Only the parker's own thread calls it.
  void sleep(const timespec* timeout) noexcept {
    // kToken -> kEmpty (took it), or kEmpty -> kSleeping.
    if (word.fetch_sub(1, std::memory_order_acquire) == kToken) return;
    SpinCensus& census = spin_census();
    census.awake.fetch_sub(1, std::memory_order_relaxed);
    detail::futex_wait(word, kSleeping, timeout);
    census.awake.fetch_add(1, std::memory_order_relaxed);
    word.exchange(kEmpty, std::memory_order_acquire);  // Takes a token that came meanwhile.
  }

  // Leaves a token; wakes the thread if it sleeps. Any thread; never blocks.
  void wake() noexcept {
    if (word.exchange(kToken, std::memory_order_release) == kSleeping) {
      detail::futex_wake_one(word);
    }
  }
};

// The process-wide store of parkers: never freed, reused by later threads.
class ParkerStore {
 public:
  Parker* take() {
    std::lock_guard lock(mutex_);
    if (free_ == nullptr) return new Parker();  // Never deleted: see "Parking".
    Parker* p = free_;
    free_ = p->next_free;
    p->next_free = nullptr;
    return p;
  }
  void give_back(Parker* p) noexcept {
    std::lock_guard lock(mutex_);
    p->next_free = free_;
    free_ = p;
  }

 private:
  std::mutex mutex_;
  Parker* free_ = nullptr;
};

ParkerStore& parker_store() {
  static ParkerStore* const store = new ParkerStore();  // Never destroyed: threads outlive main.
  return *store;
}

// The calling OS thread's parker, taken on first use and given back when the thread exits.
Parker& this_thread_parker() {
  struct Holder {
    Parker* parker = parker_store().take();
    Holder() { spin_census().awake.fetch_add(1, std::memory_order_relaxed); }
    ~Holder() {
      spin_census().awake.fetch_sub(1, std::memory_order_relaxed);
      parker_store().give_back(parker);
    }
  };
  thread_local Holder holder;
  return *holder.parker;
}

timespec to_timespec(Duration d) noexcept {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(d);
  return timespec{static_cast<time_t>(s.count()), static_cast<long>((d - s).count())};
}

class SystemThreadHandle final : public ThreadHandle {
 public:
  SystemThreadHandle(std::string name, std::thread thread)
      : name_(std::move(name)), thread_(std::move(thread)) {}

  ~SystemThreadHandle() override {
    if (thread_.joinable()) thread_.detach();
  }

  void join(SourceLocation /*where*/) override {
    if (!thread_.joinable()) {
      throw std::logic_error("bubble::ThreadHandle::join: thread '" + name_ +
                             "' was already joined");
    }
    if (thread_.get_id() == std::this_thread::get_id()) {
      throw std::logic_error("bubble::ThreadHandle::join: thread '" + name_ +
                             "' cannot join itself");
    }
    thread_.join();
  }

  const std::string& name() const noexcept override { return name_; }

 private:
  std::string name_;
  std::thread thread_;
};

[[noreturn]] void terminate_escaped(const std::string& name) noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bubble: exception escaped system thread '%s': %s: %s\n", name.c_str(),
                 typeid(e).name(), e.what());
  } catch (...) {
    std::fprintf(stderr, "bubble: unknown exception escaped system thread '%s'\n", name.c_str());
  }
  std::fflush(stderr);
  std::terminate();
}

class SystemRuntime final : public Runtime {
 public:
  SystemRuntime() noexcept : Runtime(/*controlled=*/false) {}

  std::string_view name() const noexcept override { return "system"; }

  TimePoint now() const noexcept override { return detail::SystemClock::now(); }

  WallTime wall_now() const noexcept override {
    return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  }

  std::unique_ptr<ThreadHandle> do_spawn(std::string name, std::function<void()> body,
                                         SourceLocation /*where*/) override {
    if (!body) {
      throw std::invalid_argument("bubble::system_runtime: spawn of thread '" + name +
                                  "' with an empty body");
    }
    std::thread thread([name, body = std::move(body)]() mutable {
      try {
        body();
      } catch (...) {
        terminate_escaped(name);
      }
    });
    return std::make_unique<SystemThreadHandle>(std::move(name), std::move(thread));
  }

  void prepare(Waiter& waiter) override { thread_slot(waiter) = &this_thread_parker(); }

  ParkResult park(Waiter& waiter, TimePoint deadline, const WaitInfo& /*what*/) override {
    Parker* parker = static_cast<Parker*>(thread_slot(waiter));
    if (parker == nullptr) {
      throw std::logic_error("bubble::system_runtime: park on a Waiter that was not prepared");
    }
    if (parker != &this_thread_parker()) {
      throw std::logic_error("bubble::system_runtime: park on a Waiter prepared by another thread");
    }
    if (waiter.notified()) return ParkResult::notified;
    // The clock is read only for a real deadline. (Compared only when deadline > start, so the
    // subtraction cannot overflow.)
    const bool forever = deadline == kNoDeadline || [&] {
      const TimePoint start = now();
      return deadline > start && deadline - start > kForever;
    }();
    // Spin first, where it can pay (see "Spinning only where it can pay"): a wake-up that comes
    // within the spin costs no system call on either side.
    SpinCensus& census = spin_census();
    if (census.begin_spin()) {
      bool caught = false;
      for (int i = 0; i < kSpins && !caught; ++i) {
        detail::cpu_relax();
        caught = waiter.notified();
      }
      census.spin_ended();
      if (caught) return ParkResult::notified;
    }
    for (;;) {
      if (waiter.notified()) return ParkResult::notified;
      if (forever) {
        parker->sleep(nullptr);
        continue;
      }
      const TimePoint t = now();
      if (t >= deadline) return ParkResult::timed_out;
      const timespec left = to_timespec(deadline - t);
      parker->sleep(&left);
    }
  }

  void unpark(Waiter& waiter) noexcept override {
    Parker* parker = static_cast<Parker*>(thread_slot(waiter));
    assert(parker != nullptr && "bubble::system_runtime: unpark of a Waiter never prepared");
    // The flag first: from then on the waiter's thread may destroy `waiter` (see "Parking").
    mark_notified(waiter);
    parker->wake();
  }

  TimerId schedule_at(TimePoint deadline, std::function<void()> callback) override {
    if (!callback) {
      throw std::invalid_argument("bubble::system_runtime: schedule_at with an empty callback");
    }
    std::lock_guard lock(timer_mutex_);
    if (!timer_thread_started_) {
      std::thread([this] { timer_loop(); }).detach();
      timer_thread_started_ = true;
    }
    const TimerId id = next_timer_id_++;
    const auto it = timers_.emplace(TimerKey{deadline, id}, std::move(callback)).first;
    deadlines_.emplace(id, deadline);
    // Wake the timer thread only if its next deadline changed.
    if (it == timers_.begin()) timer_cv_.notify_one();
    return id;
  }

  bool cancel_timer(TimerId id) noexcept override {
    std::lock_guard lock(timer_mutex_);
    const auto found = deadlines_.find(id);
    if (found == deadlines_.end()) return false;
    timers_.erase(TimerKey{found->second, id});
    deadlines_.erase(found);
    // The timer thread may now sleep longer than needed; it wakes, finds nothing due, sleeps on.
    return true;
  }

  void schedule_point(const WaitInfo& /*what*/) override {}

  void yield(SourceLocation /*where*/) override { std::this_thread::yield(); }

  std::uint64_t new_object_id() noexcept override {
    return next_object_id_.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  struct TimerKey {
    TimePoint deadline;
    TimerId id;
    friend bool operator<(const TimerKey& a, const TimerKey& b) noexcept {
      return a.deadline != b.deadline ? a.deadline < b.deadline : a.id < b.id;
    }
  };

  [[noreturn]] void timer_loop() {
    std::unique_lock lock(timer_mutex_);
    for (;;) {
      if (timers_.empty()) {
        timer_cv_.wait(lock);
        continue;
      }
      const auto first = timers_.begin();
      const TimePoint deadline = first->first.deadline;
      const TimePoint t = now();
      if (t < deadline) {
        // Relative, on this runtime's clock (see "Clock" at the top of this file).
        if (deadline - t > kForever) {
          timer_cv_.wait(lock);
        } else {
          timer_cv_.wait_for(lock, deadline - t);
        }
        continue;
      }
      std::function<void()> callback = std::move(first->second);
      deadlines_.erase(first->first.id);
      timers_.erase(first);
      lock.unlock();
      try {
        callback();
      } catch (...) {
        terminate_escaped("timer");
      }
      callback = nullptr;  // Destroy captured state outside the lock too.
      lock.lock();
    }
  }

  std::atomic<std::uint64_t> next_object_id_{1};

  std::mutex timer_mutex_;
  std::condition_variable timer_cv_;
  bool timer_thread_started_ = false;
  TimerId next_timer_id_ = 1;
  std::map<TimerKey, std::function<void()>> timers_;
  std::unordered_map<TimerId, TimePoint> deadlines_;
};

}  // namespace

Runtime& system_runtime() noexcept {
  // Never destroyed: see "Lifetime" at the top of this file.
  static SystemRuntime* const runtime =
      new SystemRuntime();  // NOLINT(bugprone-unhandled-exception-at-new): would end the process

  return *runtime;
}

}  // namespace bubble

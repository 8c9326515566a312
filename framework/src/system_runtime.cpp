// The system runtime: real threads, the steady clock, one parker per OS thread and one shared
// timer thread.
//
// Parking. Every OS thread owns a Parker (a std::mutex and a std::condition_variable) in a
// thread_local. prepare() binds a Waiter to the calling thread's Parker; unpark() sets the
// waiter's notified flag and signals the condition variable, both under the Parker's mutex; park()
// reads the flag only under that mutex. So once park() has seen the flag, the waker has released
// the Parker and will never touch the Waiter or the Parker again: the waiter's thread may return,
// destroy the Waiter and even exit (destroying its Parker) without a race.
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

#include <atomic>
#include <cassert>
#include <chrono>
#include <condition_variable>
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

#include <bubble/runtime.hpp>

namespace bubble {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

TimePoint to_time_point(SteadyTime t) noexcept {
  return TimePoint(std::chrono::duration_cast<Duration>(t.time_since_epoch()));
}

// Deadlines further away than this are treated as "no deadline", so that converting them for
// the standard library can never overflow (about 114 years).
constexpr Duration kForever = std::chrono::hours(1'000'000);

// The blocking half of a system thread: one per OS thread.
struct Parker {
  std::mutex mutex;
  std::condition_variable cv;
};

Parker& this_thread_parker() noexcept {
  thread_local Parker parker;
  return parker;
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

  TimePoint now() const noexcept override {
    return to_time_point(std::chrono::steady_clock::now());
  }

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
    std::unique_lock lock(parker->mutex);
    // The clock is read only for a real deadline. (Compared only when deadline > start, so the
    // subtraction cannot overflow.)
    const bool forever = deadline == kNoDeadline || [&] {
      const TimePoint start = now();
      return deadline > start && deadline - start > kForever;
    }();
    if (forever) {
      while (!waiter.notified()) parker->cv.wait(lock);
      return ParkResult::notified;
    }
    const SteadyTime until{std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        deadline.time_since_epoch())};
    while (!waiter.notified()) {
      if (now() >= deadline) return ParkResult::timed_out;
      parker->cv.wait_until(lock, until);
    }
    return ParkResult::notified;
  }

  void unpark(Waiter& waiter) noexcept override {
    Parker* parker = static_cast<Parker*>(thread_slot(waiter));
    assert(parker != nullptr && "bubble::system_runtime: unpark of a Waiter never prepared");
    // Everything under the parker's mutex: see the comment at the top of this file.
    std::lock_guard lock(parker->mutex);
    mark_notified(waiter);
    parker->cv.notify_one();
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
      if (now() < deadline) {
        if (deadline - now() > kForever) {
          timer_cv_.wait(lock);
        } else {
          timer_cv_.wait_until(
              lock, SteadyTime{std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        deadline.time_since_epoch())});
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
  static SystemRuntime* const runtime = new SystemRuntime();
  return *runtime;
}

}  // namespace bubble

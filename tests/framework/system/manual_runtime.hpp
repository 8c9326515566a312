#pragma once

// ManualRuntime: a test Runtime whose clock and timers are a bubble::ManualClock that the test
// advances by hand, while threads and parking are the system runtime's. It lets the system tests
// check time-driven behaviour exactly (which fire time a Timer delivers, which ticks a stalled
// Ticker drops, that a context's deadline timer is cancelled) without sleeping. It is not
// controlled unless constructed with `controlled = true`, in which case it records every
// scheduling point (kind and object id) instead of switching threads; parks must not have a
// deadline (the system runtime would read it on the steady clock).

#include <bubble/manual_clock.hpp>
#include <bubble/runtime.hpp>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace bubble_test {

class ManualRuntime final : public bubble::Runtime {
 public:
  explicit ManualRuntime(bool controlled = false) : Runtime(controlled) {}

  std::string_view name() const noexcept override { return "manual"; }
  bubble::TimePoint now() const noexcept override {
    std::lock_guard lock(mutex_);
    return clock_.now() + lag_;
  }
  bubble::WallTime wall_now() const noexcept override { return bubble::WallTime{}; }

  std::unique_ptr<bubble::ThreadHandle> do_spawn(std::string name, std::function<void()> body,
                                                 bubble::SourceLocation where) override {
    spawned_.fetch_add(1);
    return bubble::system_runtime().spawn(std::move(name), std::move(body), where);
  }

  void prepare(bubble::Waiter& w) override { bubble::system_runtime().prepare(w); }
  bubble::ParkResult park(bubble::Waiter& w, bubble::TimePoint deadline,
                          const bubble::WaitInfo& what) override {
    if (deadline != bubble::kNoDeadline) {
      throw std::logic_error("ManualRuntime: park with a deadline is not supported");
    }
    return bubble::system_runtime().park(w, deadline, what);
  }
  void unpark(bubble::Waiter& w) noexcept override { bubble::system_runtime().unpark(w); }

  bubble::TimerId schedule_at(bubble::TimePoint deadline, std::function<void()> fn) override {
    std::lock_guard lock(mutex_);
    ++scheduled_;
    return clock_.schedule_at(deadline, std::move(fn));
  }
  bool cancel_timer(bubble::TimerId id) noexcept override {
    std::lock_guard lock(mutex_);
    const bool cancelled = clock_.cancel(id);
    if (cancelled) ++cancelled_;
    return cancelled;
  }

  void schedule_point(const bubble::WaitInfo& what) override {
    if (!controlled()) {
      throw std::logic_error("ManualRuntime: schedule_point on an uncontrolled runtime");
    }
    std::lock_guard lock(mutex_);
    points_.push_back({std::string(what.kind), what.object_id});
  }
  void yield(bubble::SourceLocation) override { std::this_thread::yield(); }
  std::uint64_t new_object_id() noexcept override { return next_id_.fetch_add(1) + 1; }

  // Makes the calling OS thread a thread of this runtime until the returned guard is destroyed
  // (detail::set_current_runtime, as a runtime does for its threads): a controlled ManualRuntime's
  // primitives check that their callers run on it.
  class Entered {
   public:
    explicit Entered(ManualRuntime& rt) noexcept { bubble::detail::set_current_runtime(&rt); }
    Entered(const Entered&) = delete;
    Entered& operator=(const Entered&) = delete;
    ~Entered() { bubble::detail::set_current_runtime(nullptr); }
  };
  [[nodiscard]] Entered enter() noexcept { return Entered(*this); }

  // Moves the clock forward, running due timer callbacks on the calling thread (in deadline
  // order, each seeing now() == its deadline). Returns how many ran.
  std::size_t advance(bubble::Duration d) {
    std::lock_guard lock(mutex_);
    return clock_.advance(d);
  }
  std::size_t pending_timers() const {
    std::lock_guard lock(mutex_);
    return clock_.pending();
  }
  int scheduled() const {
    std::lock_guard lock(mutex_);
    return scheduled_;
  }
  int cancelled() const {
    std::lock_guard lock(mutex_);
    return cancelled_;
  }
  int spawned() const { return spawned_.load(); }

  // Makes now() run `lag` ahead of the timers: a timer callback then sees a now() later than its
  // deadline, as when a real runtime delivers a timer late.
  void set_lag(bubble::Duration lag) {
    std::lock_guard lock(mutex_);
    lag_ = lag;
  }

  struct Point {
    std::string kind;
    std::uint64_t object_id;
  };
  // The scheduling points recorded so far (controlled runtimes only), and clears them.
  std::vector<Point> take_points() {
    std::lock_guard lock(mutex_);
    return std::exchange(points_, {});
  }

 private:
  // Recursive: timer callbacks run under it and may schedule or cancel timers.
  mutable std::recursive_mutex mutex_;
  bubble::ManualClock clock_;
  bubble::Duration lag_{0};
  int scheduled_ = 0;
  int cancelled_ = 0;
  std::atomic<int> spawned_{0};
  std::vector<Point> points_;
  std::atomic<std::uint64_t> next_id_{0};
};

}  // namespace bubble_test

#pragma once

// A timer service on std::thread, std::mutex, std::condition_variable::wait_until and
// std::chrono::steady_clock, written with the standard library only: one worker thread runs each
// scheduled task at its deadline, earliest first (ties in scheduling order).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace components {

class TimerService {
 public:
  using Clock = std::chrono::steady_clock;

  TimerService() : worker_([this] { run(); }) {}

  // Stops the worker; tasks not yet due never run.
  ~TimerService() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_one();
    worker_.join();
  }

  TimerService(const TimerService&) = delete;
  TimerService& operator=(const TimerService&) = delete;

  // Runs `task` on the worker once `delay` has passed.
  void schedule(Clock::duration delay, std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.emplace(std::pair{Clock::now() + delay, next_seq_++}, std::move(task));
    }
    changed_.notify_one();
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      if (tasks_.empty()) {
        changed_.wait(lock);
        continue;
      }
      auto first = tasks_.begin();
      if (Clock::now() < first->first.first) {
        changed_.wait_until(lock, first->first.first);
        continue;
      }
      std::function<void()> task = std::move(first->second);
      tasks_.erase(first);
      lock.unlock();
      task();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::pair<Clock::time_point, std::uint64_t>, std::function<void()>> tasks_;
  std::uint64_t next_seq_ = 0;
  bool stopping_ = false;
  std::thread worker_;  // Last: starts once the members it uses exist.
};

// A rate limiter on steady_clock and sleep_for: acquire() lets one caller through every
// `interval`, sleeping until its slot; callers are served in the order they took their slots.
class IntervalLimiter {
 public:
  explicit IntervalLimiter(std::chrono::steady_clock::duration interval) : interval_(interval) {}

  void acquire() {
    std::chrono::steady_clock::time_point slot;
    {
      std::lock_guard lock(mutex_);
      const auto now = std::chrono::steady_clock::now();
      if (next_ < now) next_ = now;
      slot = next_;
      next_ += interval_;
    }
    std::this_thread::sleep_for(slot - std::chrono::steady_clock::now());
  }

 private:
  const std::chrono::steady_clock::duration interval_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point next_{};
};

}  // namespace components

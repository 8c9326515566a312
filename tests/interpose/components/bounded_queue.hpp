#pragma once

// A blocking bounded queue, written as its authors would with the standard library only. It
// knows nothing of bubble: the interposer's tests run it in a bubble, unmodified, and on real
// threads.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace components {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity) {}

  // Blocks while the queue is full, then appends `value`.
  void push(T value) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return items_.size() < capacity_; });
    items_.push_back(std::move(value));
    lock.unlock();
    not_empty_.notify_one();
  }

  // Blocks while the queue is empty, then removes and returns the oldest value.
  T pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return !items_.empty(); });
    return take(lock);
  }

  // As pop(), but gives up after `timeout` and returns nothing.
  std::optional<T> pop_for(std::chrono::steady_clock::duration timeout) {
    std::unique_lock lock(mutex_);
    if (!not_empty_.wait_for(lock, timeout, [&] { return !items_.empty(); })) return std::nullopt;
    return take(lock);
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }

 private:
  T take(std::unique_lock<std::mutex>& lock) {
    T value = std::move(items_.front());
    items_.pop_front();
    lock.unlock();
    not_full_.notify_one();
    return value;
  }

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<T> items_;
};

}  // namespace components

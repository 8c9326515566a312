#pragma once

// A copy of BoundedQueue with a lost-wakeup bug, as an author "optimizing" notifications might
// write it: push() notifies only when the queue goes from empty to non-empty. With two consumers
// waiting, two pushes in a row before the first woken consumer runs wake only one of them; the
// second waits for ever although an item is queued. Only some interleavings show it.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

namespace components {

template <class T>
class EagerQueue {
 public:
  void push(T value) {
    std::unique_lock lock(mutex_);
    const bool was_empty = items_.empty();
    items_.push_back(std::move(value));
    lock.unlock();
    if (was_empty) not_empty_.notify_one();  // The bug: a second waiter is never woken.
  }

  T pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return !items_.empty(); });
    T value = std::move(items_.front());
    items_.pop_front();
    return value;
  }

 private:
  std::mutex mutex_;
  std::condition_variable not_empty_;
  std::deque<T> items_;
};

}  // namespace components

#pragma once

// The bubble's run queue: the runnable threads, in the order the scheduler considers them.

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace bubble::engine {

// A ring buffer of pointers to runnable threads (T is the engine's thread record); removal at any
// index, because strategies pick from the middle. A thread is in it at most once, so the engine
// reserves room for every live thread when it spawns one, and pushing never allocates:
// Runtime::unpark, which is noexcept, pushes. Pushing past the reserved room is an engine bug: it
// prints an internal error and aborts.
template <class T>
class RunQueue {
 public:
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  // The i-th thread from the front; i < size().
  T* operator[](std::size_t i) const noexcept { return buf_[(head_ + i) & mask_]; }
  // Makes room for `n` threads in all (may throw std::bad_alloc); never shrinks.
  void reserve(std::size_t n) {
    if (n > capacity_) [[unlikely]]
      grow(n);
  }
  std::size_t capacity() const noexcept { return capacity_; }
  void push_back(T* t) noexcept {
    if (size_ == capacity_) [[unlikely]]
      overflow();
    buf_[(head_ + size_) & mask_] = t;
    ++size_;
  }
  void push_front(T* t) noexcept {
    if (size_ == capacity_) [[unlikely]]
      overflow();
    head_ = (head_ - 1) & mask_;
    buf_[head_] = t;
    ++size_;
  }
  // Removes and returns the i-th thread (i < size()); the others keep their order.
  T* take(std::size_t i) noexcept {
    T* t = (*this)[i];
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
  // take(0) then push_back(t) when exactly one thread is queued (size() == 1): returns that
  // thread and leaves t alone in the queue, without the pushes' overflow check.
  T* exchange_single(T* t) noexcept {
    T*& slot = buf_[head_];
    T* const taken = slot;
    slot = t;
    return taken;
  }

  void clear() noexcept { size_ = head_ = 0; }

 private:
  [[gnu::noinline]] void grow(std::size_t n) {
    std::size_t size = buf_.empty() ? 16 : buf_.size();
    while (size < n) size *= 2;
    std::vector<T*> bigger(size);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    buf_ = std::move(bigger);
    head_ = 0;
    mask_ = buf_.size() - 1;
    capacity_ = buf_.size();
  }
  [[noreturn, gnu::cold]] static void overflow() noexcept {
    std::fprintf(stderr, "bubble: internal error: the run queue holds more threads than exist\n");
    std::abort();
  }
  std::vector<T*> buf_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
  std::size_t capacity_ = 0;  // buf_.size(), kept here for the pushes' overflow check.
};

}  // namespace bubble::engine

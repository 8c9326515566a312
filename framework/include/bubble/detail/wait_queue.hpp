#pragma once

#include <cstddef>

#include <bubble/runtime.hpp>

namespace bubble::detail {

// WaitQueue is an intrusive first-in-first-out list of Waiters, linked through Waiter::next and
// Waiter::prev. It owns nothing and allocates nothing; the primitive that holds it guards it with
// its own lock. A waiter is in at most one queue at a time; Waiter::queued says whether it is.
class WaitQueue {
 public:
  bool empty() const noexcept { return head_ == nullptr; }
  std::size_t size() const noexcept { return size_; }
  Waiter* front() const noexcept { return head_; }

  // Appends `w`, which must not be queued anywhere.
  void push_back(Waiter& w) noexcept {
    w.next = nullptr;
    w.prev = tail_;
    if (tail_ != nullptr) {
      tail_->next = &w;
    } else {
      head_ = &w;
    }
    tail_ = &w;
    w.queued = true;
    ++size_;
  }

  // Puts `w`, which must not be queued anywhere, first (a waiter that goes back to the front).
  void push_front(Waiter& w) noexcept {
    w.prev = nullptr;
    w.next = head_;
    if (head_ != nullptr) {
      head_->prev = &w;
    } else {
      tail_ = &w;
    }
    head_ = &w;
    w.queued = true;
    ++size_;
  }

  // Removes and returns the first waiter, or nullptr when empty.
  Waiter* pop_front() noexcept {
    Waiter* w = head_;
    if (w != nullptr) remove(*w);
    return w;
  }

  // Removes `w`, which must be in this queue.
  void remove(Waiter& w) noexcept {
    if (w.prev != nullptr) {
      w.prev->next = w.next;
    } else {
      head_ = w.next;
    }
    if (w.next != nullptr) {
      w.next->prev = w.prev;
    } else {
      tail_ = w.prev;
    }
    w.next = w.prev = nullptr;
    w.queued = false;
    --size_;
  }

 private:
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace bubble::detail

#pragma once

// The bubble's pending timers, ordered by deadline and then by creation.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <bubble/time.hpp>

namespace bubble::engine {

// A pending timer in the heap: its deadline and key = creation sequence << 24 | slot. Ordering by
// (deadline, key) is (deadline, creation order); the key is also the TimerId.
struct TimerEntry {
  TimePoint deadline;
  std::uint64_t key;
  std::uint32_t slot() const noexcept { return static_cast<std::uint32_t>(key & kSlotMask); }
  std::uint64_t seq() const noexcept { return key >> kSlotBits; }
  static constexpr int kSlotBits = 24;
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
};

// A 4-ary min-heap of timers by (deadline, key): half the depth of a binary heap, and the
// children of a node share cache lines, which matters with a million pending timers. Cancelled
// timers are not removed here: the engine drops them when they reach the top.
class TimerHeap {
 public:
  bool empty() const noexcept { return v_.empty(); }
  std::size_t size() const noexcept { return v_.size(); }
  // The earliest entry; the heap must not be empty.
  const TimerEntry& top() const noexcept { return v_.front(); }
  void clear() noexcept { v_.clear(); }
  // Adds an entry (may throw std::bad_alloc).
  void push(const TimerEntry& e) {
    v_.push_back(e);
    std::size_t i = v_.size() - 1;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!less(e, v_[parent])) break;
      v_[i] = v_[parent];
      i = parent;
    }
    v_[i] = e;
  }
  // Removes the earliest entry; the heap must not be empty.
  void pop() noexcept {
    const TimerEntry last = v_.back();
    v_.pop_back();
    const std::size_t n = v_.size();
    if (n == 0) return;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = std::min(first + 4, n);
      for (std::size_t c = first + 1; c < end; ++c) {
        if (less(v_[c], v_[best])) best = c;
      }
      if (!less(v_[best], last)) break;
      v_[i] = v_[best];
      i = best;
    }
    v_[i] = last;
  }

 private:
  static bool less(const TimerEntry& a, const TimerEntry& b) noexcept {
    return a.deadline != b.deadline ? a.deadline < b.deadline : a.key < b.key;
  }
  std::vector<TimerEntry> v_;
};

}  // namespace bubble::engine

#pragma once

// The bubble's pending timers, ordered by deadline and then by creation.

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <bubble/time.hpp>

namespace bubble::engine {

// A pending timer in the heap: its deadline and key = creation sequence << 24 | slot. Ordering by
// (deadline, key) is (deadline, creation order); the key is also the TimerId.
struct TimerEntry {
  TimePoint deadline{};
  std::uint64_t key = 0;
  std::uint32_t slot() const noexcept { return static_cast<std::uint32_t>(key & kSlotMask); }
  std::uint64_t seq() const noexcept { return key >> kSlotBits; }
  static constexpr int kSlotBits = 24;
  static constexpr std::uint64_t kSlotMask = (std::uint64_t{1} << kSlotBits) - 1;
};

// The pending timers, yielded by (deadline, key). Every push must have a greater key than the
// pushes before it (since the last clear()), as timers numbered in creation order do.
//
// Layout. A 4-ary min-heap of entries ordered by (deadline, key): half the depth of a binary
// heap, and a node's children share cache lines. Timers with the same deadline are common
// (threads that sleep the same period, tickers), so a heap entry can head a *run*: a FIFO list
// of later timers of its deadline, kept outside the heap. Runs live in a small direct-mapped
// table indexed by a hash of the deadline, at most one per table slot. The first timer of a
// deadline gets a plain entry and marks its slot as seen; the second, if the slot still has that
// deadline, gets an entry that heads a run in the slot; later ones are appended to the run in
// O(1), without touching the heap, while the run lives. A deadline whose slot holds another
// deadline's run gets plain entries. Popping a run's head moves the run's next timer into the
// entry in place; once the run is empty, popping its head frees the slot.
//
// Why the order holds: keys only grow, so a run's timers are in key order; and while a run of a
// deadline lives every new timer of that deadline joins it, so every timer of that deadline
// outside the run is older than all of the run's. A pop that moves the run's next timer into
// the head entry raises the entry's key, but only to a key still below every other timer of
// that deadline, so the entry stays the least and needs no sift. With many timers on few
// distinct deadlines (100,000 threads sleeping a few distinct periods) the heap stays a few
// entries deep and its memory in the cache; with distinct deadlines it is a plain heap, plus a
// table lookup per push and pop. Cancelled timers are not removed here: the engine drops them
// when they reach the top.
class TimerHeap {
 public:
  TimerHeap() = default;

  bool empty() const noexcept { return v_.empty(); }
  std::size_t size() const noexcept { return v_.size() + followers_; }
  // The earliest entry; the heap must not be empty.
  const TimerEntry& top() const noexcept { return v_.front(); }

  void swap(TimerHeap& other) noexcept { std::swap(*this, other); }

  // Empties the heap; its memory stays for later pushes.
  void clear() noexcept {
    v_.clear();
    nodes_.clear();
    free_nodes_ = kNone;
    followers_ = 0;
    // The table is made on the first push and reset only if used: a run without timers pays
    // nothing for it.
    if (table_used_) std::fill(table_.begin(), table_.end(), Slot{});
    table_used_ = false;
    last_key_ = 0;
  }

  // Adds an entry, whose key must be greater than every key pushed before (may throw
  // std::bad_alloc, and then changes nothing). Always inlined: the engine adds a timer from one
  // place, and out of line it costs a fifth more per timer.
  [[gnu::always_inline]] void push(const TimerEntry& e) {
    assert(empty() || e.key > last_key_);
    if (table_.empty()) [[unlikely]]
      make_table();  // Before any change: may throw.
    table_used_ = true;
    Slot& slot = table_[slot_index(e.deadline)];
    if (slot.state == State::run && slot.deadline == e.deadline) {
      if (free_nodes_ == kNone && nodes_.size() == nodes_.capacity()) {
        nodes_.reserve(2 * nodes_.size() + 16);
      }
      const std::uint32_t node = new_node(e.key);
      if (slot.last == kNone) {
        slot.first = node;
      } else {
        nodes_[slot.last].next = node;
      }
      slot.last = node;
      ++followers_;
    } else {
      heap_push(e);
      if (slot.state == State::seen && slot.deadline == e.deadline) {
        slot = Slot{e.deadline, e.key, kNone, kNone, State::run};  // The second: a run.
      } else if (slot.state != State::run) {
        slot = Slot{e.deadline, 0, kNone, kNone, State::seen};
      }
    }
    last_key_ = e.key;
  }

  // Removes the earliest entry; the heap must not be empty.
  void pop() noexcept {
    TimerEntry& front = v_.front();
    Slot& slot = table_[slot_index(front.deadline)];
    if (slot.state == State::run && slot.head_key == front.key && slot.deadline == front.deadline) {
      if (slot.first != kNone) {  // The run's next timer takes the entry's place.
        const std::uint32_t node = slot.first;
        front.key = slot.head_key = nodes_[node].key;
        slot.first = nodes_[node].next;
        if (slot.first == kNone) slot.last = kNone;
        free_node(node);
        --followers_;
        return;
      }
      slot.state = State::seen;  // The run is over; the next timer of its deadline starts one.
    }
    heap_pop();
  }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  static constexpr std::size_t kSlotBits = 7;
  static constexpr std::size_t kTableSlots = std::size_t{1} << kSlotBits;

  enum class State : std::uint8_t { empty, seen, run };
  // A slot of the table: a deadline pushed recently (seen), or the run it holds: the key of the
  // heap entry that heads it, and its list of later timers (first..last, kNone if none).
  struct Slot {
    TimePoint deadline{};
    std::uint64_t head_key = 0;
    std::uint32_t first = kNone;
    std::uint32_t last = kNone;
    State state = State::empty;
  };
  struct Node {
    std::uint64_t key = 0;
    std::uint32_t next = kNone;  // The next node of its run, or of the free list.
  };

  // Out of line, so that push() stays small enough to be inlined into its caller.
  [[gnu::noinline, gnu::cold]] void make_table() { table_.resize(kTableSlots); }

  static std::size_t slot_index(TimePoint deadline) noexcept {
    const auto ticks = static_cast<std::uint64_t>(deadline.time_since_epoch().count());
    return static_cast<std::size_t>((ticks * 0x9e3779b97f4a7c15ULL) >> (64 - kSlotBits));
  }
  static bool less(const TimerEntry& a, const TimerEntry& b) noexcept {
    return a.deadline != b.deadline ? a.deadline < b.deadline : a.key < b.key;
  }

  // The caller has made room for one more node when the free list is empty.
  std::uint32_t new_node(std::uint64_t key) noexcept {
    std::uint32_t i = free_nodes_;
    if (i != kNone) {
      free_nodes_ = nodes_[i].next;
      nodes_[i] = Node{key, kNone};
    } else {
      i = static_cast<std::uint32_t>(nodes_.size());
      nodes_.push_back(Node{key, kNone});
    }
    return i;
  }
  void free_node(std::uint32_t i) noexcept {
    nodes_[i].next = free_nodes_;
    free_nodes_ = i;
  }

  void heap_push(const TimerEntry& e) {
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
  void heap_pop() noexcept {
    const TimerEntry last = v_.back();
    v_.pop_back();
    const std::size_t n = v_.size();
    if (n == 0) return;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = 4 * i + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + 4 < n ? first + 4 : n;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (less(v_[c], v_[best])) best = c;
      }
      if (!less(v_[best], last)) break;
      v_[i] = v_[best];
      i = best;
    }
    v_[i] = last;
  }

  std::vector<TimerEntry> v_;  // The heap.
  std::vector<Node> nodes_;    // The runs' later timers, and free nodes.
  std::uint32_t free_nodes_ = kNone;
  std::size_t followers_ = 0;  // Timers in runs' lists (not in the heap).
  std::vector<Slot> table_;    // kTableSlots slots once anything was pushed.
  bool table_used_ = false;    // Pushed to since the last clear().
  std::uint64_t last_key_ = 0;
};

}  // namespace bubble::engine

#pragma once

// The pool's inbox: where a submit leaves its job without taking the pool's mutex, for a worker to
// move into the structured queue (pool_queue.hpp) under that mutex before it takes a job. Private
// to bubble::pool.
//
// The same code runs on real threads and in a bubble: its shared fields are bubble::Atomic, so in a
// bubble every operation on them is a scheduling point and the interleavings of submitters and the
// consumer are explored like any other.
//
// The inbox is a bounded ring of node pointers with many producers and one consumer at a time
// (the holder of the pool's mutex). push() claims the next position with one compare-and-swap on
// the tail, any number of threads at once, and then stores its node in that position's slot;
// take_all() (mutex held) visits every claimed position from the head to the tail it read, in
// the order of the claims, and moves the head past them. The consumer learns every node's
// address from the slots, which sit side by side, before it reads the nodes: the loads of the
// nodes' lines (written by the submitters, on other processors) are independent of each other
// and overlap, where a linked stack makes the consumer follow one node's link to find the next.
//
// A position is claimed before its slot is filled. A slot's value carries, in its low bit, the
// lap of the ring it was stored in, so the consumer tells a filled slot from one that still holds
// the node of a lap before without ever writing to the slots (which would take their lines from
// the submitters). take_all() and close() wait for a claimed slot to be filled (the claimer is a
// few instructions from its store: the consumer spins briefly, then, in case the claimer was
// preempted there, yields to it through the runtime until it has run; in a bubble it yields at
// once): a submit that has returned is in the next take, whatever other submits are doing.
//
// Capacity. The ring has a power of two of slots, at least the pool's queue capacity up to
// kMaxSlots. The pool never has more jobs in the inbox than its capacity (pool_occupancy.hpp),
// so a ring as large as the capacity is never full; a smaller one can be, and push() then fails
// (the job goes through the locked path, which drains the ring). A claimer compares the tail with
// the last head any claimer read (kept next to the tail), and reads the head itself (a line the
// consumer writes at every take) only when that value leaves no room.
//
// close() (mutex held) sets a mark in the tail and takes what was claimed before it: a push that
// finds the mark fails, so that no job enters after shutdown has taken the inbox's last contents
// (the job goes through the locked path, which refuses it with errc::closed).
//
// Memory ordering. push() fills the node before it claims its position (a sequentially
// consistent compare-and-swap, so also a release) and then stores it into its slot with release;
// the consumer reads the tail and the slot with acquire, so it sees every field the submitter
// wrote. The consumer reads the slots it takes and then publishes the new head with release; a
// claimer reads the head (or the kept copy, which is stored with release after an acquiring read
// of the head) with acquire, so it overwrites a slot only after the consumer has read it. The
// claim's sequential consistency is also what has_pushes() needs.
//
// Nodes. The inbox supplies its own nodes (PoolNode::from_inbox is set): allocate() takes one
// from a spare list under a SpinLock of its own (submitters only; the workers never take it), and
// recycle() gives one back with a lock-free push onto a Treiber stack (R. K. Treiber, "Systems
// Programming: Coping with Parallelism", IBM 1986; any thread), which allocate() takes whole when
// its list runs dry (only whole-stack takes: no ABA). It takes the stack outside its SpinLock: in
// a bubble the exchange is a scheduling point, and no thread may switch while holding a SpinLock.
// Nodes live in chunks that grow and never shrink; at most as many nodes exist as were ever live at
// once, so memory is bounded by the peak of the jobs queued, in flight and running.

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <bubble/atomic.hpp>
#include <bubble/detail/cpu_relax.hpp>
#include <bubble/detail/spin_lock.hpp>
#include <bubble/runtime.hpp>

#include "pool_queue.hpp"

namespace bubble::detail {

class PoolInbox {
 public:
  // The largest ring: 4,096 slots (32 KiB). A pool with a larger capacity falls back to its
  // locked path while the ring is full: while 4,096 pushed jobs wait to be moved into the queue
  // (every worker busy with a job all that time, and no locked submit or stats() meanwhile).
  static constexpr std::size_t kMaxSlots = 4096;

  // A ring for a pool of `rt` that holds at most `capacity` jobs; none (an inbox that is never
  // used) for a capacity of 0. `name` prefixes the names of its atomics in a bubble's traces.
  explicit PoolInbox(std::size_t capacity, const std::string& name = "inbox",
                     Runtime& rt = current_runtime())
      : rt_(rt),
        slots_count_(capacity == 0 ? 0 : std::bit_ceil(std::min(capacity, kMaxSlots))),
        lap_shift_(std::countr_zero(std::max<std::size_t>(slots_count_, 1))),
        slots_(std::make_unique<Atomic<std::uintptr_t>[]>(slots_count_)),
        tail_(name + ".tail", 0),
        head_seen_(name + ".head_seen", 0),
        head_(name + ".head", 0),
        recycled_(name + ".recycled", nullptr) {}
  PoolInbox(const PoolInbox&) = delete;
  PoolInbox& operator=(const PoolInbox&) = delete;
  ~PoolInbox() = default;  // Nodes, spare or not, are destroyed with their chunks.

  // A free node for a submitter to fill; every field of its item must be assigned. Any thread.
  PoolNode* allocate() {
    std::unique_lock<SpinLock> guard(spin_);
    if (spare_ == nullptr) {
      guard.unlock();
      PoolNode* recycled = recycled_.exchange(nullptr, std::memory_order_acquire);
      guard.lock();
      if (spare_ == nullptr) {
        spare_ = recycled;
      } else if (recycled != nullptr) {
        // Another submitter refilled the list meanwhile: put the stack taken after it.
        PoolNode* last = recycled;
        while (last->next != nullptr) last = last->next;
        last->next = spare_;
        spare_ = recycled;
      }
    }
    if (spare_ == nullptr) {
      constexpr std::size_t kChunk = 64;
      chunks_.push_back(std::make_unique<PoolNode[]>(kChunk));
      PoolNode* chunk = chunks_.back().get();
      for (std::size_t i = 0; i < kChunk; ++i) {
        chunk[i].from_inbox = true;
        chunk[i].next = spare_;
        spare_ = &chunk[i];
      }
    }
    PoolNode* node = spare_;
    spare_ = node->next;
    // The next allocate()'s node was last written by the worker that recycled it, on the other
    // processor: start fetching its lines now, so that filling it does not wait for each in turn.
    if (spare_ != nullptr) prefetch_for_write(spare_);
    return node;
  }

  // Gives back the nodes of allocate()'s from `first` to `last` (linked by `next`), whose items
  // hold no resources any more. Any thread; never blocks. (Release: the next allocate() sees the
  // items as this thread left them.)
  void recycle(PoolNode* first, PoolNode* last) noexcept {
    PoolNode* head = recycled_.load(std::memory_order_relaxed);
    do {
      last->next = head;
    } while (!recycled_.compare_exchange_weak(head, first, std::memory_order_release,
                                              std::memory_order_relaxed));
  }

  // Publishes a filled node; false, the node untouched, if close() has run or the ring is full.
  // Any thread; never blocks. The claim is sequentially consistent: a worker going idle bumps its
  // idle count and then calls has_pushes(), a pusher claims and then reads that count; in the
  // single order of sequentially consistent operations one of the two sees the other's write
  // (Dekker's argument), so a job is never left here with every worker asleep.
  bool push(PoolNode* node) noexcept {
    std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    std::uint64_t head = head_seen_.load(std::memory_order_acquire);
    do {
      if ((tail & kClosed) != 0) return false;
      if (tail - head >= slots_count_) {
        head = head_.load(std::memory_order_acquire);
        head_seen_.store(head, std::memory_order_release);
        if (tail - head >= slots_count_) return false;
      }
    } while (!tail_.compare_exchange_weak(tail, tail + 1, std::memory_order_seq_cst,
                                          std::memory_order_relaxed));
    slot(tail).store(reinterpret_cast<std::uintptr_t>(node) | lap_mark(tail),
                     std::memory_order_release);
    return true;
  }

  // Whether a push has claimed a position not yet taken. Sequentially consistent (see push()).
  // Called with the pool's mutex held.
  bool has_pushes() const noexcept {
    const std::uint64_t tail = tail_.load(std::memory_order_seq_cst) & ~kClosed;
    return tail != head_.unsync_load();  // Only the consumer writes the head.
  }

  // Calls `visit(node)` for every pushed node, in the order of their pushes, and takes them.
  // Called with the pool's mutex held, which also orders it against close().
  template <class Visit>
  void take_all(Visit&& visit) {
    const std::uint64_t tail = tail_.load(std::memory_order_acquire) & ~kClosed;
    take_up_to(tail, visit);
  }

  // Takes every pushed node, like take_all(), and makes every later push fail. Called with the
  // pool's mutex held; idempotent.
  template <class Visit>
  void close(Visit&& visit) {
    const std::uint64_t tail = tail_.fetch_or(kClosed, std::memory_order_acq_rel) & ~kClosed;
    take_up_to(tail, visit);
  }

 private:
  // The tail's mark once closed: above every position a ring will reach.
  static constexpr std::uint64_t kClosed = std::uint64_t{1} << 63;
  // Rounds of the processor's pause instruction before the consumer yields to a claimer.
  static constexpr int kSpinsBeforeYield = 64;

  static void prefetch_for_write(const PoolNode* node) noexcept {
    const auto* bytes = reinterpret_cast<const char*>(node);
    for (std::size_t offset = 0; offset < sizeof(PoolNode); offset += 64) {
      __builtin_prefetch(bytes + offset, 1);
    }
  }

  Atomic<std::uintptr_t>& slot(std::uint64_t position) noexcept {
    return slots_[position & (slots_count_ - 1)];
  }

  static_assert(alignof(PoolNode) >= 2, "a slot keeps its lap in the node pointer's low bit");

  // The low bit a slot's value has when it holds the node of `position`: 1 on even laps of the
  // ring, 0 on odd ones, so that the node a slot held one lap earlier reads as not yet filled.
  // (Nodes are aligned, so the bit is free; a slot never filled reads 0, which is never a node.)
  std::uintptr_t lap_mark(std::uint64_t position) const noexcept {
    return ((position >> lap_shift_) & 1) ^ 1;
  }

  // The node a slot's value holds for `position`, or nullptr if its claimer has not stored it.
  PoolNode* node_for(std::uintptr_t value, std::uint64_t position) const noexcept {
    if ((value & 1) != lap_mark(position)) return nullptr;
    return reinterpret_cast<PoolNode*>(value & ~std::uintptr_t{1});
  }

  template <class Visit>
  void take_up_to(std::uint64_t tail, Visit& visit) {
    std::uint64_t head = head_.unsync_load();  // Only the consumer writes it.
    if (head == tail) return;                  // Nothing claimed: leave the head's line alone.
    for (; head != tail; ++head) {
      Atomic<std::uintptr_t>& s = slot(head);
      PoolNode* node = node_for(s.load(std::memory_order_acquire), head);
      // Claimed, not yet filled: the claimer is a few instructions away, unless it was preempted
      // (in a bubble it was: only one thread runs at a time).
      for (int spins = rt_.controlled() ? kSpinsBeforeYield : 0; node == nullptr; ++spins) {
        if (spins < kSpinsBeforeYield) {
          detail::cpu_relax();
        } else {
          rt_.yield();
        }
        node = node_for(s.load(std::memory_order_acquire), head);
      }
      visit(node);
    }
    head_.store(head, std::memory_order_release);
  }

  Runtime& rt_;
  const std::size_t slots_count_;  // A power of two.
  const int lap_shift_;            // log2(slots_count_): position >> lap_shift_ is the lap.
  // Each slot: the node of the last position stored there, with its lap's mark in the low bit.
  const std::unique_ptr<Atomic<std::uintptr_t>[]> slots_;
  // Claimers' line: the next position to claim (with kClosed once closed), and the head as a
  // claimer last read it.
  alignas(64) Atomic<std::uint64_t> tail_;
  Atomic<std::uint64_t> head_seen_;
  // The consumer's line: the first position not yet taken.
  alignas(64) Atomic<std::uint64_t> head_;
  alignas(64) Atomic<PoolNode*> recycled_;
  SpinLock spin_;              // Guards spare_ and chunks_.
  PoolNode* spare_ = nullptr;  // Nodes ready for allocate().
  std::vector<std::unique_ptr<PoolNode[]>> chunks_;
};

}  // namespace bubble::detail

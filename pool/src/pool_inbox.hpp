#pragma once

// The pool's inbox: where a submit on a runtime that is not controlled (real threads) leaves its
// job without taking the pool's mutex, for a worker to move into the structured queue
// (pool_queue.hpp) under that mutex before it takes a job. Private to bubble::pool.
//
// The inbox is a Treiber stack (R. K. Treiber, "Systems Programming: Coping with Parallelism",
// IBM 1986): push() links a filled node in front of the head with one compare-and-swap, any
// number of threads at once; take_all() (called with the pool's mutex held) takes the whole stack
// with one exchange and reverses it, so the nodes come out in the order of their pushes. Only a
// take of the whole stack ever removes nodes, so a node cannot leave and come back between a
// pusher's read of the head and its compare-and-swap: no ABA.
//
// close() (with the pool's mutex held) takes what is there and leaves a marker at the head: a
// push that finds the marker fails, so that no job enters after shutdown has taken the inbox's
// last contents (the job goes through the locked path, which refuses it with errc::closed).
//
// Memory ordering. push() fills the node, then publishes it with a compare-and-swap that is a
// release (and sequentially consistent, see has_pushes()); take_all() and close() take the stack
// with an acquiring exchange, so the worker sees every field the submitter wrote.
//
// Nodes. The inbox supplies its own nodes (PoolNode::from_inbox is set): allocate() takes one
// from a spare list under a SpinLock of its own (submitters only; the workers never take it), and
// recycle() gives one back with a lock-free push onto a second Treiber stack (any thread), which
// allocate() takes whole when its list runs dry (again only whole-stack takes: no ABA). Nodes
// live in chunks that grow and never shrink; at most as many nodes exist as were ever live at
// once, so memory is bounded by the peak of the jobs queued, in flight and running.

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include <bubble/detail/spin_lock.hpp>

#include "pool_queue.hpp"

namespace bubble::detail {

class PoolInbox {
 public:
  PoolInbox() = default;
  PoolInbox(const PoolInbox&) = delete;
  PoolInbox& operator=(const PoolInbox&) = delete;
  ~PoolInbox() = default;  // Nodes, spare or not, are destroyed with their chunks.

  // A free node for a submitter to fill; every field of its item must be assigned. Any thread.
  PoolNode* allocate() {
    std::lock_guard<SpinLock> guard(spin_);
    if (spare_ == nullptr) spare_ = recycled_.exchange(nullptr, std::memory_order_acquire);
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

  // Publishes a filled node; false, the node untouched, if close() has run. Any thread; never
  // blocks. Sequentially consistent: a worker going idle bumps its idle count and then calls
  // has_pushes(), a pusher pushes and then reads that count; in the single order of sequentially
  // consistent operations one of the two sees the other's write (Dekker's argument), so a job is
  // never left here with every worker asleep.
  bool push(PoolNode* node) noexcept {
    PoolNode* head = head_.load(std::memory_order_relaxed);
    do {
      if (head == closed_marker()) return false;
      node->next = head;
    } while (!head_.compare_exchange_weak(head, node, std::memory_order_seq_cst,
                                          std::memory_order_relaxed));
    return true;
  }

  // Whether a push is waiting to be taken. Sequentially consistent (see push()).
  bool has_pushes() const noexcept {
    PoolNode* head = head_.load(std::memory_order_seq_cst);
    return head != nullptr && head != closed_marker();
  }

  // Takes every pushed node, in the order of their pushes (linked by `next`, the last one's
  // nullptr); nullptr if none. Called with the pool's mutex held, which also orders it against
  // close().
  PoolNode* take_all() noexcept {
    PoolNode* head = head_.load(std::memory_order_relaxed);
    if (head == nullptr || head == closed_marker()) return nullptr;
    // Only pushes change a head that is neither null nor the marker (close() needs the mutex).
    return reversed(head_.exchange(nullptr, std::memory_order_acquire));
  }

  // Takes every pushed node, like take_all(), and makes every later push fail. Called with the
  // pool's mutex held; idempotent.
  PoolNode* close() noexcept {
    PoolNode* head = head_.exchange(closed_marker(), std::memory_order_acquire);
    return head == closed_marker() ? nullptr : reversed(head);
  }

 private:
  // The head's value once closed: an address no node has.
  PoolNode* closed_marker() const noexcept { return const_cast<PoolNode*>(&marker_); }

  static PoolNode* reversed(PoolNode* node) noexcept {
    PoolNode* out = nullptr;
    while (node != nullptr) {
      PoolNode* next = node->next;
      node->next = out;
      out = node;
      node = next;
    }
    return out;
  }

  std::atomic<PoolNode*> head_{nullptr};
  std::atomic<PoolNode*> recycled_{nullptr};
  SpinLock spin_;              // Guards spare_ and chunks_.
  PoolNode* spare_ = nullptr;  // Nodes ready for allocate().
  std::vector<std::unique_ptr<PoolNode[]>> chunks_;
  const PoolNode marker_{};
};

}  // namespace bubble::detail

#pragma once

// The pool's idle workers and how a queued job wakes one: last in, first out. Private to
// bubble::pool; every member is called with the pool's mutex held (no synchronisation of its own).
//
// A worker that finds nothing to do calls wait(): it goes on top of the idle stack and waits on a
// CondVar of its own. choose() takes the top worker (the one that went idle last) off the stack,
// marks it woken and returns its CondVar for the caller to notify; the worker leaves wait() once
// it has been chosen. On real threads the worker that went idle last is the one most likely still
// spinning in its park, so that neither side makes a system call, and its caches are the warmest;
// the worker idle longest sleeps on (Go keeps its idle processors in a LIFO list for the same
// reasons). One CondVar for all the idle workers would wake the longest-idle one instead, as
// CondVar wakes its waiters in FIFO order.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <bubble/atomic.hpp>
#include <bubble/cond_var.hpp>
#include <bubble/mutex.hpp>
#include <bubble/runtime.hpp>

namespace bubble::detail {

class PoolIdleWorkers {
 public:
  // Worker 0 waits on `first`; each of the other `workers - 1` on a CondVar named `name`, made
  // here (after every CondVar the pool made before, so that objects keep their order of creation
  // and their numbers in reports). Nothing allocates after construction.
  PoolIdleWorkers(CondVar& first, std::size_t workers, const std::string& name, Runtime& rt)
      : count_(name + ".idle", 0) {
    cvs_.reserve(workers);
    cvs_.push_back(&first);
    for (std::size_t i = 1; i < workers; ++i) {
      owned_.push_back(std::make_unique<CondVar>(name, rt));
      cvs_.push_back(owned_.back().get());
    }
    woken_.assign(workers, false);
    idle_.reserve(workers);
  }
  PoolIdleWorkers(const PoolIdleWorkers&) = delete;
  PoolIdleWorkers& operator=(const PoolIdleWorkers&) = delete;

  // Whether a worker is idle and not yet chosen.
  bool any() const noexcept { return !idle_.empty(); }

  // How many workers are idle and not yet chosen, read without the pool's mutex (the pool's
  // inbox, pool_inbox.hpp): `order` seq_cst for the check that follows a push (see wait()).
  std::size_t idle_count(std::memory_order order) const noexcept { return count_.load(order); }

  // How many workers have been chosen and are not yet back from wait(): the wake-ups on their way.
  std::size_t waking() const noexcept { return waking_; }

  // Takes the worker that went idle last off the stack and marks it woken; returns its CondVar,
  // for the caller to notify (after unlocking the pool's mutex, or at once), or nullptr when no
  // worker is idle.
  CondVar* choose() noexcept {
    if (idle_.empty()) return nullptr;
    const std::size_t worker = idle_.back();
    idle_.pop_back();
    count_.fetch_sub(1, std::memory_order_relaxed);
    woken_[worker] = true;
    ++waking_;
    return cvs_[worker];
  }

  // Chooses every idle worker and notifies each at once.
  void wake_all() {
    while (CondVar* cv = choose()) cv->notify_one();
  }

  // The idle wait of `worker`, with the pool's mutex held by `lk`: blocks until choose() has
  // chosen it, or returns at once if `has_work()`, called once the worker is counted idle, says
  // work arrived without the mutex (the inbox). The count is raised before has_work() with a
  // sequentially consistent increment; a pusher reads it after its push (also sequentially
  // consistent): either has_work() sees the push, or the pusher sees the count and wakes this
  // worker under the mutex. Settles the books on every way out, unwinding included (CondVar
  // re-acquires the mutex before an exception leaves it): a worker still on the stack leaves it,
  // a chosen one is no longer on its way.
  template <class HasWork>
  void wait(std::unique_lock<Mutex>& lk, std::size_t worker, HasWork&& has_work) {
    Waiting waiting(*this, worker);
    if (has_work()) return;
    while (!woken_[worker]) cvs_[worker]->wait(lk);
  }

 private:
  struct Waiting {
    Waiting(PoolIdleWorkers& s, std::size_t w) : set(s), worker(w) {
      set.idle_.push_back(worker);
      set.count_.fetch_add(1, std::memory_order_seq_cst);
    }
    ~Waiting() {
      if (set.woken_[worker]) {
        set.woken_[worker] = false;
        --set.waking_;
      } else {
        set.idle_.erase(std::find(set.idle_.begin(), set.idle_.end(), worker));
        set.count_.fetch_sub(1, std::memory_order_relaxed);
      }
    }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;
    PoolIdleWorkers& set;
    const std::size_t worker;
  };

  std::vector<std::unique_ptr<CondVar>> owned_;  // Workers 1 and up's CondVars.
  std::vector<CondVar*> cvs_;                    // Every worker's, by worker number.
  std::vector<std::size_t> idle_;  // Idle workers not yet chosen, in the order they went idle.
  std::vector<bool> woken_;        // By worker: chosen, and not yet back from its wait.
  std::size_t waking_ = 0;         // Workers with woken_ set.
  Atomic<std::size_t> count_;      // idle_.size(), for readers without the mutex.
};

}  // namespace bubble::detail

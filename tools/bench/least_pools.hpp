#pragma once

// The least a pool can do, as baselines for pool_bench: rings of jobs with none of a pool's rules
// (no priority, fairness, metrics or bound), so that what a real pool loses against them is what
// its rules and its sharing cost on the machine at hand. Header-only, for pool_bench.cpp alone.

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace bubble_bench {

// The least a pool can do to move jobs between threads: each worker has a single-producer,
// single-consumer ring of its own with room for every job it will get (unbounded in effect, like
// asio's and TBB's queues, so that the submitter never waits), the submitter deals jobs to the
// rings in turn, and each side keeps its copy of the other's index so that it reads the other's
// line only when its copy says the ring looks empty. Nothing else is shared: no priority,
// fairness, metrics or bound. A worker that finds its ring empty yields its processor.
class SpscRing {
 public:
  explicit SpscRing(std::size_t slots) : slots_(slots) {}

  // Appends a job; the ring must have room (the benchmark sizes it for every job).
  void push(std::function<void()> job) {
    slots_[tail_++] = std::move(job);
    published_tail_.store(tail_, std::memory_order_release);
  }
  // Closes the ring: the consumer returns once it has run every job pushed before.
  void close() { closed_.store(true, std::memory_order_release); }
  // Runs jobs until the ring is closed and empty.
  void consume() {
    std::size_t head = 0;
    std::size_t cached_tail = 0;
    for (;;) {
      if (head == cached_tail) {
        const bool closed = closed_.load(std::memory_order_acquire);
        cached_tail = published_tail_.load(std::memory_order_acquire);
        if (head == cached_tail) {
          if (closed) return;
          std::this_thread::yield();
          continue;
        }
      }
      std::function<void()> job = std::move(slots_[head++]);
      job();
    }
  }

 private:
  std::vector<std::function<void()>> slots_;
  // The producer's index as the consumer may read it, and whether the producer is done.
  alignas(64) std::atomic<std::size_t> published_tail_{0};
  std::atomic<bool> closed_{false};
  // The producer's own index, on a line of its own.
  alignas(64) std::size_t tail_ = 0;
};

// A spin lock that waits by reading (test and test-and-set) with the processor's pause hint: the
// cheapest lock for critical sections of a few dozen nanoseconds.
class TtasSpinLock {
 public:
  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) pause();
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  std::atomic<bool> locked_{false};
};

// The least a pool with one queue for all its workers can do: one ring with room for every job
// (unbounded in effect, so that the submitter never waits), its head and tail guarded by one lock
// (LockT), each worker taking one job per critical section; a worker that finds the ring empty
// yields its processor. Every take moves the lock's line and the ring's head between the
// processors.
template <class LockT>
class SharedRing {
 public:
  explicit SharedRing(std::size_t slots) : slots_(slots) {}

  // Appends a job; the ring must have room (the benchmark sizes it for every job).
  void push(std::function<void()> job) {
    const std::lock_guard<LockT> lk(lock_);
    slots_[tail_++] = std::move(job);
  }
  // Closes the ring: each consumer returns once the ring is empty.
  void close() {
    const std::lock_guard<LockT> lk(lock_);
    closed_ = true;
  }
  // Runs jobs until the ring is closed and empty.
  void consume() {
    for (;;) {
      std::function<void()> job;
      {
        const std::lock_guard<LockT> lk(lock_);
        if (head_ == tail_) {
          if (closed_) return;
        } else {
          job = std::move(slots_[head_++]);
        }
      }
      if (job) {
        job();
      } else {
        std::this_thread::yield();
      }
    }
  }

 private:
  std::vector<std::function<void()>> slots_;
  alignas(64) LockT lock_;
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
  bool closed_ = false;
};

}  // namespace bubble_bench

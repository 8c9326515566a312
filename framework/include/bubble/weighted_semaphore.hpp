#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

#include <bubble/context.hpp>
#include <bubble/detail/runtime_check.hpp>
#include <bubble/detail/spin_lock.hpp>
#include <bubble/detail/wait_queue.hpp>
#include <bubble/detail/wake_list.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>

namespace bubble {

// WeightedSemaphore bounds the combined weight of concurrent holders of a resource, with the
// semantics of Go's golang.org/x/sync/semaphore.Weighted (written on the Runtime kernel, so it
// works unchanged on real threads and in a bubble).
//
// It has a fixed size; acquire(ctx, n) takes n units and release(n) gives them back.
// Fairness: strict FIFO, and a waiter is never overtaken. While a thread waits, later acquires
// (and try_acquires) queue behind it even if their smaller weight would fit: a large request at
// the head of the queue is not starved by a stream of small ones (Go's read-write lock argument:
// with N units, N readers taking 1 and one writer taking N, the writer must get its turn).
// Releases hand units to waiters from the head of the queue for as long as the head fits.
//
// Differences from Go, both deliberate: a weight larger than the size (which can never be
// satisfied: Go blocks until the context ends) and a negative weight throw
// std::invalid_argument; releasing more than is in use throws std::logic_error (Go panics).
//
// Runtime check: acquire throws std::logic_error at once, changing nothing, unless the
// calling thread runs on the WeightedSemaphore's runtime (a WeightedSemaphore of the system runtime
// used by a bubble thread, or a bubble's WeightedSemaphore used by another thread); the message
// names the WeightedSemaphore
// ("bubble::WeightedSemaphore #4"), its runtime and the caller's runtime.
//
// Thread safety: all members may be called concurrently. Units are not owned by a thread: any
// thread may release. Lifetime: a WeightedSemaphore may be destroyed as soon as a wait on it has
// returned and no thread waits on it, even while the release that woke the waiter is still
// returning; destroying it while threads wait on it is undefined behaviour.
class WeightedSemaphore {
 public:
  // A semaphore of `size` units, all free. Throws std::invalid_argument if size < 0.
  explicit WeightedSemaphore(std::int64_t size, Runtime& rt = current_runtime());
  // The same, called `name` in deadlock reports (WeightedSemaphore::acquire "memory" (object #4));
  // the name is recorded once, here.
  WeightedSemaphore(std::string_view name, std::int64_t size, Runtime& rt = current_runtime());
  WeightedSemaphore(const WeightedSemaphore&) = delete;
  WeightedSemaphore& operator=(const WeightedSemaphore&) = delete;

  // Takes `n` units, blocking until they are handed to the calling thread or `ctx` ends.
  //
  // Returns an empty error_code when the units were taken. Returns ctx.err() (errc::canceled or
  // errc::deadline_exceeded) and leaves the semaphore unchanged when the context ended first —
  // including when it is already done on entry (even if the units are free), and when it ended
  // while the units were being handed over (they are given back). A waiter that gives up at the
  // head of the queue lets the waiters behind it that now fit proceed.
  //
  // Throws std::invalid_argument if n < 0 or n > size(). n == 0 succeeds at once unless threads
  // are waiting (then it queues behind them, as in Go).
  [[nodiscard]] std::error_code acquire(const Context& ctx, std::int64_t n,
                                        SourceLocation where = SourceLocation::current());

  // Takes `n` units if they are free and nobody is waiting; returns whether it did. Never blocks.
  // Throws std::invalid_argument if n < 0 or n > size().
  [[nodiscard]] bool try_acquire(std::int64_t n, SourceLocation where = SourceLocation::current());

  // Gives back `n` units and hands units to the waiters at the head of the queue that now fit.
  // Never blocks. Throws std::invalid_argument if n < 0 and std::logic_error if n > in_use()
  // (the semaphore is then left unchanged).
  void release(std::int64_t n, SourceLocation where = SourceLocation::current());

  // The total number of units.
  std::int64_t size() const noexcept { return size_; }

  // The number of units held now. A snapshot.
  std::int64_t in_use() const noexcept;

  // Diagnostics and tests: the number of threads blocked in acquire. A snapshot.
  std::size_t waiters() const noexcept;

  Runtime& runtime() const noexcept { return *rt_; }
  std::uint64_t id() const noexcept { return id_; }

 private:
  void check_weight(const char* operation, std::int64_t n) const;
  // WaitInfo::describe of a thread blocked in acquire(): how many units are free (who holds
  // units is not tracked, so that acquire and release stay a counter update).
  static void describe_wait(const void* self, WaitDetail& detail);
  // Hands units to the queued waiters, from the head, while the head fits, adding them to `wake`
  // (unparked once spin_ is released). Requires spin_.
  void grant_locked(detail::WakeList& wake) noexcept;
  // Gives back n units held by this semaphore's caller. Requires n <= cur_.
  void give_back(std::int64_t n) noexcept;

  Runtime* rt_;
  std::uint64_t binding_;  // detail::binding_of(*rt_), checked by the blocking calls.
  std::uint64_t id_;
  const std::int64_t size_;
  mutable detail::SpinLock spin_;
  std::int64_t cur_ = 0;
  detail::WaitQueue queue_;  // Waiter::word holds the requested weight.
};

}  // namespace bubble

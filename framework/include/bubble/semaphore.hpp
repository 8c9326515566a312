#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

#include <bubble/context.hpp>
#include <bubble/detail/runtime_check.hpp>
#include <bubble/detail/spin_lock.hpp>
#include <bubble/detail/wait_queue.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>
#include <bubble/time.hpp>

namespace bubble {

// Semaphore is a counting semaphore written on the Runtime kernel: it works unchanged on real
// threads and in a bubble (where waiting threads are parked and timed waits use virtual time).
//
// It holds a count of permits. acquire takes one, waiting while there is none; release(n) adds n.
// Fairness: strict FIFO. Permits released while threads wait are handed directly to the
// longest-waiting threads, so a newcomer (acquire or try_acquire) never takes a permit ahead of a
// thread that is already waiting.
//
// Runtime check: acquire, try_acquire_until and try_acquire_for throw std::logic_error at once,
// changing nothing, unless the calling thread runs on the Semaphore's runtime (a Semaphore of the
// system runtime used by a bubble thread, or a bubble's Semaphore used by another thread); the
// message names the Semaphore
// ("bubble::Semaphore #4"), its runtime and the caller's runtime.
//
// Thread safety: all members may be called concurrently. A permit is not owned by a thread: any
// thread may release. Lifetime: a Semaphore may be destroyed as soon as a wait on it has returned
// and no thread waits on it, even while the release that woke the waiter is still returning;
// destroying it while threads wait on it is undefined behaviour.
class Semaphore {
 public:
  // A semaphore holding `initial` permits. Throws std::invalid_argument if initial < 0.
  explicit Semaphore(std::ptrdiff_t initial, Runtime& rt = current_runtime());
  // The same, called `name` in deadlock reports (Semaphore::acquire "slots" (object #4)); the name
  // is recorded once, here.
  Semaphore(std::string_view name, std::ptrdiff_t initial, Runtime& rt = current_runtime());
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;

  // Takes one permit, blocking until one is handed to the calling thread.
  void acquire(SourceLocation where = SourceLocation::current());

  // Takes one permit, blocking until one is handed to the calling thread or `ctx` ends. Returns
  // an empty error_code when a permit was taken, ctx.err() (errc::canceled or
  // errc::deadline_exceeded) when the context ended first; then no permit is taken. If `ctx` is
  // already done, returns ctx.err() without taking a permit, even if one is available.
  [[nodiscard]] std::error_code acquire(const Context& ctx,
                                        SourceLocation where = SourceLocation::current());

  // Takes a permit if one is available and nobody is waiting; returns whether it did. Never
  // blocks.
  [[nodiscard]] bool try_acquire(SourceLocation where = SourceLocation::current());

  // Like acquire, but gives up when the runtime's clock reaches `deadline`: returns true if a
  // permit was taken, false if the deadline passed first (no permit taken). A past deadline
  // still takes an available permit.
  [[nodiscard]] bool try_acquire_until(TimePoint deadline,
                                       SourceLocation where = SourceLocation::current());

  // try_acquire_until(now + timeout) (saturating).
  [[nodiscard]] bool try_acquire_for(Duration timeout,
                                     SourceLocation where = SourceLocation::current());

  // Adds `n` permits, handing them to waiting threads in FIFO order first. Never blocks.
  // Throws std::invalid_argument if n < 0, std::overflow_error if the count would overflow.
  void release(std::ptrdiff_t n = 1, SourceLocation where = SourceLocation::current());

  // The number of permits available now (0 while threads wait). A snapshot.
  std::ptrdiff_t available() const noexcept;

  // Diagnostics and tests: the number of threads blocked in acquire. A snapshot.
  std::size_t waiters() const noexcept;

  Runtime& runtime() const noexcept { return *rt_; }
  std::uint64_t id() const noexcept { return id_; }

 private:
  // Returns the waiter's final status (see primitives/semaphore.cpp).
  int acquire_impl(TimePoint deadline, const Context* ctx, const char* kind, SourceLocation where);

  Runtime* rt_;
  std::uint64_t binding_;  // detail::binding_of(*rt_), checked by the blocking calls.
  std::uint64_t id_;
  mutable detail::SpinLock spin_;
  std::ptrdiff_t count_;  // Invariant: count_ == 0 whenever queue_ is not empty.
  detail::WaitQueue queue_;
};

}  // namespace bubble

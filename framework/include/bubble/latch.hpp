#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <bubble/detail/runtime_check.hpp>
#include <bubble/detail/spin_lock.hpp>
#include <bubble/detail/wait_queue.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>

namespace bubble {

// Latch is a single-use downward counter (the contract of std::latch), written on the Runtime
// kernel so that it works unchanged on real threads and in a bubble.
//
// Threads count it down; once it reaches zero it stays there and every wait returns. Everything
// a thread did before its count_down happens-before the return of any wait that sees zero.
// Unlike std::latch, misuse is checked: counting below zero throws instead of being undefined.
//
// Runtime check: wait and arrive_and_wait throw std::logic_error at once, changing nothing, unless
// the calling thread runs on the Latch's runtime (a Latch of the system runtime used by a bubble
// thread, or a bubble's Latch used by another thread); the message names the Latch
// ("bubble::Latch #4"), its runtime and the caller's runtime.
//
// Thread safety: all members may be called concurrently. Lifetime: a Latch may be destroyed as
// soon as a wait on it has returned and no thread waits on it, even while the count_down that
// woke the waiter is still returning, as std::latch allows; destroying it while threads wait on
// it is undefined behaviour.
class Latch {
 public:
  // A latch expecting `count` arrivals. Throws std::invalid_argument if count < 0.
  explicit Latch(std::ptrdiff_t count, Runtime& rt = current_runtime());
  // The same, called `name` in deadlock reports (Latch::wait "started" (object #4)); the name is
  // recorded once, here.
  Latch(std::string_view name, std::ptrdiff_t count, Runtime& rt = current_runtime());
  Latch(const Latch&) = delete;
  Latch& operator=(const Latch&) = delete;

  // Decrements the counter by `n`; when it reaches zero, wakes every waiting thread. Never
  // blocks. Throws std::invalid_argument if n < 0, std::logic_error if n is greater than the
  // remaining count (the counter is then left unchanged).
  void count_down(std::ptrdiff_t n = 1, SourceLocation where = SourceLocation::current());

  // True if the counter is zero. Never blocks (a scheduling point in a bubble).
  [[nodiscard]] bool try_wait(SourceLocation where = SourceLocation::current()) const;

  // Blocks until the counter is zero; returns at once if it already is.
  void wait(SourceLocation where = SourceLocation::current()) const;

  // count_down(n), then wait().
  void arrive_and_wait(std::ptrdiff_t n = 1, SourceLocation where = SourceLocation::current());

  // The remaining count. A snapshot.
  std::ptrdiff_t count() const noexcept;

  // Diagnostics and tests: the number of threads blocked in wait(). A snapshot.
  std::size_t waiters() const noexcept;

  Runtime& runtime() const noexcept { return *rt_; }
  std::uint64_t id() const noexcept { return id_; }

 private:
  void wait_impl(const char* kind, SourceLocation where) const;

  Runtime* rt_;
  std::uint64_t binding_;  // detail::binding_of(*rt_), checked by the blocking calls.
  std::uint64_t id_;
  mutable detail::SpinLock spin_;
  std::ptrdiff_t count_;
  mutable detail::WaitQueue queue_;
};

}  // namespace bubble

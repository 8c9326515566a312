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

// WaitGroup waits for a collection of tasks to finish (Go's sync.WaitGroup), written on the
// Runtime kernel so that it works unchanged on real threads and in a bubble.
//
// It holds a counter, initially zero. add(n) before starting n tasks, done() when each finishes,
// wait() blocks until the counter is zero. Everything a task did before its done() happens-before
// the return of a wait() that it released. Unlike a Latch, a WaitGroup can be reused: once the
// counter is back to zero, add() may start a new round.
//
// Runtime check: wait throws std::logic_error at once, changing nothing, unless the
// calling thread runs on the WaitGroup's runtime (a WaitGroup of the system runtime used by a
// bubble thread, or a bubble's WaitGroup used by another thread); the message names the WaitGroup
// ("bubble::WaitGroup #4"), its runtime and the caller's runtime.
//
// Thread safety: all members may be called concurrently. Lifetime: a WaitGroup may be destroyed
// as soon as a wait on it has returned and no thread waits on it, even while the done() that
// woke the waiter is still returning; destroying it while threads wait on it is undefined
// behaviour.
class WaitGroup {
 public:
  explicit WaitGroup(Runtime& rt = current_runtime()) noexcept;
  // The same, called `name` in deadlock reports (WaitGroup::wait "workers" (object #4)); the name
  // is recorded once, here.
  explicit WaitGroup(std::string_view name, Runtime& rt = current_runtime());
  WaitGroup(const WaitGroup&) = delete;
  WaitGroup& operator=(const WaitGroup&) = delete;

  // Adds `delta` (which may be negative) to the counter; when the counter reaches zero, wakes
  // every waiting thread. Never blocks. Throws std::logic_error, leaving the counter unchanged,
  // if the counter would become negative (or overflow).
  void add(std::int64_t delta, SourceLocation where = SourceLocation::current());

  // add(-1).
  void done(SourceLocation where = SourceLocation::current());

  // Blocks until the counter is zero; returns at once if it already is.
  void wait(SourceLocation where = SourceLocation::current());

  // The counter now. A snapshot.
  std::int64_t count() const noexcept;

  // Diagnostics and tests: the number of threads blocked in wait(). A snapshot.
  std::size_t waiters() const noexcept;

  Runtime& runtime() const noexcept { return *rt_; }
  std::uint64_t id() const noexcept { return id_; }

 private:
  void add_impl(std::int64_t delta, const char* kind, SourceLocation where);

  Runtime* rt_;
  std::uint64_t binding_;  // detail::binding_of(*rt_), checked by the blocking calls.
  std::uint64_t id_;
  mutable detail::SpinLock spin_;
  std::int64_t count_ = 0;
  detail::WaitQueue queue_;
};

}  // namespace bubble

#pragma once

#include <atomic>
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

// Notification is a one-shot event (the contract of absl::Notification), written on the Runtime
// kernel so that it works unchanged on real threads and in a bubble.
//
// It starts un-notified; notify() makes it notified for good and wakes every waiting thread.
// Everything a thread did before notify() happens-before the return of any wait that sees the
// notification, and before has_been_notified() returns true.
//
// Runtime check: wait, wait_until and wait_for throw std::logic_error at once, changing nothing,
// unless the calling thread runs on the Notification's runtime (a Notification of the system
// runtime used by a bubble thread, or a bubble's Notification used by another thread); the message
// names the Notification
// ("bubble::Notification #4"), its runtime and the caller's runtime.
//
// Thread safety: all members may be called concurrently. Lifetime: a Notification may be
// destroyed as soon as a wait on it has returned (or has_been_notified() has returned true), even
// while the notify() that woke the waiter is still returning, as absl::Notification allows;
// destroying it while threads wait on it is undefined behaviour.
class Notification {
 public:
  explicit Notification(Runtime& rt = current_runtime()) noexcept;
  // The same, called `name` in deadlock reports (Notification::wait "ready" (object #4)); the name
  // is recorded once, here.
  explicit Notification(std::string_view name, Runtime& rt = current_runtime());
  ~Notification();
  Notification(const Notification&) = delete;
  Notification& operator=(const Notification&) = delete;

  // Marks the notification as notified and wakes every waiting thread. Idempotent: calling it
  // again does nothing. Never blocks.
  void notify(SourceLocation where = SourceLocation::current());

  // True once notify() has been called. Never blocks. A scheduling point in a bubble, so a loop
  // that polls it lets other threads run.
  [[nodiscard]] bool has_been_notified(SourceLocation where = SourceLocation::current()) const;

  // Blocks until notified; returns at once if it already is.
  void wait(SourceLocation where = SourceLocation::current()) const;

  // Blocks until notified or until `ctx` ends. Returns an empty error_code if notified (also when
  // both happened before the call), ctx.err() if the context ended first.
  [[nodiscard]] std::error_code wait(const Context& ctx,
                                     SourceLocation where = SourceLocation::current()) const;

  // Blocks until notified or until the runtime's clock reaches `deadline`; returns whether it
  // was notified. A past deadline just reports the current state.
  [[nodiscard]] bool wait_until(TimePoint deadline,
                                SourceLocation where = SourceLocation::current()) const;

  // wait_until(now + timeout) (saturating).
  [[nodiscard]] bool wait_for(Duration timeout,
                              SourceLocation where = SourceLocation::current()) const;

  // Diagnostics and tests: the number of threads blocked in a wait. A snapshot.
  std::size_t waiters() const noexcept;

  Runtime& runtime() const noexcept { return *rt_; }
  std::uint64_t id() const noexcept { return id_; }

 private:
  // Returns true if notified, false if the deadline passed or the context ended first.
  bool wait_impl(TimePoint deadline, const Context* ctx, const char* kind,
                 SourceLocation where) const;

  Runtime* rt_;
  std::uint64_t binding_;  // detail::binding_of(*rt_), checked by the blocking calls.
  std::uint64_t id_;
  std::atomic<bool> notified_{false};
  mutable detail::SpinLock spin_;
  mutable detail::WaitQueue queue_;
};

}  // namespace bubble

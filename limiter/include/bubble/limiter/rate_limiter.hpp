#pragma once

#include <atomic>
#include <cstdint>
#include <system_error>

#include <bubble/atomic.hpp>
#include <bubble/cond_var.hpp>
#include <bubble/context.hpp>
#include <bubble/mutex.hpp>
#include <bubble/pool/job.hpp>
#include <bubble/pool/job_options.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>
#include <bubble/thread.hpp>
#include <bubble/time.hpp>
#include <bubble/timer.hpp>

namespace bubble {

// RateLimiter limits how many jobs are submitted to a Pool per unit of time: useful
// when the system downstream has a rate limit of its own, such as an API that allows 10 calls per
// second. (The pool's worker count limits how many run at once; this limits how many start.)
//
// Tokens. The limiter holds up to n tokens and starts full. Every accepted submit spends one, at
// submission (not when a worker starts the job: jobs that back up in the pool's queue can reach
// the downstream system in bursts above the rate; keep the queue short, or enforce the limit
// inside the job). Every `interval`, measured on the pool's runtime's clock from construction
// (at construction + k * interval, k = 1, 2, ...), the bucket is topped back up to n: by a refill
// thread, which wakes waiting submits, and by any submit that finds a boundary has passed, so that
// the top-up never depends on which thread runs first at that instant. So the jobs admitted in any
// interval [construction + k * interval, construction + (k + 1) * interval) never exceed n.
// Because it refills in steps rather than continuously, up to n jobs may start back to back at
// the start of each interval; for strict spacing use a smaller n over a shorter interval (1 per
// 100 ms rather than 10 per second), or a TicketBooth.
//
// Pool rejections and the refund rule. If the pool refuses the job with errc::full (try_submit),
// errc::closed (either) or errc::tenant_limit, the token is given back to the interval that
// issued it, and only to that one: if the refusal comes while that interval still runs, the
// token returns to the bucket (never above n) and may be spent again in the same interval; if a
// later interval has begun (a submit that waited for room in a full pool across a boundary), the
// token is dropped, because the new interval's top-up already gave it its n tokens. So no refund
// ever lets an interval admit more than n jobs. A submit whose context ends while the pool makes
// it wait for room keeps its token spent (the caller gave up; the pool did not reject the job).
//
// Stopping. stop() stops the refill thread. Afterwards both submit calls return
// errc::limiter_stopped, including a submit that was waiting for a token. Stop a limiter you no
// longer need; the destructor stops it.
//
// Thread safety: every member may be called concurrently from threads of the pool's runtime,
// except that the destructor must not run concurrently with anything else. The pool must outlive
// the limiter.
class RateLimiter {
 public:
  // A full bucket of n tokens for `pool`, refilled to n every `interval` by a thread started on
  // pool.runtime(). Throws std::invalid_argument naming the value if n < 1 or interval <= 0.
  RateLimiter(Pool& pool, int n, Duration interval);
  // stop().
  ~RateLimiter();
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  // Waits for a token, spends it and submits the job with pool.submit(ctx, job, opts), so the job
  // runs with a context derived from ctx (if ctx ends after the job is queued, the job's context
  // ends too). Returns:
  // - {} when the pool accepted the job;
  // - errc::limiter_stopped if the limiter is stopped, or is stopped while this call waits for a
  //   token (nothing is spent; the job is not submitted);
  // - ctx.err() if ctx is already done, or ends while waiting for a token (nothing is spent), or
  //   ends after the token was taken but before the job reached the pool (the token is refunded
  //   under the refund rule);
  // - the pool's error otherwise (errc::closed, errc::tenant_limit: the token is refunded under
  //   the refund rule;
  //   ctx.err() while waiting for room in the pool: the token stays spent).
  // A job that is not accepted is destroyed before the call returns and never runs. Blocks while
  // the bucket is empty, and while the pool's queue is full (backpressure).
  [[nodiscard]] std::error_code submit(const Context& ctx, Job job, JobOptions opts = {},
                                       SourceLocation where = SourceLocation::current());

  // Like submit, but never waits for a token: returns errc::rate_limited at once if the bucket is
  // empty, and submits with pool.try_submit(Context::background(), job, opts), which never waits
  // for room either. Returns {}, errc::limiter_stopped, errc::rate_limited, or the pool's error
  // (errc::full, errc::closed, errc::tenant_limit: the token is refunded under the refund rule,
  // which credits it unless an interval boundary passed during the call). A job that is not
  // accepted is destroyed before the call returns and never runs. Never blocks: a refusal by the
  // limiter (stopped, or no token) takes no lock, only one atomic load; so at the very instant of
  // an interval boundary, before the refill thread has run, it may still refuse (it never admits
  // more than n per interval).
  [[nodiscard]] std::error_code try_submit(Job job, JobOptions opts = {},
                                           SourceLocation where = SourceLocation::current());

  // Stops the refill thread and makes every submit, present and future, return
  // errc::limiter_stopped. Idempotent; the first call also waits for the refill thread to exit
  // (it does not wait for submits already handed to the pool).
  void stop(SourceLocation where = SourceLocation::current());

  // True once stop() has been called. Lock-free; a scheduling point in a bubble.
  bool stopped() const;
  // The tokens in the bucket now (0..n). A snapshot; lock-free; a scheduling point in a bubble.
  int available() const;
  // The bucket size n and the refill interval.
  int capacity() const noexcept { return n_; }
  Duration interval() const noexcept { return interval_; }

 private:
  // Gives back a token of interval `issued` after the pool refused its job: to the bucket (never
  // above n) if that interval is still the current one, otherwise nowhere (the refund rule).
  void refund(std::int64_t issued, SourceLocation where);
  // Tops the bucket up to n and wakes the waiting submits if an interval boundary has passed
  // since the last top-up. Called with mu_ held.
  void top_up_if_due_locked();
  void refill_loop();

  Pool* pool_;
  Runtime* rt_;
  const int n_;
  const Duration interval_;
  std::uint64_t id_;
  mutable Mutex mu_;
  CondVar cv_;  // Signalled when a token is added or the limiter stops.
  // The tokens (low bits) and the stopped flag (kStopped): written only under mu_, read without
  // it by try_submit's fast path, so one load gives a consistent snapshot of both. An Atomic: in a
  // bubble the lock-free reads and the writes are scheduling points (the reads under mu_ are not:
  // nothing else writes meanwhile).
  static constexpr std::uint32_t kStopped = 1u << 31;
  Atomic<std::uint32_t> state_;
  int tokens_locked() const noexcept { return static_cast<int>(state_.unsync_load() & ~kStopped); }
  bool stopped_locked() const noexcept { return (state_.unsync_load() & kStopped) != 0; }
  void set_tokens_locked(int tokens) noexcept {
    state_.store((state_.unsync_load() & kStopped) | static_cast<std::uint32_t>(tokens),
                 std::memory_order_release);
  }
  const TimePoint start_;                // Construction time: interval boundaries count from it.
  std::int64_t topped_up_interval_ = 0;  // The last k whose boundary topped the bucket up (mu_).
  Context stop_ctx_;  // Ends when stop() is called; ends the refill thread's wait.
  CancelFunc stop_cancel_;
  Ticker ticker_;
  Thread refill_;  // Joined by the first stop().
};

}  // namespace bubble

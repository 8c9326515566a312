#include <bubble/limiter/rate_limiter.hpp>

#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace bubble {
namespace {

int checked_n(int n) {
  if (n < 1) {
    throw std::invalid_argument("bubble::RateLimiter: n must be >= 1, got " + std::to_string(n));
  }
  return n;
}

Duration checked_interval(Duration interval) {
  if (interval <= Duration::zero()) {
    throw std::invalid_argument("bubble::RateLimiter: interval must be > 0, got " +
                                format_duration(interval));
  }
  return interval;
}

bool pool_rejected(std::error_code ec) {
  return ec == errc::full || ec == errc::closed || ec == errc::tenant_limit;
}

}  // namespace

RateLimiter::RateLimiter(Pool& pool, int n, Duration interval)
    : pool_(&pool),
      rt_(&pool.runtime()),
      n_(checked_n(n)),
      interval_(checked_interval(interval)),
      id_(rt_->new_object_id()),
      mu_("rate_limiter.lock", *rt_),
      cv_("rate_limiter.tokens", *rt_),
      state_("rate_limiter.state", static_cast<std::uint32_t>(n_)),
      start_(rt_->now()),
      ticker_("rate_limiter.refill", interval_, *rt_) {
  auto [ctx, cancel] = Context::with_cancel(Context::background());
  stop_ctx_ = std::move(ctx);
  stop_cancel_ = std::move(cancel);
  refill_ = Thread(
      "rate_limiter/refill", [this] { refill_loop(); }, *rt_);
}

RateLimiter::~RateLimiter() {
  stop();
}

void RateLimiter::refill_loop() {
  for (;;) {
    if (!ticker_.channel().receive(stop_ctx_)) return;  // stop() ended the context
    std::lock_guard<Mutex> lock(mu_);
    if (stopped_locked()) return;
    top_up_if_due_locked();
  }
}

void RateLimiter::top_up_if_due_locked() {
  const std::int64_t k = (rt_->now() - start_) / interval_;
  if (k <= topped_up_interval_) return;
  topped_up_interval_ = k;
  set_tokens_locked(n_);
  cv_.notify_all();
}

std::error_code RateLimiter::submit(const Context& ctx, Job job, JobOptions opts,
                                    SourceLocation where) {
  if (rt_->controlled()) rt_->schedule_point({"RateLimiter::submit", id_, where});
  std::int64_t issued = 0;  // The interval whose token this call spends.
  {
    std::unique_lock<Mutex> lock(mu_);
    for (;;) {
      if (stopped_locked()) return errc::limiter_stopped;
      top_up_if_due_locked();
      if (ctx.done()) {
        // A refund's notify_one may have chosen this thread: pass the token on to another waiter.
        if (tokens_locked() > 0) cv_.notify_one(where);
        return ctx.err();
      }
      if (tokens_locked() > 0) break;
      // Woken by a refill, a refund, stop(), or the end of ctx (checked at the top).
      (void)cv_.wait(lock, ctx, where);
    }
    set_tokens_locked(tokens_locked() - 1);
    issued = topped_up_interval_;
  }
  // The context may have ended since the token was taken (another thread cancels it while this
  // one holds the token): the job will never reach the pool, so the token goes back under the
  // refund rule, as for a job the pool refuses.
  if (ctx.done()) {
    refund(issued, where);
    return ctx.err();
  }
  const std::error_code ec = pool_->submit(ctx, std::move(job), std::move(opts), where);
  if (pool_rejected(ec)) refund(issued, where);
  return ec;
}

std::error_code RateLimiter::try_submit(Job job, JobOptions opts, SourceLocation where) {
  // Fast path: refusals need no lock (one load gives a consistent snapshot). In a bubble the load
  // is the call's scheduling point.
  const std::uint32_t state = state_.load(std::memory_order_acquire, where);
  if ((state & kStopped) != 0) return errc::limiter_stopped;
  if (state == 0) return errc::rate_limited;
  std::int64_t issued = 0;  // The interval whose token this call spends.
  {
    std::lock_guard<Mutex> lock(mu_);
    if (stopped_locked()) return errc::limiter_stopped;
    top_up_if_due_locked();
    if (tokens_locked() == 0) return errc::rate_limited;
    set_tokens_locked(tokens_locked() - 1);
    issued = topped_up_interval_;
  }
  const std::error_code ec =
      pool_->try_submit(Context::background(), std::move(job), std::move(opts), where);
  if (pool_rejected(ec)) refund(issued, where);
  return ec;
}

void RateLimiter::refund(std::int64_t issued, SourceLocation where) {
  std::lock_guard<Mutex> lock(mu_);
  // A boundary may have passed without a top-up yet: do it first, so that the check below sees
  // the interval the clock is in.
  top_up_if_due_locked();
  // The token belongs to interval `issued`; once a later interval's top-up has happened, that
  // interval's n tokens are all it may admit, so the old token is dropped.
  if (topped_up_interval_ != issued) return;
  if (tokens_locked() < n_) set_tokens_locked(tokens_locked() + 1);
  cv_.notify_one(where);
}

void RateLimiter::stop(SourceLocation where) {
  {
    std::lock_guard<Mutex> lock(mu_);
    if (stopped_locked()) return;
    state_.fetch_or(kStopped, std::memory_order_release, where);
    cv_.notify_all(where);
  }
  stop_cancel_();
  ticker_.stop(where);
  refill_.join(where);
}

bool RateLimiter::stopped() const {
  return (state_.load(std::memory_order_acquire) & kStopped) != 0;
}

int RateLimiter::available() const {
  return static_cast<int>(state_.load(std::memory_order_acquire) & ~kStopped);
}

}  // namespace bubble

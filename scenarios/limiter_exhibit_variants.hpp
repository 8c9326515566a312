#pragma once

// Known-bad limiters, kept as exhibits: each is what a plausible implementation looks like, and
// each has a bug the limiter suite's properties find. They live here, never in the library.
// Private to the scenarios library.
#include <bubble/channel.hpp>
#include <bubble/cond_var.hpp>
#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/mutex.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/thread.hpp>
#include <bubble/timer.hpp>

#include <cstdint>
#include <mutex>
#include <system_error>
#include <utility>

namespace bubble::scenarios {

// What a rate limiter does with the token of a job the pool refused.
enum class RefundRule {
  issuing_interval,  // the library's rule: back to the interval that issued it, else dropped
  any_interval,      // back to the bucket, whatever interval it is now (admits n + 1)
  none,              // never given back (refuses too much)
};

// The RateLimiter's algorithm (n tokens, topped up to n at every interval boundary by a Ticker
// thread and by any call that finds a boundary passed) with a chosen refund rule.
template <RefundRule kRule>
class RefundVariantLimiter {
 public:
  RefundVariantLimiter(Pool& pool, int n, Duration interval)
      : pool_(pool),
        rt_(pool.runtime()),
        n_(n),
        interval_(interval),
        mu_(rt_),
        cv_(rt_),
        start_(rt_.now()),
        tokens_(n),
        ticker_(interval, rt_),
        refill_(
            "refund_variant/refill", [this] { refill_loop(); }, rt_) {}
  ~RefundVariantLimiter() { stop(); }

  std::error_code submit(const Context& ctx, Job job, JobOptions opts = {}) {
    std::int64_t issued = 0;
    {
      std::unique_lock<Mutex> lock(mu_);
      for (;;) {
        if (stopped_) return errc::limiter_stopped;
        top_up_if_due_locked();
        if (ctx.done()) {
          if (tokens_ > 0) cv_.notify_one();
          return ctx.err();
        }
        if (tokens_ > 0) break;
        (void)cv_.wait(lock, ctx);
      }
      --tokens_;
      issued = topped_up_;
    }
    const std::error_code ec = pool_.submit(ctx, std::move(job), std::move(opts));
    if (ec == errc::full || ec == errc::closed || ec == errc::tenant_limit) refund(issued);
    return ec;
  }

  std::error_code try_submit(Job job, JobOptions opts = {}) {
    std::int64_t issued = 0;
    {
      std::lock_guard<Mutex> lock(mu_);
      if (stopped_) return errc::limiter_stopped;
      top_up_if_due_locked();
      if (tokens_ == 0) return errc::rate_limited;
      --tokens_;
      issued = topped_up_;
    }
    const std::error_code ec =
        pool_.try_submit(Context::background(), std::move(job), std::move(opts));
    if (ec == errc::full || ec == errc::closed || ec == errc::tenant_limit) refund(issued);
    return ec;
  }

  void stop() {
    {
      std::lock_guard<Mutex> lock(mu_);
      if (stopped_) return;
      stopped_ = true;
      cv_.notify_all();
    }
    stop_.second();
    ticker_.stop();
    refill_.join();
  }

  // Read without the lock, like RateLimiter::available (a bubble runs one thread at a time).
  int available() const { return tokens_; }

 private:
  void refill_loop() {
    for (;;) {
      if (!ticker_.channel().receive(stop_.first)) return;
      std::lock_guard<Mutex> lock(mu_);
      if (stopped_) return;
      top_up_if_due_locked();
    }
  }
  void top_up_if_due_locked() {
    const std::int64_t k = (rt_.now() - start_) / interval_;
    if (k <= topped_up_) return;
    topped_up_ = k;
    tokens_ = n_;
    cv_.notify_all();
  }
  void refund(std::int64_t issued) {
    std::lock_guard<Mutex> lock(mu_);
    if constexpr (kRule == RefundRule::none) return;
    top_up_if_due_locked();
    if (kRule == RefundRule::issuing_interval && topped_up_ != issued) return;
    if (tokens_ < n_) ++tokens_;
    cv_.notify_one();
  }

  Pool& pool_;
  Runtime& rt_;
  const int n_;
  const Duration interval_;
  Mutex mu_;
  CondVar cv_;
  const TimePoint start_;
  int tokens_;
  std::int64_t topped_up_ = 0;
  bool stopped_ = false;
  std::pair<Context, CancelFunc> stop_ = Context::with_cancel(Context::background());
  Ticker ticker_;
  Thread refill_;
};

// The counter-example of the ticket booth: a booth that hands out a ticket at every tick of a
// Ticker. The ticker keeps ticking while a ticket waits for a taker and keeps one tick in its
// channel, so after a stall two tickets come out together.
class TickerBooth {
 public:
  TickerBooth(Duration window, int n, Runtime& rt = current_runtime())
      : interval_(window / n),
        ticker_(window / n, rt),
        tickets_(0, rt),
        thread_(
            "ticker_booth", [this] { loop(); }, rt) {}
  ~TickerBooth() { stop(); }

  std::error_code take(const Context& ctx) {
    auto ticket = tickets_.receive(ctx);
    if (ticket) return {};
    if (ticket.error() == errc::closed) return errc::limiter_stopped;
    return ticket.error();
  }
  void stop() {
    stop_.second();
    if (!stopped_) {
      stopped_ = true;
      thread_.join();
    }
  }
  Duration interval() const { return interval_; }

 private:
  void loop() {
    for (std::uint64_t i = 0;; ++i) {
      if (tickets_.send(i, stop_.first)) break;
      if (!ticker_.channel().receive(stop_.first)) break;
    }
    ticker_.stop();
    tickets_.close();
  }
  Duration interval_;
  std::pair<Context, CancelFunc> stop_ = Context::with_cancel(Context::background());
  Ticker ticker_;
  Channel<std::uint64_t> tickets_;
  Thread thread_;
  bool stopped_ = false;
};

}  // namespace bubble::scenarios

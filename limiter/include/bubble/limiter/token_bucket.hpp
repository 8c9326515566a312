#pragma once

#include <cstdint>
#include <system_error>

#include <bubble/context.hpp>
#include <bubble/limiter/token_bucket_core.hpp>
#include <bubble/mutex.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>
#include <bubble/time.hpp>

namespace bubble {

// TokenBucket is a rate limiter with the semantics of golang.org/x/time/rate's Limiter (current
// upstream version), on a Runtime's clock: a bucket of `burst` tokens, full at construction,
// refilled continuously at `rate` tokens per second. Each request takes n tokens.
//
// Three ways to ask, differing in what happens when the tokens are not there yet:
// - allow(n) takes them only if they are all available now; returns false otherwise.
// - reserve(n) always takes them (unless n > burst), from the future if need be, and returns a
//   Reservation saying how long the caller must wait before acting; the caller may cancel it.
// - wait(ctx, n) blocks until the tokens are due, or fails (see wait()).
// The *_at variants take the current time as an argument instead of reading the runtime's clock,
// so that decisions can be replayed from a log (see token_bucket_replay.hpp); they may be mixed
// with the others, and `t` may go backwards (the bucket then refills nothing for the interval).
//
// A rate of kInfiniteRate (or +infinity) allows every request and ignores the burst; a rate of 0
// never refills. The arithmetic is TokenBucketCore's (token_bucket_core.hpp).
//
// Thread safety: every member may be called concurrently; the state is guarded by a
// bubble::Mutex, so every call is a scheduling point in a bubble. Only wait() blocks for longer
// than that lock. The bucket must outlive its Reservations and must not be destroyed while a
// thread is inside one of its calls.
class TokenBucket {
 public:
  class Reservation;

  // A full bucket on `rt`'s clock. Throws std::invalid_argument naming the value if
  // rate_per_second is negative or NaN, or burst is negative.
  TokenBucket(double rate_per_second, int burst, Runtime& rt = current_runtime());
  TokenBucket(const TokenBucket&) = delete;
  TokenBucket& operator=(const TokenBucket&) = delete;

  // Takes n tokens if all are available now and returns true; returns false and takes nothing
  // otherwise (also when n > burst). n == 0 is allowed unless reservations have put the bucket
  // in debt (fewer than 0 tokens), as upstream. Never blocks beyond the internal
  // lock. Throws std::invalid_argument if n < 0.
  [[nodiscard]] bool allow(int n = 1, SourceLocation where = SourceLocation::current());
  // allow(n) at time t.
  [[nodiscard]] bool allow_at(TimePoint t, int n = 1,
                              SourceLocation where = SourceLocation::current());

  // Reserves n tokens now. The reservation is ok unless n > burst (at a finite rate); an ok
  // reservation has debited the bucket and tells the holder how long to wait before acting
  // (Reservation::delay()). Reservations of a rate-0 bucket with no tokens left are ok but never
  // due (delay() == kInfiniteDuration), as upstream. Throws std::invalid_argument if n < 0.
  [[nodiscard]] Reservation reserve(int n = 1, SourceLocation where = SourceLocation::current());
  // reserve(n) at time t, granted only if the delay is at most max_wait (otherwise the bucket is
  // unchanged and the reservation is not ok).
  [[nodiscard]] Reservation reserve_at(TimePoint t, int n = 1,
                                       Duration max_wait = kInfiniteDuration,
                                       SourceLocation where = SourceLocation::current());

  // Blocks until n tokens can be taken, rate.Limiter's WaitN. Returns:
  // - {} once the tokens are taken (at once if they are available);
  // - errc::exceeds_burst at once, if n > burst at a finite rate (it could never succeed);
  // - ctx.err() at once, if ctx is already done (nothing is taken);
  // - errc::would_exceed_deadline at once, consuming nothing, if ctx has a deadline and the
  //   tokens would not be due by then;
  // - ctx.err() (errc::canceled or errc::deadline_exceeded) if ctx ends while waiting: the
  //   reservation is then cancelled (Reservation::cancel), which may let others proceed sooner.
  // When the tokens fall due at the very moment the context ends, the tokens win.
  // ctx's deadline, if any, must be on this bucket's runtime's clock. Throws
  // std::invalid_argument if n < 0.
  [[nodiscard]] std::error_code wait(const Context& ctx, int n = 1,
                                     SourceLocation where = SourceLocation::current());

  // Changes the rate from now (or t) on: tokens accumulated until then count at the old rate;
  // reservations already made keep their times. Throws std::invalid_argument as the constructor.
  void set_rate(double rate_per_second, SourceLocation where = SourceLocation::current());
  void set_rate_at(TimePoint t, double rate_per_second,
                   SourceLocation where = SourceLocation::current());
  // Changes the burst from now (or t) on; tokens above the new burst are lost. Throws
  // std::invalid_argument if burst < 0.
  void set_burst(int burst, SourceLocation where = SourceLocation::current());
  void set_burst_at(TimePoint t, int burst, SourceLocation where = SourceLocation::current());

  // The current rate (kInfiniteRate for the infinite rate) and burst.
  double rate(SourceLocation where = SourceLocation::current()) const;
  int burst(SourceLocation where = SourceLocation::current()) const;
  // The tokens available now (or at t); negative while reservations are outstanding. A snapshot.
  double tokens(SourceLocation where = SourceLocation::current()) const;
  double tokens_at(TimePoint t, SourceLocation where = SourceLocation::current()) const;

  Runtime& runtime() const noexcept { return *rt_; }
  std::uint64_t id() const noexcept { return id_; }

 private:
  friend class Reservation;
  void cancel_at(const TokenReservation& r, TimePoint t, SourceLocation where);

  Runtime* rt_;
  std::uint64_t id_;
  mutable Mutex mu_;
  TokenBucketCore core_;  // Guarded by mu_.
};

// A reservation of tokens made by TokenBucket::reserve: whether it was granted, and when its
// holder may act. Move-only (so that it is cancelled at most once); a moved-from or
// default-constructed Reservation is not ok. It refers to its bucket, which must outlive it.
// Not thread-safe: one thread uses a Reservation at a time (the bucket itself is thread-safe).
class TokenBucket::Reservation {
 public:
  Reservation() = default;
  Reservation(Reservation&& other) noexcept
      : bucket_(other.bucket_), value_(other.value_), cancelled_(other.cancelled_) {
    other.bucket_ = nullptr;
    other.value_ = TokenReservation{};
  }
  Reservation& operator=(Reservation&& other) noexcept {
    if (this != &other) {
      bucket_ = other.bucket_;
      value_ = other.value_;
      cancelled_ = other.cancelled_;
      other.bucket_ = nullptr;
      other.value_ = TokenReservation{};
    }
    return *this;
  }
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;

  // True if the bucket granted the tokens (see TokenBucket::reserve).
  bool ok() const noexcept { return value_.ok; }
  explicit operator bool() const noexcept { return ok(); }
  // The tokens granted (0 if not ok).
  int tokens() const noexcept { return value_.tokens; }
  // When the holder may act (TimePoint::max(): never). Meaningless if not ok.
  TimePoint time_to_act() const noexcept { return value_.time_to_act; }
  // How long the holder must wait from now on the bucket's clock (or from t): 0 if it may act at
  // once, kInfiniteDuration if not ok or never due.
  Duration delay() const noexcept;
  Duration delay_from(TimePoint t) const noexcept { return value_.delay_from(t); }
  // The plain value (for logs and replays).
  const TokenReservation& value() const noexcept { return value_; }

  // The holder will not act: gives the tokens back to the bucket as far as possible
  // (TokenBucketCore::cancel_at: not if the reservation is already due, and not the tokens that
  // later reservations were promised). Only the first cancel of an ok reservation has an effect.
  void cancel(SourceLocation where = SourceLocation::current());
  // cancel() at time t.
  void cancel_at(TimePoint t, SourceLocation where = SourceLocation::current());

 private:
  friend class TokenBucket;
  Reservation(TokenBucket* bucket, const TokenReservation& value) noexcept
      : bucket_(bucket), value_(value) {}

  TokenBucket* bucket_ = nullptr;
  TokenReservation value_{};
  bool cancelled_ = false;
};

}  // namespace bubble

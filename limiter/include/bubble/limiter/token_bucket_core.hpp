#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <system_error>

#include <bubble/errc.hpp>
#include <bubble/time.hpp>

namespace bubble {

// The infinite rate: a bucket with this rate allows every request, whatever its size and the
// burst. It is the largest finite double, as golang.org/x/time/rate's `rate.Inf` is, so that the
// arithmetic on it (0 * kInfiniteRate == 0) is the same as upstream's; TokenBucketCore also
// accepts std::numeric_limits<double>::infinity() and stores it as kInfiniteRate.
inline constexpr double kInfiniteRate = std::numeric_limits<double>::max();

// The delay of a reservation that can never be honoured, and the "no limit" maximum wait
// (golang.org/x/time/rate's InfDuration).
inline constexpr Duration kInfiniteDuration = Duration::max();

// Converts a minimum interval between events into a rate in events per second, like rate.Every:
// an interval <= 0 gives kInfiniteRate; kInfiniteDuration gives 0.
inline double rate_every(Duration interval) noexcept {
  if (interval <= Duration::zero()) return kInfiniteRate;
  if (interval == kInfiniteDuration) return 0.0;
  const auto count = interval.count();
  // Whole seconds and the remainder converted separately, as Go's Duration.Seconds().
  const double seconds =
      static_cast<double>(count / 1'000'000'000) +  // NOLINT(bugprone-integer-division)
      static_cast<double>(count % 1'000'000'000) / 1e9;
  return 1.0 / seconds;
}

// TokenReservation is the value returned by TokenBucketCore::reserve_at: whether the tokens were
// granted and from when they may be used. It is a plain value; it refers to no bucket.
struct TokenReservation {
  // True if the bucket granted the tokens within the maximum wait. When false the bucket was not
  // changed, time_to_act is meaningless and delay_from returns kInfiniteDuration.
  bool ok = false;
  // The number of tokens granted (0 when !ok).
  int tokens = 0;
  // The moment from which the holder may act. TimePoint::max() means never (a rate of 0 with an
  // empty bucket): the wait would not fit in a Duration.
  TimePoint time_to_act{};
  // The bucket's rate when the reservation was made (0 for a reservation made at the infinite
  // rate, as upstream); cancel_at refunds at this rate.
  double rate = 0.0;

  // How long the holder must wait from `t` before acting: 0 if it may act at once,
  // kInfiniteDuration if !ok or if the tokens will never be available.
  Duration delay_from(TimePoint t) const noexcept {
    if (!ok || time_to_act == TimePoint::max()) return kInfiniteDuration;
    if (time_to_act <= t) return Duration::zero();
    const auto a = time_to_act.time_since_epoch().count();
    const auto b = t.time_since_epoch().count();
    std::int64_t d = 0;
    if (__builtin_sub_overflow(a, b, &d)) return kInfiniteDuration;
    return Duration(d);
  }
};

// TokenBucketCore is the arithmetic of a token bucket, with the semantics of
// golang.org/x/time/rate's Limiter at its current upstream version, as a value type whose
// operations take the current time as an argument. It holds up to `burst` tokens, starts full
// and refills continuously at `rate` tokens per second. A request for n tokens takes them at once
// if they are there; a reservation may also take them from the future (the bucket goes negative)
// and tells the caller when it may act.
//
// Time: every operation takes `t`, the caller's notion of now, on any clock whose differences are
// nanoseconds (a Runtime's TimePoint, or the times of a log being replayed). `t` may go backwards:
// the bucket then refills nothing for the interval and keeps its state, as upstream does.
//
// Special rates: kInfiniteRate (or +infinity) allows every request and ignores the burst; a rate
// of 0 never refills, so once the initial burst is spent allow_at fails and reserve_at grants
// tokens only at TimePoint::max() (a delay of kInfiniteDuration).
//
// Not thread-safe: it is a value. TokenBucket wraps it with a Mutex and a Runtime clock.
class TokenBucketCore {
 public:
  // A full bucket. Throws std::invalid_argument if rate is negative or NaN, or burst is negative.
  TokenBucketCore(double rate, int burst)
      : rate_(checked_rate(rate)), burst_(checked_burst(burst)) {
    tokens_ = static_cast<double>(burst_);
  }

  // The refill rate in tokens per second (kInfiniteRate for the infinite rate).
  double rate() const noexcept { return rate_; }
  // The bucket size: the largest number of tokens one request may take.
  int burst() const noexcept { return burst_; }

  // The number of tokens available at time t (negative while reservations are outstanding).
  // Does not change the bucket.
  double tokens_at(TimePoint t) const noexcept { return advance(t); }

  // Takes n tokens at time t if all of them are available now, and reports whether it did.
  // n == 0 is allowed unless reservations have put the bucket in debt (fewer than 0 tokens), as
  // upstream. Throws std::invalid_argument if n < 0.
  bool allow_at(TimePoint t, int n = 1) { return reserve_at(t, n, Duration::zero()).ok; }

  // Reserves n tokens at time t. The reservation is granted (ok) if n <= burst (or the rate is
  // infinite) and the tokens will have accumulated within max_wait of t; the bucket is then
  // debited at once, possibly going negative, and the reservation says from when the holder may
  // act. If it is not granted, the bucket is left exactly as it was. Throws std::invalid_argument
  // if n < 0.
  TokenReservation reserve_at(TimePoint t, int n, Duration max_wait = kInfiniteDuration) {
    check_n(n);
    if (rate_ == kInfiniteRate) return TokenReservation{true, n, t, 0.0};
    const double tokens = advance(t) - static_cast<double>(n);
    Duration wait = Duration::zero();
    if (tokens < 0) wait = duration_from_tokens(rate_, -tokens);
    TokenReservation r;
    r.ok = n <= burst_ && wait <= max_wait;
    r.rate = rate_;
    if (r.ok) {
      r.tokens = n;
      r.time_to_act = add_saturated(t, wait);
      last_ = t;
      tokens_ = tokens;
      last_event_ = r.time_to_act;
    }
    return r;
  }

  // Cancels reservation `r`, made by this bucket, at time t: the holder will not act. As
  // rate.go's Reservation.CancelAt, it gives back the reserved tokens minus those that later
  // reservations have already been promised on top of it (so their times stay valid), and
  // nothing if r was not granted, reserved no tokens, is already due (time_to_act < t), or the
  // rate is infinite. If r was the latest reservation, the time of the latest event moves back.
  // Cancelling the same reservation twice gives tokens back twice, as upstream; TokenBucket's
  // Reservation guards against that.
  void cancel_at(const TokenReservation& r, TimePoint t) noexcept {
    if (!r.ok) return;
    if (rate_ == kInfiniteRate || r.tokens == 0 || r.time_to_act < t) return;
    // The tokens promised to reservations made after r should not be restored.
    const double restore = static_cast<double>(r.tokens) -
                           tokens_from_duration(r.rate, sub_saturated(last_event_, r.time_to_act));
    if (restore <= 0) return;
    double tokens = advance(t) + restore;
    if (const double b = static_cast<double>(burst_); tokens > b) tokens = b;
    last_ = t;
    tokens_ = tokens;
    if (r.time_to_act == last_event_) {
      const TimePoint previous = add_saturated(
          r.time_to_act, duration_from_tokens(r.rate, -static_cast<double>(r.tokens)));
      if (!(previous < t)) last_event_ = previous;
    }
  }

  // Sets a new rate from time t on; tokens accumulated until t count at the old rate.
  // Reservations already made keep their times. Throws std::invalid_argument as the constructor.
  void set_rate_at(TimePoint t, double rate) {
    const double checked = checked_rate(rate);
    tokens_ = advance(t);
    last_ = t;
    rate_ = checked;
  }

  // Sets a new burst from time t on. The bucket is not topped up; tokens above the new burst are
  // lost. Throws std::invalid_argument if burst < 0.
  void set_burst_at(TimePoint t, int burst) {
    const int checked = checked_burst(burst);
    tokens_ = advance(t);
    last_ = t;
    burst_ = checked;
  }

  // The first check of a blocking wait for n tokens (rate.Limiter's WaitN): errc::exceeds_burst
  // if n > burst and the rate is finite (such a wait could never succeed), {} otherwise. Does not
  // change the bucket. Throws std::invalid_argument if n < 0.
  std::error_code check_wait(int n) const {
    check_n(n);
    if (n > burst_ && rate_ != kInfiniteRate) return errc::exceeds_burst;
    return {};
  }

  // The reservation of a blocking wait at time t, after check_wait and the caller's own check of
  // its context: reserves n tokens if they will be there by `deadline` (kNoDeadline: no
  // deadline) and stores the granted reservation in `out`; the caller then waits until
  // out.time_to_act, or gives up and calls cancel_at(out, now). Returns {} if granted, and
  // errc::would_exceed_deadline (the bucket unchanged, nothing consumed) if not.
  std::error_code reserve_for_wait_at(TimePoint t, int n, TimePoint deadline,
                                      TokenReservation& out) {
    const Duration max_wait =
        deadline == kNoDeadline ? kInfiniteDuration : sub_saturated(deadline, t);
    out = reserve_at(t, n, max_wait);
    if (!out.ok) return errc::would_exceed_deadline;
    return {};
  }

  // --- Unit conversions, exactly as upstream (public for tests and for the replay tool) ------

  // The time it takes to accumulate `tokens` at `rate` (kInfiniteDuration if rate <= 0 or the
  // result does not fit in a Duration).
  static Duration duration_from_tokens(double rate, double tokens) noexcept {
    if (rate <= 0) return kInfiniteDuration;
    const double ns = (tokens / rate) * 1e9;
    if (ns >= 9223372036854775807.0) return kInfiniteDuration;
    if (ns <= -9223372036854775807.0) return Duration::min();
    return Duration(static_cast<std::int64_t>(ns));
  }

  // The number of tokens accumulated in `d` at `rate` (0 if rate <= 0).
  static double tokens_from_duration(double rate, Duration d) noexcept {
    if (rate <= 0) return 0.0;
    const auto count = d.count();
    // Go's Duration.Seconds(): whole seconds and the remainder converted separately.
    const double seconds =
        static_cast<double>(count / 1'000'000'000) +  // NOLINT(bugprone-integer-division)
        static_cast<double>(count % 1'000'000'000) / 1e9;
    return seconds * rate;
  }

  // a - b, clamped to the range of Duration (as Go's Time.Sub).
  static Duration sub_saturated(TimePoint a, TimePoint b) noexcept {
    std::int64_t d = 0;
    if (__builtin_sub_overflow(a.time_since_epoch().count(), b.time_since_epoch().count(), &d)) {
      return a > b ? Duration::max() : Duration::min();
    }
    return Duration(d);
  }

  // t + d, clamped to the range of TimePoint.
  static TimePoint add_saturated(TimePoint t, Duration d) noexcept {
    std::int64_t r = 0;
    if (__builtin_add_overflow(t.time_since_epoch().count(), d.count(), &r)) {
      return d > Duration::zero() ? TimePoint::max() : TimePoint::min();
    }
    return TimePoint(Duration(r));
  }

 private:
  static double checked_rate(double rate) {
    if (std::isnan(rate) || rate < 0) {
      throw std::invalid_argument("bubble::TokenBucket: rate must be >= 0 tokens per second, got " +
                                  std::to_string(rate));
    }
    return rate >= kInfiniteRate ? kInfiniteRate : rate;
  }
  static int checked_burst(int burst) {
    if (burst < 0) {
      throw std::invalid_argument("bubble::TokenBucket: burst must be >= 0, got " +
                                  std::to_string(burst));
    }
    return burst;
  }
  static void check_n(int n) {
    if (n < 0) {
      throw std::invalid_argument("bubble::TokenBucket: n must be >= 0, got " + std::to_string(n));
    }
  }

  // The tokens at time t, from the state at last_ (does not change the bucket).
  double advance(TimePoint t) const noexcept {
    TimePoint last = last_;
    if (t < last) last = t;
    const double tokens = tokens_ + tokens_from_duration(rate_, sub_saturated(t, last));
    const double b = static_cast<double>(burst_);
    return tokens > b ? b : tokens;
  }

  double rate_;
  int burst_;
  double tokens_ = 0.0;
  // When tokens_ was last updated; TimePoint::min() before the first update (Go's zero Time).
  TimePoint last_ = TimePoint::min();
  // The latest time of a granted reservation (past or future).
  TimePoint last_event_ = TimePoint::min();
};

}  // namespace bubble

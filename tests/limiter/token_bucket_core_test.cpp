// Table tests of TokenBucketCore: the test vectors of golang.org/x/time/rate's rate_test.go (the
// current upstream version), ported to explicit times. No runtime, no threads: exact.
#include <bubble/limiter/token_bucket_core.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace bubble {
namespace {

using namespace std::chrono_literals;

// The time unit of the upstream vectors.
constexpr Duration d = 100ms;
// An arbitrary origin: the arithmetic depends only on differences, as upstream's time.Now() does.
const TimePoint t0 = TimePoint(Duration(1'234'567'890'123'456'789));
TimePoint t(int k) {
  return t0 + k * d;
}
const TimePoint t1 = t(1), t2 = t(2), t3 = t(3), t4 = t(4), t5 = t(5), t9 = t(9);

// One step of upstream's run(): TokensAt(t) must equal `tokens` exactly, then AllowN(t, n) == ok.
struct AllowStep {
  TimePoint t;
  double tokens;
  int n;
  bool ok;
};

void run(TokenBucketCore& lim, const std::vector<AllowStep>& steps) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const AllowStep& s = steps[i];
    EXPECT_EQ(lim.tokens_at(s.t), s.tokens) << "step " << i;
    EXPECT_EQ(lim.allow_at(s.t, s.n), s.ok) << "step " << i;
  }
}

// Upstream's runReserveMax: reserves n at time `at` with a maximum wait and checks ok and, when
// ok, the time to act. Upstream rounds to the nearest multiple of d; we require the exact
// nanosecond up to 1 ns of floating-point truncation, which is stricter.
struct ReserveStep {
  TimePoint at;
  int n;
  TimePoint act;
  bool ok;
};

TokenReservation reserve(TokenBucketCore& lim, const ReserveStep& s,
                         Duration max_wait = kInfiniteDuration) {
  const TokenReservation r = lim.reserve_at(s.at, s.n, max_wait);
  EXPECT_EQ(r.ok, s.ok) << "reserve_at(t" << (s.at - t0) / d << ", " << s.n << ")";
  if (r.ok && s.ok) {
    const auto diff = (r.time_to_act - s.act).count();
    EXPECT_LE(std::llabs(diff), 1) << "reserve_at(t" << (s.at - t0) / d << ", " << s.n
                                   << "): time to act off by " << diff << " ns";
  }
  return r;
}

TEST(TokenBucketCore, Every) {
  struct Case {
    Duration interval;
    double rate;
  };
  const std::vector<Case> cases = {
      {0ns, kInfiniteRate},
      {-1ns, kInfiniteRate},
      {1ns, 1e9},
      {1us, 1e6},
      {1ms, 1e3},
      {10ms, 100},
      {100ms, 10},
      {1s, 1},
      {2s, 0.5},
      {2500ms, 0.4},
      {4s, 0.25},
      {10s, 0.1},
      {kInfiniteDuration, 0},
  };
  for (const Case& c : cases) {
    const double got = rate_every(c.interval);
    if (c.rate == kInfiniteRate || c.rate == 0) {
      EXPECT_EQ(got, c.rate) << c.interval.count();
    } else {
      EXPECT_NEAR(got / c.rate, 1.0, 1e-9) << c.interval.count();
    }
  }
}

// A request for zero tokens is allowed while the bucket holds zero or more tokens, and refused
// while a reservation has put it in debt, as upstream's AllowN(t, 0).
TEST(TokenBucketCore, AllowZeroIsRefusedWhileTheBucketIsInDebt) {
  TokenBucketCore lim(10, 1);
  const TimePoint t = TimePoint(Duration(1'000'000'000));
  EXPECT_TRUE(lim.allow_at(t, 0));
  EXPECT_TRUE(lim.allow_at(t, 1));
  EXPECT_TRUE(lim.allow_at(t, 0));  // exactly 0 tokens: no wait
  const TokenReservation r = lim.reserve_at(t, 1);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.delay_from(t), std::chrono::milliseconds(100));
  EXPECT_FALSE(lim.allow_at(t, 0));  // -1 token: a zero request would have to wait 100 ms
  EXPECT_TRUE(lim.allow_at(t + std::chrono::milliseconds(100), 0));
}

TEST(TokenBucketCore, Burst1) {
  TokenBucketCore lim(10, 1);
  run(lim, {
               {t0, 1, 1, true},
               {t0, 0, 1, false},
               {t0, 0, 1, false},
               {t1, 1, 1, true},
               {t1, 0, 1, false},
               {t1, 0, 1, false},
               {t2, 1, 2, false},  // burst size is 1, so n=2 always fails
               {t2, 1, 1, true},
               {t2, 0, 1, false},
           });
}

TEST(TokenBucketCore, Burst3) {
  TokenBucketCore lim(10, 3);
  run(lim, {
               {t0, 3, 2, true},
               {t0, 1, 2, false},
               {t0, 1, 1, true},
               {t0, 0, 1, false},
               {t1, 1, 4, false},
               {t2, 2, 1, true},
               {t3, 2, 1, true},
               {t4, 2, 1, true},
               {t4, 1, 1, true},
               {t4, 0, 1, false},
               {t4, 0, 1, false},
               {t9, 3, 3, true},
               {t9, 0, 0, true},
           });
}

TEST(TokenBucketCore, JumpBackwards) {
  TokenBucketCore lim(10, 3);
  run(lim, {
               {t1, 3, 1, true},  // start at t1
               {t0, 2, 1, true},  // jump back to t0, two tokens remain
               {t0, 1, 1, true},
               {t0, 0, 1, false},
               {t0, 0, 1, false},
               {t1, 1, 1, true},  // got a token
               {t1, 0, 1, false},
               {t1, 0, 1, false},
               {t2, 1, 1, true},  // got another token
               {t2, 0, 1, false},
               {t2, 0, 1, false},
           });
}

// golang.org/issues/34861: converting a duration to tokens must not truncate nanoseconds.
TEST(TokenBucketCore, NoTruncationErrors) {
  TokenBucketCore lim(0.7692307692307693, 1);
  EXPECT_TRUE(lim.allow_at(t0));
}

// Upstream's TestLongRunningQPS on a fake clock: 5 s of requests every 2 ms at 100/s, burst 100.
// Property: never more than burst + rate * elapsed (+1), and at least 99.9% of it.
TEST(TokenBucketCore, LongRunningQps) {
  TokenBucketCore lim(100, 100);
  int ok = 0;
  TimePoint now = t0;
  const TimePoint end = t0 + 5s;
  for (; now < end; now += 2ms) {
    if (lim.allow_at(now)) ++ok;
  }
  const double elapsed_s = std::chrono::duration<double>(now - t0).count();
  const double ideal = 100 + 100 * elapsed_s;
  EXPECT_LE(ok, static_cast<int>(ideal + 1));
  EXPECT_GE(ok, static_cast<int>(0.999 * ideal));
}

TEST(TokenBucketCore, SimpleReserve) {
  TokenBucketCore lim(10, 2);
  reserve(lim, {t0, 2, t0, true});
  reserve(lim, {t0, 2, t2, true});
  reserve(lim, {t3, 2, t4, true});
}

TEST(TokenBucketCore, Mix) {
  TokenBucketCore lim(10, 2);
  reserve(lim, {t0, 3, t1, false});  // n > burst
  reserve(lim, {t0, 2, t0, true});
  run(lim, {{t1, 1, 2, false}});  // not enough tokens: don't allow
  reserve(lim, {t1, 2, t2, true});
  run(lim, {{t1, -1, 1, false}});  // negative tokens: don't allow
  run(lim, {{t3, 1, 1, true}});
}

TEST(TokenBucketCore, CancelInvalid) {
  TokenBucketCore lim(10, 2);
  reserve(lim, {t0, 2, t0, true});
  const TokenReservation r = reserve(lim, {t0, 3, t3, false});
  lim.cancel_at(r, t0);             // no effect
  reserve(lim, {t0, 2, t2, true});  // did not get extra tokens
}

TEST(TokenBucketCore, CancelLast) {
  TokenBucketCore lim(10, 2);
  reserve(lim, {t0, 2, t0, true});
  const TokenReservation r = reserve(lim, {t0, 2, t2, true});
  lim.cancel_at(r, t1);  // 2 tokens back
  reserve(lim, {t1, 2, t2, true});
}

TEST(TokenBucketCore, CancelTooLate) {
  TokenBucketCore lim(10, 2);
  reserve(lim, {t0, 2, t0, true});
  const TokenReservation r = reserve(lim, {t0, 2, t2, true});
  lim.cancel_at(r, t3);  // too late to cancel: no effect
  reserve(lim, {t3, 2, t4, true});
}

TEST(TokenBucketCore, Cancel0Tokens) {
  TokenBucketCore lim(10, 2);
  reserve(lim, {t0, 2, t0, true});
  const TokenReservation r = reserve(lim, {t0, 1, t1, true});
  reserve(lim, {t0, 1, t2, true});
  lim.cancel_at(r, t0);  // 0 tokens back: the later reservation was promised them
  reserve(lim, {t0, 1, t3, true});
}

TEST(TokenBucketCore, Cancel1Token) {
  TokenBucketCore lim(10, 2);
  reserve(lim, {t0, 2, t0, true});
  const TokenReservation r = reserve(lim, {t0, 2, t2, true});
  reserve(lim, {t0, 1, t3, true});
  lim.cancel_at(r, t2);  // 1 token back
  reserve(lim, {t2, 2, t4, true});
}

TEST(TokenBucketCore, CancelMulti) {
  TokenBucketCore lim(10, 4);
  reserve(lim, {t0, 4, t0, true});
  const TokenReservation ra = reserve(lim, {t0, 3, t3, true});
  reserve(lim, {t0, 1, t4, true});
  const TokenReservation rc = reserve(lim, {t0, 1, t5, true});
  lim.cancel_at(rc, t1);  // 1 token back
  lim.cancel_at(ra, t1);  // 2 tokens back, as if C was never reserved
  reserve(lim, {t1, 3, t5, true});
}

TEST(TokenBucketCore, ReserveJumpBack) {
  TokenBucketCore lim(10, 2);
  reserve(lim, {t1, 2, t1, true});  // start at t1
  reserve(lim, {t0, 1, t1, true});  // should violate Limit, Burst
  reserve(lim, {t2, 2, t3, true});
  // n > burst always fails, and the state of the bucket must not change.
  reserve(lim, {t0, 3, TimePoint{}, false});
  reserve(lim, {t2, 1, t4, true});
  // The maximum wait is too short: fails, and the state of the bucket must not change.
  reserve(lim, {t0, 2, TimePoint{}, false}, d);
  reserve(lim, {t2, 1, t5, true});
}

TEST(TokenBucketCore, ReserveJumpBackCancel) {
  TokenBucketCore lim(10, 2);
  reserve(lim, {t1, 2, t1, true});  // start at t1
  const TokenReservation r = reserve(lim, {t1, 2, t3, true});
  reserve(lim, {t1, 1, t4, true});
  lim.cancel_at(r, t0);             // cancel at t0, 1 token back
  reserve(lim, {t1, 2, t4, true});  // should violate Limit, Burst
}

TEST(TokenBucketCore, ReserveSetLimit) {
  TokenBucketCore lim(5, 2);
  reserve(lim, {t0, 2, t0, true});
  reserve(lim, {t0, 2, t4, true});
  lim.set_rate_at(t2, 10);
  reserve(lim, {t2, 1, t4, true});  // violates Limit and Burst
}

TEST(TokenBucketCore, ReserveSetBurst) {
  TokenBucketCore lim(5, 2);
  reserve(lim, {t0, 2, t0, true});
  reserve(lim, {t0, 2, t4, true});
  lim.set_burst_at(t3, 4);
  reserve(lim, {t0, 4, t9, true});  // violates Limit and Burst
}

TEST(TokenBucketCore, ReserveSetLimitCancel) {
  TokenBucketCore lim(5, 2);
  reserve(lim, {t0, 2, t0, true});
  const TokenReservation r = reserve(lim, {t0, 2, t4, true});
  lim.set_rate_at(t2, 10);
  lim.cancel_at(r, t2);  // 2 tokens back, at the rate of the reservation
  reserve(lim, {t2, 2, t3, true});
}

// Current upstream: a reservation is granted only if its delay is <= the maximum wait (equal is
// fine), and a refused one leaves the bucket unchanged.
TEST(TokenBucketCore, ReserveMax) {
  TokenBucketCore lim(10, 2);
  const Duration max_wait = d;
  reserve(lim, {t0, 2, t0, true}, max_wait);
  reserve(lim, {t0, 1, t1, true}, max_wait);   // reserve for the close future
  reserve(lim, {t0, 1, t2, false}, max_wait);  // time to act too far in the future
  EXPECT_EQ(lim.tokens_at(t0), -1.0);          // the refused reservation took nothing
}

// --- The Wait family, on the core: check_wait, the caller's context check, reserve_for_wait_at,
// and cancel_at when the context ends first. TokenBucket::wait does exactly these steps; its
// blocking behaviour is tested in bubbles (token_bucket_test.cpp).

struct WaitOutcome {
  std::error_code ec;
  Duration delay{};  // how long the caller must block (when ec is {})
};

// `context_done`: the caller's context has already ended (with errc::canceled).
WaitOutcome wait_at(TokenBucketCore& lim, TimePoint now, int n, TimePoint deadline = kNoDeadline,
                    bool context_done = false) {
  if (auto ec = lim.check_wait(n)) return {ec};
  if (context_done) return {errc::canceled};
  TokenReservation r;
  if (auto ec = lim.reserve_for_wait_at(now, n, deadline, r)) return {ec};
  return {{}, r.delay_from(now)};
}

TEST(TokenBucketCore, WaitSimple) {
  TokenBucketCore lim(10, 3);
  EXPECT_EQ(wait_at(lim, t0, 1, kNoDeadline, true).ec, errc::canceled);  // already cancelled
  EXPECT_EQ(wait_at(lim, t0, 4).ec, errc::exceeds_burst);
  EXPECT_EQ(lim.tokens_at(t0), 3.0);  // neither consumed anything
  const WaitOutcome now = wait_at(lim, t0, 2);
  EXPECT_FALSE(now.ec);
  EXPECT_EQ(now.delay, Duration::zero());  // act now
  const WaitOutcome later = wait_at(lim, t0, 3);
  EXPECT_FALSE(later.ec);
  EXPECT_EQ(later.delay, 2 * d);  // act later
}

TEST(TokenBucketCore, WaitCancel) {
  TokenBucketCore lim(10, 3);
  EXPECT_FALSE(wait_at(lim, t0, 2).ec);  // act now; 1 token left
  TokenReservation r;
  ASSERT_FALSE(lim.check_wait(3));
  ASSERT_FALSE(lim.reserve_for_wait_at(t0, 3, kNoDeadline, r));
  EXPECT_EQ(r.delay_from(t0), 2 * d);
  lim.cancel_at(r, t1);  // the context ends at t1: all 3 tokens back
  EXPECT_EQ(lim.tokens_at(t1), 2.0);
  const WaitOutcome after = wait_at(lim, t1, 2);  // act now after cancel
  EXPECT_FALSE(after.ec);
  EXPECT_EQ(after.delay, Duration::zero());
}

TEST(TokenBucketCore, WaitTimeout) {
  TokenBucketCore lim(10, 3);
  const TimePoint deadline = t0 + d;
  EXPECT_FALSE(wait_at(lim, t0, 2, deadline).ec);
  EXPECT_EQ(wait_at(lim, t0, 3, deadline).ec, errc::would_exceed_deadline);
  EXPECT_EQ(lim.tokens_at(t0), 1.0);  // returned at once, consuming nothing
}

TEST(TokenBucketCore, WaitInf) {
  TokenBucketCore lim(kInfiniteRate, 0);
  const WaitOutcome w = wait_at(lim, t0, 3);  // exceeds the burst, but the rate is infinite
  EXPECT_FALSE(w.ec);
  EXPECT_EQ(w.delay, Duration::zero());
}

TEST(TokenBucketCore, ZeroLimit) {
  TokenBucketCore lim(0, 1);
  EXPECT_TRUE(lim.allow_at(t0));   // starts full
  EXPECT_FALSE(lim.allow_at(t0));  // and never refills
  EXPECT_FALSE(lim.allow_at(t0 + 1000h));
}

TEST(TokenBucketCore, SetAfterZeroLimit) {
  TokenBucketCore lim(0, 1);
  EXPECT_TRUE(lim.allow_at(t0));
  EXPECT_FALSE(lim.allow_at(t0));
  lim.set_rate_at(t0, 10);
  const WaitOutcome w = wait_at(lim, t0, 1);  // 10/s: the next token in 100 ms
  EXPECT_FALSE(w.ec);
  EXPECT_EQ(w.delay, d);
}

// Go issue 71154: at a tiny rate the wait overflowed a Duration and came out negative.
TEST(TokenBucketCore, TinyLimit) {
  TokenBucketCore lim(1e-10, 1);
  EXPECT_TRUE(lim.allow_at(t0));
  EXPECT_FALSE(lim.allow_at(t0));
  const TokenReservation r = lim.reserve_at(t0, 1);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.delay_from(t0), kInfiniteDuration);
}

// --- Beyond upstream's vectors: our edges.

TEST(TokenBucketCore, ZeroRateReservationNeverComes) {
  TokenBucketCore lim(0, 2);
  EXPECT_TRUE(lim.reserve_at(t0, 2).ok);
  const TokenReservation r = lim.reserve_at(t0, 1);
  EXPECT_TRUE(r.ok);  // granted, as upstream, but never due
  EXPECT_EQ(r.time_to_act, TimePoint::max());
  EXPECT_EQ(r.delay_from(t0 + 1000h), kInfiniteDuration);
  TokenReservation w;
  EXPECT_EQ(lim.reserve_for_wait_at(t0, 1, t0 + 1000h, w), errc::would_exceed_deadline);
}

TEST(TokenBucketCore, InfiniteRateAllowsEverything) {
  TokenBucketCore lim(std::numeric_limits<double>::infinity(), 0);
  EXPECT_EQ(lim.rate(), kInfiniteRate);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(lim.allow_at(t0, 1000));
  lim.set_rate_at(t1, 10);  // back to a finite rate: the (empty) bucket counts again
  EXPECT_FALSE(lim.allow_at(t1, 1));
}

TEST(TokenBucketCore, RefusedRequestsChangeNothing) {
  TokenBucketCore lim(10, 2);
  EXPECT_TRUE(lim.allow_at(t0, 2));
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(lim.allow_at(t0 + 50ms, 1));
  EXPECT_EQ(lim.tokens_at(t1), 1.0);
}

TEST(TokenBucketCore, DelayFromCountsDownAndNeverGoesNegative) {
  TokenBucketCore lim(10, 1);
  ASSERT_TRUE(lim.allow_at(t0));
  const TokenReservation r = lim.reserve_at(t0, 1);
  EXPECT_EQ(r.delay_from(t0), d);
  EXPECT_EQ(r.delay_from(t0 + 30ms), 70ms);
  EXPECT_EQ(r.delay_from(t1), Duration::zero());
  EXPECT_EQ(r.delay_from(t5), Duration::zero());
  TokenReservation refused;
  EXPECT_EQ(refused.delay_from(t0), kInfiniteDuration);
}

TEST(TokenBucketCore, SetBurstDoesNotTopUp) {
  TokenBucketCore lim(10, 2);
  ASSERT_TRUE(lim.allow_at(t0, 2));
  lim.set_burst_at(t0, 5);
  EXPECT_EQ(lim.tokens_at(t0), 0.0);
  EXPECT_EQ(lim.tokens_at(t5), 5.0);  // refills up to the new burst
  lim.set_burst_at(t5, 1);
  EXPECT_EQ(lim.tokens_at(t5), 1.0);  // the excess over the new burst is lost
  EXPECT_TRUE(lim.allow_at(t5, 1));
  EXPECT_FALSE(lim.allow_at(t5, 1));
}

TEST(TokenBucketCore, BadArgumentsThrowNamingTheValue) {
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_EQ(message([] { TokenBucketCore(-1, 1); }),
            "bubble::TokenBucket: rate must be >= 0 tokens per second, got -1.000000");
  EXPECT_NE(message([] { TokenBucketCore(std::nan(""), 1); }).find("rate must be >= 0"),
            std::string::npos);
  EXPECT_EQ(message([] { TokenBucketCore(1, -2); }),
            "bubble::TokenBucket: burst must be >= 0, got -2");
  TokenBucketCore lim(1, 1);
  EXPECT_EQ(message([&] { (void)lim.allow_at(t0, -1); }),
            "bubble::TokenBucket: n must be >= 0, got -1");
  EXPECT_EQ(message([&] { lim.set_burst_at(t0, -1); }),
            "bubble::TokenBucket: burst must be >= 0, got -1");
  EXPECT_EQ(lim.burst(), 1);  // a refused setter changes nothing
}

TEST(TokenBucketCore, SaturatingTimeArithmetic) {
  EXPECT_EQ(TokenBucketCore::sub_saturated(TimePoint::max(), TimePoint::min()), Duration::max());
  EXPECT_EQ(TokenBucketCore::sub_saturated(TimePoint::min(), TimePoint::max()), Duration::min());
  EXPECT_EQ(TokenBucketCore::add_saturated(t0, kInfiniteDuration), TimePoint::max());
  EXPECT_EQ(TokenBucketCore::duration_from_tokens(0, 1), kInfiniteDuration);
  EXPECT_EQ(TokenBucketCore::duration_from_tokens(10, 1), d);
  EXPECT_EQ(TokenBucketCore::tokens_from_duration(0, 1h), 0.0);
  EXPECT_EQ(TokenBucketCore::tokens_from_duration(10, 1500ms), 15.0);
}

}  // namespace
}  // namespace bubble

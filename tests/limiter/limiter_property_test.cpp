// RapidCheck properties of the token bucket core (pure, generated request logs) and of the
// RateLimiter (in bubbles, under generated schedules). Each states its property in a comment.
#include <bubble/context.hpp>
#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/limiter/token_bucket_core.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/testing/property.hpp>
#include <bubble/thread.hpp>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

namespace bubble {
namespace {

using namespace std::chrono_literals;

struct Request {
  std::int64_t gap_us;  // time since the previous request (>= 0: the log moves forward)
  int n;
  bool reserve;  // reserve_at instead of allow_at
};

rc::Gen<Request> request_gen() {
  return rc::gen::build<Request>(
      rc::gen::set(&Request::gap_us, rc::gen::inRange<std::int64_t>(0, 300'000)),
      rc::gen::set(&Request::n, rc::gen::inRange(0, 6)),
      rc::gen::set(&Request::reserve, rc::gen::arbitrary<bool>()));
}

// Property: over any log of allow/reserve requests at non-decreasing times, the tokens the bucket
// has promised for use at or before time t never exceed burst + rate * (t - t0), t0 being the
// first request (the bucket starts full): the rate limit holds for every prefix of time.
RC_GTEST_PROP(TokenBucketCoreProperty, NeverGrantsMoreThanBurstPlusRateTimesElapsed, ()) {
  const int rate = *rc::gen::inRange(1, 50);
  const int burst = *rc::gen::inRange(0, 8);
  const auto requests = *rc::gen::container<std::vector<Request>>(request_gen());
  TokenBucketCore bucket(rate, burst);
  const TimePoint t0 = TimePoint(Duration(1'000'000'000));
  TimePoint t = t0;
  std::multimap<TimePoint, int> granted;  // time to act -> tokens
  for (const Request& r : requests) {
    t += std::chrono::microseconds(r.gap_us);
    if (r.reserve) {
      const TokenReservation res = bucket.reserve_at(t, r.n);
      if (res.ok) granted.emplace(res.time_to_act, res.tokens);
    } else if (bucket.allow_at(t, r.n)) {
      granted.emplace(t, r.n);
    }
  }
  // Check the bound at every time a grant becomes usable.
  double used = 0;
  for (const auto& [when, tokens] : granted) {
    used += tokens;
    const double elapsed_s = std::chrono::duration<double>(when - t0).count();
    RC_ASSERT(used <= burst + rate * elapsed_s + 1e-6);
  }
}

// Property: a refused request (allow_at false, reservation not ok) leaves the bucket exactly as
// it was: a copy that never saw the request agrees with it on the tokens at any later time.
RC_GTEST_PROP(TokenBucketCoreProperty, RefusedRequestsChangeNothing, ()) {
  const int rate = *rc::gen::inRange(0, 50);
  const int burst = *rc::gen::inRange(0, 8);
  const auto requests = *rc::gen::container<std::vector<Request>>(request_gen());
  const std::int64_t max_wait_us = *rc::gen::inRange<std::int64_t>(0, 500'000);
  TokenBucketCore bucket(rate, burst);
  TimePoint t = TimePoint(Duration(1'000'000'000));
  for (const Request& r : requests) {
    t += std::chrono::microseconds(r.gap_us);
    const TokenBucketCore before = bucket;
    const bool ok = r.reserve ? bucket.reserve_at(t, r.n, std::chrono::microseconds(max_wait_us)).ok
                              : bucket.allow_at(t, r.n);
    if (!ok) {
      for (const Duration later : {Duration::zero(), Duration(1ms), Duration(1s), Duration(1h)}) {
        RC_ASSERT(bucket.tokens_at(t + later) == before.tokens_at(t + later));
      }
    }
  }
}

// Property: cancelling the latest reservation at the instant it was made gives all its tokens
// back (up to rounding): the bucket then holds what it held before the reservation.
RC_GTEST_PROP(TokenBucketCoreProperty, CancellingTheLatestReservationAtOnceRestoresTheBucket, ()) {
  const int rate = *rc::gen::inRange(1, 50);
  const int burst = *rc::gen::inRange(1, 8);
  const auto requests = *rc::gen::container<std::vector<Request>>(request_gen());
  TokenBucketCore bucket(rate, burst);
  TimePoint t = TimePoint(Duration(1'000'000'000));
  for (const Request& r : requests) {
    t += std::chrono::microseconds(r.gap_us);
    const double before = bucket.tokens_at(t);
    const TokenReservation res = bucket.reserve_at(t, r.n);
    if (!res.ok) continue;
    bucket.cancel_at(res, t);
    RC_ASSERT(std::abs(bucket.tokens_at(t) - before) <= 1e-9);
  }
}

// Property (in a bubble, under a generated schedule): with submitters always waiting, a
// RateLimiter of n per interval admits exactly n jobs in every interval [start + k * interval,
// start + (k + 1) * interval) until the jobs run out, and never more.
BUBBLE_PROP(RateLimiterProperty, AdmitsExactlyNPerIntervalNeverMore) {
  const int n = *rc::gen::inRange(1, 5);
  const int submitters = *rc::gen::inRange(1, 4);
  const int jobs_each = *rc::gen::inRange(1, 6);
  Runtime& rt = current_runtime();
  PoolOptions options;
  options.workers = 2;
  options.queue_capacity = 64;
  Pool pool(options, rt);
  const TimePoint start = rt.now();
  RateLimiter limiter(pool, n, 100ms);
  std::map<std::int64_t, int> per_interval;
  {
    std::vector<Thread> threads;
    for (int s = 0; s < submitters; ++s) {
      threads.emplace_back(
          "submitter",
          [&] {
            for (int i = 0; i < jobs_each; ++i) {
              RC_ASSERT(!limiter.submit(Context::background(), [] {}));
              ++per_interval[(rt.now() - start) / 100ms];
            }
          },
          rt);
    }
  }
  const int total = submitters * jobs_each;
  const int intervals = (total + n - 1) / n;
  RC_ASSERT(per_interval.size() == static_cast<std::size_t>(intervals));
  for (const auto& [k, count] : per_interval) {
    RC_ASSERT(k < intervals);
    RC_ASSERT(count == (k + 1 < intervals ? n : total - n * (intervals - 1)));
  }
}

}  // namespace
}  // namespace bubble

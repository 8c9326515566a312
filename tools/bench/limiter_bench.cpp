// Benchmarks of the limiters' fast decisions on the system runtime, each against a baseline
// measured in the same binary: the same decision guarded by a std::mutex.
//
//   TokenBucket::allow, uncontended (tokens available)   vs  std::mutex + TokenBucketCore +
//                                                            std::chrono::steady_clock
//   RateLimiter::try_submit with an empty bucket          vs  std::mutex + token counter
//
// Figures and the command that produced them: docs/PERFORMANCE.md.
#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/limiter/token_bucket.hpp>
#include <bubble/limiter/token_bucket_core.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <system_error>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "multi_threaded_process.hpp"

namespace {

// --- TokenBucket::allow -------------------------------------------------------------------

// A bucket that refills faster than the loop drains it, so allow() succeeds every time.
void BM_TokenBucket_Allow(benchmark::State& state) {
  bubble::TokenBucket bucket(1e10, 1'000'000, bubble::system_runtime());
  for (auto _ : state) benchmark::DoNotOptimize(bucket.allow());
}
BENCHMARK(BM_TokenBucket_Allow);

// Baseline: the same arithmetic behind a std::mutex, on std::chrono::steady_clock.
class StdMutexBucket {
 public:
  StdMutexBucket(double rate, int burst) : core_(rate, burst) {}
  bool allow() {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    return core_.allow_at(bubble::TimePoint(std::chrono::duration_cast<bubble::Duration>(now)));
  }

 private:
  std::mutex mu_;
  bubble::TokenBucketCore core_;
};

void BM_Baseline_StdMutexBucket_Allow(benchmark::State& state) {
  StdMutexBucket bucket(1e10, 1'000'000);
  for (auto _ : state) benchmark::DoNotOptimize(bucket.allow());
}
BENCHMARK(BM_Baseline_StdMutexBucket_Allow);

// For reference: the clock reads alone, and the core's arithmetic alone (no lock, no clock).
void BM_Reference_RuntimeNow(benchmark::State& state) {
  bubble::Runtime& rt = bubble::system_runtime();
  for (auto _ : state) benchmark::DoNotOptimize(rt.now());
}
BENCHMARK(BM_Reference_RuntimeNow);

void BM_Reference_SteadyClockNow(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(std::chrono::steady_clock::now());
}
BENCHMARK(BM_Reference_SteadyClockNow);

#if defined(__x86_64__) || defined(__i386__)
// A calibrated cycle counter at its cheapest (absl's CycleClock: a bare rdtsc, scaled by a
// constant), and the same read ordered after the loads before it (lfence; rdtsc, as Linux's
// rdtsc_ordered), which is what a clock that never decreases across threads needs.
void BM_Reference_CycleCounter(benchmark::State& state) {
  const std::uint64_t mult = 1ULL << 31;  // Any constant: the cost is the same.
  for (auto _ : state) benchmark::DoNotOptimize((__rdtsc() * mult) >> 32);
}
BENCHMARK(BM_Reference_CycleCounter);

void BM_Reference_OrderedCycleCounter(benchmark::State& state) {
  const std::uint64_t mult = 1ULL << 31;
  for (auto _ : state) {
    _mm_lfence();
    benchmark::DoNotOptimize((__rdtsc() * mult) >> 32);
  }
}
BENCHMARK(BM_Reference_OrderedCycleCounter);
#endif

void BM_Reference_TokenBucketCore_AllowAt(benchmark::State& state) {
  bubble::TokenBucketCore core(1e10, 1'000'000);
  bubble::TimePoint t{};
  for (auto _ : state) {
    t += bubble::Duration(1);
    benchmark::DoNotOptimize(core.allow_at(t));
  }
}
BENCHMARK(BM_Reference_TokenBucketCore_AllowAt);

// --- RateLimiter::try_submit, bucket empty ------------------------------------------------

void BM_RateLimiter_TrySubmitEmpty(benchmark::State& state) {
  bubble::PoolOptions options;
  options.workers = 1;
  bubble::Pool pool(options, bubble::system_runtime());
  bubble::RateLimiter limiter(pool, 1, std::chrono::hours(1000));
  if (limiter.try_submit([] {})) state.SkipWithError("the first try_submit failed");
  for (auto _ : state) {
    const std::error_code ec = limiter.try_submit([] {});
    benchmark::DoNotOptimize(ec);
  }
  if (limiter.try_submit([] {}) != bubble::errc::rate_limited) {
    state.SkipWithError("the bucket was not empty");
  }
  limiter.stop();
  (void)pool.shutdown();
}
BENCHMARK(BM_RateLimiter_TrySubmitEmpty);

// Baseline: the same decision (stopped? any token?) behind a std::mutex.
class StdMutexTokens {
 public:
  std::error_code try_take() {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return bubble::errc::limiter_stopped;
    if (tokens_ == 0) return bubble::errc::rate_limited;
    --tokens_;
    return {};
  }

 private:
  std::mutex mu_;
  int tokens_ = 0;
  bool stopped_ = false;
};

void BM_Baseline_StdMutexTokens_TryTakeEmpty(benchmark::State& state) {
  StdMutexTokens tokens;
  for (auto _ : state) {
    const std::error_code ec = tokens.try_take();
    benchmark::DoNotOptimize(ec);
  }
}
BENCHMARK(BM_Baseline_StdMutexTokens_TryTakeEmpty);

}  // namespace

// Metrics, deadline-aware start (too_late) and job failures in a bubble (virtual time, so every
// figure is exact), plus LatencyHistogram on its own.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/context.hpp>
#include <bubble/errc.hpp>
#include <bubble/mutex.hpp>
#include <bubble/notification.hpp>
#include <bubble/pool/latency_histogram.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing.hpp>

namespace {

using namespace std::chrono_literals;
using bubble::Context;
using bubble::Duration;
using bubble::errc;
using bubble::JobOutcome;
using bubble::JobStatus;
using bubble::LatencyHistogram;
using bubble::Pool;

BUBBLE_TEST(PoolMetrics, StatsAreExact) {
  bubble::Runtime& rt = bubble::current_runtime();
  Pool pool({.workers = 1, .queue_capacity = 8}, rt);
  for (int i = 0; i < 4; ++i) {
    ASSERT_FALSE(pool.submit(Context::background(), [] { bubble::sleep_for(10ms); }));
  }
  bubble::sleep_for(15ms);  // The second job is running, two are queued.
  bubble::PoolStats s = pool.stats();
  EXPECT_EQ(s.workers, 1);
  EXPECT_EQ(s.busy_workers, 1);
  EXPECT_EQ(s.queue_depth, 2u);
  EXPECT_EQ(s.queue_capacity, 8u);
  EXPECT_EQ(s.submitted, 4u);
  EXPECT_EQ(s.completed, 1u);
  EXPECT_FALSE(s.closed);
  EXPECT_FALSE(pool.shutdown());
  s = pool.stats();
  EXPECT_EQ(s.busy_workers, 0);
  EXPECT_EQ(s.queue_depth, 0u);
  EXPECT_EQ(s.completed, 4u);
  EXPECT_TRUE(s.closed);
  // Queue waits 0, 10, 20 and 30 ms (nearest rank: p50 is the 2nd value, p90 and p99 the 4th).
  EXPECT_EQ(s.queue_wait, (bubble::LatencySummary{.count = 4,
                                                  .min = 0ms,
                                                  .max = 30ms,
                                                  .mean = 15ms,
                                                  .p50 = 10ms,
                                                  .p90 = 30ms,
                                                  .p99 = 30ms}));
  EXPECT_EQ(s.service_time, (bubble::LatencySummary{.count = 4,
                                                    .min = 10ms,
                                                    .max = 10ms,
                                                    .mean = 10ms,
                                                    .p50 = 10ms,
                                                    .p90 = 10ms,
                                                    .p99 = 10ms}));
}

// With several workers, stats() summarises the queue waits and service times of every worker's
// jobs together, exactly, during the run and after it.
BUBBLE_TEST(PoolMetrics, LatencyOfEveryWorkerIsSummarisedTogether) {
  bubble::Runtime& rt = bubble::current_runtime();
  Pool pool({.workers = 3, .queue_capacity = 8}, rt);
  // Jobs of 10, 20, ..., 60 ms: the first three are taken at once; the fourth at 10 ms (by the
  // worker that ran the first), the fifth at 20 ms, the sixth at 30 ms. Every worker runs two.
  for (int i = 1; i <= 6; ++i) {
    ASSERT_FALSE(pool.submit(Context::background(), [i] { bubble::sleep_for(i * 10ms); }));
  }
  bubble::sleep_for(15ms);
  bubble::PoolStats s = pool.stats();
  EXPECT_EQ(s.queue_wait, (bubble::LatencySummary{.count = 4,
                                                  .min = 0ms,
                                                  .max = 10ms,
                                                  .mean = 2500us,
                                                  .p50 = 0ms,
                                                  .p90 = 10ms,
                                                  .p99 = 10ms}));
  EXPECT_EQ(s.service_time, (bubble::LatencySummary{.count = 1,
                                                    .min = 10ms,
                                                    .max = 10ms,
                                                    .mean = 10ms,
                                                    .p50 = 10ms,
                                                    .p90 = 10ms,
                                                    .p99 = 10ms}));
  EXPECT_FALSE(pool.shutdown());
  s = pool.stats();
  // Queue waits 0, 0, 0, 10, 20 and 30 ms; service times 10 to 60 ms (nearest rank: p50 is the
  // 3rd value, p90 and p99 the 6th).
  EXPECT_EQ(s.queue_wait, (bubble::LatencySummary{.count = 6,
                                                  .min = 0ms,
                                                  .max = 30ms,
                                                  .mean = 10ms,
                                                  .p50 = 0ms,
                                                  .p90 = 30ms,
                                                  .p99 = 30ms}));
  EXPECT_EQ(s.service_time, (bubble::LatencySummary{.count = 6,
                                                    .min = 10ms,
                                                    .max = 60ms,
                                                    .mean = 35ms,
                                                    .p50 = 30ms,
                                                    .p90 = 60ms,
                                                    .p99 = 60ms}));
}

BUBBLE_TEST(PoolMetrics, WithoutLatencyMeasurementCountersAreStillKept) {
  bubble::Runtime& rt = bubble::current_runtime();
  Pool pool({.workers = 1, .queue_capacity = 8, .measure_latency = false}, rt);
  std::vector<Duration> waits;
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(
        pool.submit(Context::background(), [] { bubble::sleep_for(10ms); },
                    {.on_complete = [&](const JobOutcome& o) { waits.push_back(o.queue_wait); }}));
  }
  EXPECT_FALSE(pool.shutdown());
  const bubble::PoolStats s = pool.stats();
  EXPECT_EQ(s.completed, 3u);
  EXPECT_EQ(s.queue_wait, bubble::LatencySummary{});
  EXPECT_EQ(s.service_time, bubble::LatencySummary{});
  EXPECT_EQ(waits, (std::vector<Duration>{0ns, 0ns, 0ns}));
}

// A sink that records every event as text. Events come from several threads; in a bubble they
// interleave deterministically, and a bubble::Mutex keeps the sink correct on real threads too.
class RecordingSink : public bubble::PoolMetricsSink {
 public:
  void job_submitted(std::size_t depth) override {
    add("submitted depth=" + std::to_string(depth));
  }
  void job_rejected(std::error_code reason) override {
    add(std::string("rejected ") + bubble::to_string(static_cast<errc>(reason.value())));
  }
  void job_started(Duration wait, int busy) override {
    add("started wait=" + bubble::format_duration(wait) + " busy=" + std::to_string(busy));
  }
  void job_finished(const JobOutcome& o) override {
    add(std::string("finished ") + bubble::to_string(o.status) +
        " service=" + bubble::format_duration(o.service_time));
  }
  std::vector<std::string> events() {
    std::lock_guard<bubble::Mutex> lk(mu_);
    return events_;
  }

 private:
  void add(std::string e) {
    std::lock_guard<bubble::Mutex> lk(mu_);
    events_.push_back(std::move(e));
  }
  bubble::Mutex mu_;
  std::vector<std::string> events_;
};

BUBBLE_TEST(PoolMetrics, SinkReceivesEveryEvent) {
  bubble::Runtime& rt = bubble::current_runtime();
  RecordingSink sink;
  {
    Pool pool({.workers = 1, .queue_capacity = 1, .metrics_sink = &sink}, rt);
    ASSERT_FALSE(pool.submit(Context::background(), [] { bubble::sleep_for(10ms); }));
    bubble::wait();
    ASSERT_FALSE(pool.submit(Context::background(), [] { throw std::runtime_error("boom"); }));
    EXPECT_EQ(pool.try_submit(Context::background(), [] {}), errc::full);
    EXPECT_FALSE(pool.shutdown());
    EXPECT_EQ(pool.try_submit(Context::background(), [] {}), errc::closed);
  }
  // Events are delivered outside the pool's lock, so events of different threads (the
  // submitter's "submitted", the worker's "started") may come in either order: compare sorted.
  std::vector<std::string> events = sink.events();
  std::sort(events.begin(), events.end());
  EXPECT_EQ(events, (std::vector<std::string>{
                        "finished done service=10ms",
                        "finished failed service=0s",
                        "rejected closed",
                        "rejected full",
                        "started wait=0s busy=1",
                        "started wait=10ms busy=1",
                        "submitted depth=1",
                        "submitted depth=1",
                    }));
}

BUBBLE_TEST(PoolMetrics, ExceptionsAreCaughtCountedAndReported) {
  bubble::Runtime& rt = bubble::current_runtime();
  Pool pool({.workers = 1}, rt);
  std::vector<std::string> messages;
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(pool.submit(Context::background(),
                             [i] { throw std::runtime_error("boom " + std::to_string(i)); },
                             {.on_complete = [&](const JobOutcome& o) {
                               EXPECT_EQ(o.status, JobStatus::failed);
                               EXPECT_EQ(o.error, errc::job_failed);
                               try {
                                 std::rethrow_exception(o.exception);
                               } catch (const std::runtime_error& e) {
                                 messages.emplace_back(e.what());
                               }
                             }}));
  }
  bool after = false;
  ASSERT_FALSE(pool.submit(Context::background(), [&] { after = true; }));
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(messages, (std::vector<std::string>{"boom 0", "boom 1", "boom 2"}));
  EXPECT_TRUE(after);  // The worker kept serving.
  EXPECT_EQ(pool.stats().failed, 3u);
  EXPECT_EQ(pool.stats().completed, 1u);
}

// Skipping work whose client is gone: a worker that takes a job whose deadline is
// nearer than its expected duration does not run it.
BUBBLE_TEST(PoolShedding, JobThatCannotFinishBeforeItsDeadlineIsNotRun) {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  Pool pool({.workers = 1, .queue_capacity = 8}, rt);
  ASSERT_FALSE(pool.submit(Context::background(), [] { bubble::sleep_for(80ms); }));
  auto [ctx, cancel] = Context::with_timeout(Context::background(), 100ms, rt);
  std::vector<std::string> log;
  auto record = [&](std::string name) {
    return [&log, name](const JobOutcome& o) {
      log.push_back(name + " " + bubble::to_string(o.status) + " " +
                    bubble::format_duration(o.queue_wait));
    };
  };
  // Taken at 80 ms with 20 ms left: 30 ms cannot fit, 20 ms can (exactly).
  ASSERT_FALSE(pool.submit(ctx, [&] { log.push_back("slow ran"); },
                           {.expected_duration = 30ms, .on_complete = record("slow")}));
  ASSERT_FALSE(pool.submit(ctx, [] { bubble::sleep_for(20ms); },
                           {.expected_duration = 20ms, .on_complete = record("fits")}));
  ASSERT_FALSE(pool.submit(ctx, [] {}, {.on_complete = record("undeclared")}));
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(log, (std::vector<std::string>{"slow too_late 80ms", "fits canceled 80ms",
                                           "undeclared canceled 100ms"}));
  EXPECT_EQ(rt.now() - start, 100ms);
  const bubble::PoolStats s = pool.stats();
  EXPECT_EQ(s.too_late, 1u);
  EXPECT_EQ(s.shed, 1u);
  EXPECT_EQ(s.canceled, 2u);
  EXPECT_EQ(s.completed, 1u);
  EXPECT_EQ(s.service_time.count, 3u);  // The too_late job never ran.
  EXPECT_EQ(s.queue_wait.count, 4u);
}

TEST(LatencyHistogram, EmptyIsAllZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.summary(), bubble::LatencySummary{});
  EXPECT_EQ(h.quantile(0.5), 0ns);
}

TEST(LatencyHistogram, KeepsThreeSignificantDigits) {
  EXPECT_EQ(LatencyHistogram::kept_value(999ns), 999ns);
  EXPECT_EQ(LatencyHistogram::kept_value(12'345ns), 12'300ns);
  EXPECT_EQ(LatencyHistogram::kept_value(10ms), 10ms);
  EXPECT_EQ(LatencyHistogram::kept_value(1'234'567ns), 1'230'000ns);
  EXPECT_EQ(LatencyHistogram::kept_value(-5ns), 0ns);
  EXPECT_EQ(LatencyHistogram::kept_value(Duration::max()), 9'220'000'000'000'000'000ns);
}

// Property (nearest rank): for 1..100 ms, the q-quantile is ceil(q * 100) ms.
TEST(LatencyHistogram, QuantilesUseNearestRank) {
  LatencyHistogram h;
  for (int i = 100; i >= 1; --i) h.record(std::chrono::milliseconds(i));
  for (double q : {0.0, 0.01, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    const auto expected =
        std::chrono::milliseconds(std::max(1, static_cast<int>(std::ceil(q * 100))));
    EXPECT_EQ(h.quantile(q), expected) << q;
  }
  const bubble::LatencySummary s = h.summary();
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.min, 1ms);
  EXPECT_EQ(s.max, 100ms);
  EXPECT_EQ(s.mean, 50500us);
  EXPECT_EQ(s.p50, 50ms);
  EXPECT_EQ(s.p90, 90ms);
  EXPECT_EQ(s.p99, 99ms);
}

TEST(LatencyHistogram, QuantilesAreClampedToTheExactMinAndMax) {
  LatencyHistogram h;
  h.record(12'345ns);
  h.record(12'399ns);
  EXPECT_EQ(h.quantile(0.5), 12'345ns);  // The bucket's 12'300 is below the true minimum.
  EXPECT_EQ(h.quantile(1.0), 12'399ns);
}

TEST(LatencyHistogram, MergeAddsEverything) {
  LatencyHistogram a;
  LatencyHistogram b;
  a.record(1ms);
  b.record(3ms);
  b.record(2s);
  a.merge(b);
  EXPECT_EQ(a.count(), 3u);
  EXPECT_EQ(a.min(), 1ms);
  EXPECT_EQ(a.max(), 2s);
  EXPECT_EQ(a.quantile(0.5), 3ms);
  LatencyHistogram c = a;
  a.clear();
  EXPECT_EQ(a.count(), 0u);
  EXPECT_EQ(c.count(), 3u);
}

TEST(LatencyHistogram, BadQuantileThrowsNamingIt) {
  LatencyHistogram h;
  EXPECT_THROW((void)h.quantile(1.5), std::invalid_argument);
  EXPECT_THROW((void)h.quantile(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  try {
    (void)h.quantile(-1);
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "bubble::LatencyHistogram::quantile: q must be in [0, 1], got -1.000000");
  }
}

}  // namespace

// Latency figures of bubble::Pool on the system runtime (real threads; run under ThreadSanitizer
// in CI). Only lower bounds are asserted, never wall-clock upper bounds.

#include <atomic>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <bubble/context.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>
#include <bubble/thread.hpp>
#include <bubble/time.hpp>

namespace {

using bubble::Context;
using bubble::Duration;
using bubble::JobOutcome;
using bubble::Pool;

// Property: no reported queue wait or service time is negative. A worker reads the clock once
// between two jobs, before it locks the queue, and uses that reading as the end of the job it
// finished and as the moment it took the next one; a job queued by another thread after that
// reading but before the worker got the lock must still report a queue wait >= 0 (zero: it was
// taken as soon as it was queued). Four submitters race two workers to make that window likely.
TEST(PoolLatency, NoReportedDurationIsNegative) {
  constexpr int kSubmitters = 4;
  constexpr int kPerSubmitter = 5000;
  std::atomic<std::int64_t> min_wait{INT64_MAX};
  std::atomic<std::int64_t> min_service{INT64_MAX};
  std::atomic<int> outcomes{0};
  auto lower = [](std::atomic<std::int64_t>& m, std::int64_t v) {
    std::int64_t cur = m.load();
    while (v < cur && !m.compare_exchange_weak(cur, v)) {
    }
  };
  Pool pool({.workers = 2, .queue_capacity = 4, .name = "latency"}, bubble::system_runtime());
  {
    std::vector<bubble::Thread> submitters;
    for (int s = 0; s < kSubmitters; ++s) {
      submitters.emplace_back(
          "submitter",
          [&] {
            for (int i = 0; i < kPerSubmitter; ++i) {
              ASSERT_FALSE(pool.submit(Context::background(), [] {},
                                       {.on_complete = [&](const JobOutcome& o) {
                                         lower(min_wait, o.queue_wait.count());
                                         lower(min_service, o.service_time.count());
                                         outcomes.fetch_add(1);
                                       }}));
            }
          },
          bubble::system_runtime());
    }
  }  // Joins the submitters.
  EXPECT_FALSE(pool.shutdown());
  EXPECT_EQ(outcomes.load(), kSubmitters * kPerSubmitter);
  EXPECT_GE(min_wait.load(), 0);
  EXPECT_GE(min_service.load(), 0);
  const bubble::PoolStats s = pool.stats();
  EXPECT_EQ(s.queue_wait.count, static_cast<std::uint64_t>(kSubmitters * kPerSubmitter));
  EXPECT_GE(s.queue_wait.min, Duration::zero());
  EXPECT_LE(s.queue_wait.min, s.queue_wait.max);
  EXPECT_LE(s.service_time.min, s.service_time.max);
}

}  // namespace

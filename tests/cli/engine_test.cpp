// The simulation engine's mechanics: exact results where the arithmetic is exact (clockwork
// arrivals, fixed job times), repeatability, the three queue policies, deadline skipping,
// warmup, slowdowns and the seeded draws.
#include <bubble/sim/engine.hpp>
#include <bubble/sim/random.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace bubble::sim {
namespace {

using namespace std::chrono_literals;

SimConfig clockwork(int workers, double per_second, Duration job, Duration duration) {
  SimConfig c;
  c.workers = workers;
  c.arrivals = {ArrivalKind::uniform, per_second};
  c.job_time = {JobTimeKind::fixed, job};
  c.duration = duration;
  return c;
}

TEST(Engine, ClockworkArrivalsNeverWait) {
  // Arrivals at 0.1 s, 0.2 s, ..., 9.9 s (10.0 s is the end, excluded), each served at once for
  // 50 ms: latency is exactly the job time and nobody waits.
  const SimResult r = simulate(clockwork(1, 10, 50ms, 10s));
  EXPECT_EQ(r.arrived, 99u);
  EXPECT_EQ(r.completed, 99u);
  EXPECT_EQ(r.good, 99u);
  EXPECT_EQ(r.rejected + r.timed_out + r.skipped, 0u);
  EXPECT_EQ(r.latency.min, 50ms);
  EXPECT_EQ(r.latency.max, 50ms);
  EXPECT_EQ(r.wait_ms.max, 0);
  EXPECT_DOUBLE_EQ(r.throughput_per_s, 9.9);
  EXPECT_NEAR(r.utilization, 99 * 0.05 / 10, 1e-12);
  EXPECT_EQ(r.max_queue, 0u);
  ASSERT_EQ(r.series.t_s.size(), 10u);
  // Second 0 has the arrivals at 0.1 .. 0.9 s; every later second has ten.
  EXPECT_EQ(r.series.goodput[0], 9u);
  for (std::size_t i = 1; i < 10; ++i) EXPECT_EQ(r.series.goodput[i], 10u) << i;
  EXPECT_DOUBLE_EQ(r.series.p99_ms[5], 50);
}

TEST(Engine, QueueingIsExactWhenJobsOutlastTheGap) {
  // One worker, 300 ms jobs every 200 ms: job k (k = 0, 1, ...) arrives at 0.2 (k + 1) s and
  // starts when job k - 1 ends, so it waits 0.1 k s. In 3 s the jobs arriving at 0.2 .. 2.8 s
  // that end before 3 s are those with 0.2 + 0.3 (k + 1) <= 3 s: k = 0 .. 8.
  const SimResult r = simulate(clockwork(1, 5, 300ms, 3s));
  EXPECT_EQ(r.completed, 9u);
  EXPECT_EQ(r.latency.min, 300ms);
  EXPECT_EQ(r.latency.max, 300ms + 800ms);
  EXPECT_DOUBLE_EQ(r.wait_ms.max, 800);
}

TEST(Engine, RunsAreRepeatableAndSeedsMatter) {
  SimConfig c;
  c.workers = 3;
  c.job_time = {JobTimeKind::lognormal, 100ms, 0.5};
  c.arrivals = {ArrivalKind::poisson, 25};
  c.duration = 120s;
  const SimResult a = simulate(c);
  const SimResult b = simulate(c);
  EXPECT_EQ(a.completed, b.completed);
  EXPECT_EQ(a.latency, b.latency);
  EXPECT_EQ(a.series.queue_depth, b.series.queue_depth);
  EXPECT_EQ(a.series.p99_ms, b.series.p99_ms);
  c.seed = 2;
  const SimResult other = simulate(c);
  EXPECT_NE(a.latency, other.latency);
}

TEST(Engine, RejectPolicyRefusesWhenTheQueueIsFull) {
  // One worker, one queue slot, 1 s jobs, 3 arrivals a second: one job a second is served and
  // the queue never holds more than one.
  SimConfig c = clockwork(1, 3, 1s, 30s);
  c.policy = QueuePolicy::reject;
  c.queue = 1;
  const SimResult r = simulate(c);
  EXPECT_EQ(r.max_queue, 1u);
  EXPECT_GE(r.completed, 28u);
  EXPECT_LE(r.completed, 30u);
  // Everything that arrived was served, refused, or is still in the pool at the end (<= 2).
  EXPECT_LE(r.arrived - r.completed - r.rejected, 2u);
  EXPECT_GT(r.rejected, 50u);
  EXPECT_LE(r.latency.max, 2s);
}

TEST(Engine, BlockPolicyMakesClientsWaitAndGiveUp) {
  SimConfig c = clockwork(1, 3, 1s, 30s);
  c.policy = QueuePolicy::block;
  c.queue = 1;
  c.client_timeout = 1500ms;
  const SimResult r = simulate(c);
  EXPECT_EQ(r.rejected, 0u);  // nobody is refused: they wait, then give up
  EXPECT_GT(r.timed_out, 50u);
  EXPECT_EQ(r.max_queue, 1u);
  // Waiting clients count as in flight: more than the worker and the queue slot hold.
  EXPECT_GT(r.max_in_flight, 2u);
}

TEST(Engine, BlockPolicyLetsAWaitingClientInAsSoonAsASlotFrees) {
  // A spike of 10 arrivals per second for 5 s fills the queue of one worker (1 s jobs) and
  // leaves dozens of clients waiting for room; afterwards one arrival every 4 s. Each slot a take
  // frees is filled by a waiting client at once, so while clients wait, every per-second sample
  // finds the queue full (resuming waiters only after several slots had freed would leave it
  // short between takes).
  SimConfig c = clockwork(1, 0.25, 1s, 40s);
  c.spikes.push_back({10, 0s, 5s});
  c.policy = QueuePolicy::block;
  c.queue = 8;
  const SimResult r = simulate(c);
  ASSERT_EQ(r.series.queue_depth.size(), 40u);
  for (std::size_t t = 2; t < 30; ++t) {
    EXPECT_EQ(r.series.queue_depth[t], 8u) << "at " << t + 1 << " s";
  }
}

TEST(Engine, DeadlineSkippingOnlyStartsJobsThatCanFinish) {
  // 150% load on an unbounded queue with 2 s clients: with fixed 400 ms jobs, a job started with
  // at least 400 ms left always finishes in time, so nothing finishes late, and the workers
  // spend all their time on jobs that count.
  SimConfig c = clockwork(4, 15, 400ms, 60s);
  c.arrivals.kind = ArrivalKind::poisson;
  c.client_timeout = 2s;
  c.deadline_skip = true;
  const SimResult r = simulate(c);
  EXPECT_EQ(r.timed_out, 0u);
  EXPECT_GT(r.skipped, 200u);
  EXPECT_GT(r.goodput_per_s, 9.5);  // capacity is 10/s
  EXPECT_LE(r.latency.max, 2s);
}

TEST(Engine, WarmupIsExcluded) {
  SimConfig c = clockwork(1, 10, 50ms, 10s);
  c.warmup = 5s;
  const SimResult r = simulate(c);
  EXPECT_EQ(r.completed, 50u);  // jobs done in [5 s, 10 s): those arriving at 5.0 .. 9.9 s
  EXPECT_DOUBLE_EQ(r.window_s, 5);
  EXPECT_EQ(r.series.t_s.size(), 10u);  // the series covers the whole run
}

TEST(Engine, SlowdownsApplyToJobsStartingAfterThem) {
  SimConfig c = clockwork(100, 10, 100ms, 20s);
  c.slowdowns.push_back({{JobTimeKind::fixed, 2s}, 10s});
  const SimResult r = simulate(c);
  EXPECT_EQ(r.latency.min, 100ms);
  EXPECT_EQ(r.latency.max, 2s);
  // In flight (sampled at the end of each second; a job may arrive or end at that very instant):
  // about 1 before (0.1 s jobs, 10/s), about 20 after (2 s jobs, 10/s).
  EXPECT_LE(r.series.in_flight[5], 1u);
  EXPECT_GE(r.series.in_flight[15], 19u);
  EXPECT_LE(r.series.in_flight[15], 21u);
}

TEST(Engine, ConfigurationErrorsNameTheField) {
  SimConfig c;
  c.workers = 0;
  EXPECT_THROW(simulate(c), std::invalid_argument);
  SimConfig d;
  d.deadline_skip = true;
  EXPECT_THROW(simulate(d), std::invalid_argument);
  SimConfig w;
  w.warmup = w.duration;
  EXPECT_THROW(simulate(w), std::invalid_argument);
  SimConfig rl;
  rl.rate_limit = 10;
  rl.policy = QueuePolicy::block;
  try {
    simulate(rl);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rate_limit"), std::string::npos);
  }
}

TEST(Draws, MeansAndTheNormalQuantile) {
  // Property: sample means converge to the distribution's mean (1e5 draws: the standard error is
  // 0.3% for the exponential, 0.17% for lognormal sigma 0.5; tolerance 1%).
  Draws d(7, 0);
  double exp_sum = 0;
  double logn_sum = 0;
  const JobTime logn{JobTimeKind::lognormal, 100ms, 0.5};
  for (int i = 0; i < 100'000; ++i) {
    exp_sum += d.exponential(2.0);
    logn_sum += static_cast<double>(d.job_time(logn).count());
  }
  EXPECT_NEAR(exp_sum / 1e5, 2.0, 0.02);
  EXPECT_NEAR(logn_sum / 1e5 / 1e8, 1.0, 0.01);
  EXPECT_NEAR(Draws::normal_quantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(Draws::normal_quantile(0.5), 0, 1e-12);
  EXPECT_NEAR(Draws::normal_quantile(0.001), -Draws::normal_quantile(0.999), 1e-9);
  for (int i = 0; i < 1000; ++i) {
    const double u = d.uniform();
    EXPECT_GT(u, 0);
    EXPECT_LT(u, 1);
  }
  // Streams of one seed differ; the same seed and stream repeat.
  EXPECT_NE(Draws(1, 0).uniform(), Draws(1, 1).uniform());
  EXPECT_EQ(Draws(1, 0).uniform(), Draws(1, 0).uniform());
}

}  // namespace
}  // namespace bubble::sim

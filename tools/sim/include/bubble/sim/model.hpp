#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <bubble/time.hpp>

// The description of one simulated system: a bubble::Pool fed by open-loop arrivals. These are
// plain values; simulate() (engine.hpp) runs them and validate() says what is wrong with them.
namespace bubble::sim {

// How long a job runs once a worker takes it.
enum class JobTimeKind {
  fixed,        // exactly `mean`
  exponential,  // exponential with mean `mean` (the M in M/M/c)
  lognormal,    // lognormal with mean `mean` and sigma `sigma` (of the underlying normal)
};

struct JobTime {
  JobTimeKind kind = JobTimeKind::fixed;
  Duration mean{};
  double sigma = 0;  // lognormal only
};

// How arrivals are spaced.
enum class ArrivalKind {
  poisson,  // exponential gaps with mean 1 / rate (random arrivals, the first M in M/M/c)
  uniform,  // gaps of exactly 1 / rate (clockwork)
};

struct Arrivals {
  ArrivalKind kind = ArrivalKind::poisson;
  double per_second = 0;
};

// From `from` to `to` (virtual time since the start), the main stream arrives at `per_second`
// instead of its base rate.
struct Spike {
  double per_second = 0;
  Duration from{};
  Duration to{};
};

// Jobs that start at or after `from` take `job_time` (a dependency that slows down).
struct Slowdown {
  JobTime job_time{};
  Duration from{};
};

// `count` jobs of the tenant "batch" submitted at once at `at`.
struct Batch {
  std::int64_t count = 0;
  Duration at{};
};

// What happens to an arrival when the queue is full.
enum class QueuePolicy {
  unbounded,  // the queue never fills (overload turns into waiting)
  block,      // the arrival waits for room (its client gives up at --client-timeout)
  reject,     // the arrival is refused at once (a 503)
};

// How jobs of different streams (tenants) share the pool.
enum class Fairness {
  round_robin,  // each stream is its own tenant: the pool serves tenants in turn
  fifo,         // every stream is the same tenant: first in, first out
};

// Which jobs the statistics describe.
enum class StreamFilter { all, main, urgent, batch };

// A load sweep: from `from` to `to` (fractions of capacity) in steps of `step`.
struct LoadSweep {
  double from = 0;
  double to = 0;
  double step = 0;
  // The loads from, from + step, ..., up to to (within a rounding tolerance): at most 1,001 of
  // them. A sweep that parse_sweep would reject (to < from, step <= 0, more than 1,000 steps)
  // gives {from}.
  std::vector<double> loads() const;
};

// One simulated system. Streams: "main" (arrivals, spikes; priority 0), optionally "urgent"
// (priority 1) and "batch" (priority 0); each is a tenant of its own under round_robin.
struct SimConfig {
  int workers = 4;            // 1 to 10,000 (each worker is a bubble thread with its own stack)
  std::ptrdiff_t queue = 64;  // capacity for block and reject
  QueuePolicy policy = QueuePolicy::unbounded;
  JobTime job_time{JobTimeKind::fixed, std::chrono::milliseconds{400}};
  std::vector<Slowdown> slowdowns{};
  Arrivals arrivals{ArrivalKind::poisson, 9};
  std::vector<Spike> spikes{};
  std::optional<Arrivals> urgent{};
  std::optional<Batch> batch{};
  Duration aging_step{};            // PoolOptions::aging_step
  std::ptrdiff_t tenant_queue = 0;  // PoolOptions::max_queued_per_tenant (0: no cap)
  Fairness fairness = Fairness::round_robin;
  std::optional<Duration> client_timeout{};
  bool deadline_skip = false;          // needs client_timeout
  std::optional<double> rate_limit{};  // per second
  std::optional<std::int64_t> concurrency_limit{};
  Duration duration = std::chrono::seconds{60};
  Duration warmup{};
  std::uint64_t seed = 1;
  StreamFilter measure = StreamFilter::all;
  // Called once per simulated second with the virtual time elapsed and the duration (for a
  // progress line). Runs inside the bubble: it must not block.
  std::function<void(Duration elapsed, Duration total)> progress{};
};

// The job-time distribution in force for jobs starting at `t` (since the start of the run).
const JobTime& job_time_at(const SimConfig& config, Duration t);

// Capacity in jobs per second: workers / mean job time (of the base job time).
double capacity_per_second(const SimConfig& config);

// The offered load of the main stream's base rate (and urgent stream, if any): arrivals per second
// divided by capacity.
double offered_load(const SimConfig& config);

// Throws std::invalid_argument naming the field and its value if the configuration cannot be
// simulated (workers < 1, warmup >= duration, deadline_skip without client_timeout, a rate limit
// with the block policy or deadline skipping, ...).
void validate(const SimConfig& config);

}  // namespace bubble::sim

#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <bubble/pool/latency_histogram.hpp>
#include <bubble/sim/model.hpp>
#include <bubble/time.hpp>

// simulate(): runs a SimConfig on a real bubble::Pool inside a bubble (bubble::run, fifo
// strategy), so the run takes virtual time only and is exactly repeatable: the same config and
// seed give the same result, byte for byte, every time.
//
// The model. One generator thread per stream sleeps (in virtual time) until its next arrival and
// submits a job: try_submit for the unbounded and reject policies; for block, a job that finds the
// queue full is handed to a client thread of its own that waits in Pool::submit until there is
// room or its client gives up (client_timeout). A rate limit puts a RateLimiter in front
// (RateLimiter::try_submit: an arrival without a token is refused, the 429); a concurrency limit a
// ConcurrencyLimiter (try_acquire before submitting, release when the job ends: an arrival over
// the limit is refused, the fast 503). Each job's body sleeps for its job time, drawn when a
// worker starts it from the job time in force at that moment (slowdowns), and ignores its
// context: the server does not learn that the client gave up. With deadline_skip, each job
// carries its client's deadline (a context with the client timeout) and the mean job time as
// JobOptions::expected_duration, so a worker skips (JobStatus::too_late) a job that cannot finish
// in time.
//
// What is counted. Latency is what the sender sees: from arrival until the job is done (queue
// wait plus service). Only events inside the measured window [warmup, duration) count, by the
// time they happen (a job counts when it ends), and only for the streams `measure` selects.
// At `duration` arrivals stop, clients still waiting give up, and the run ends; jobs still queued
// or running then are not counted.
namespace bubble::sim {

// A summary of durations in milliseconds.
struct MillisecondSummary {
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
};

// Per-second samples over the whole run (warmup included), one entry per second [t, t + 1).
struct Series {
  std::vector<double> t_s;               // t
  std::vector<std::size_t> queue_depth;  // jobs waiting in the pool's queue at t + 1 (all streams)
  std::vector<std::size_t> in_flight;    // jobs accepted and not yet ended at t + 1 (all streams)
  std::vector<std::uint64_t> goodput;  // jobs done within their client's timeout during the second
  std::vector<double> p99_ms;          // p99 latency of the jobs done during the second (0: none)
};

struct SimResult {
  std::uint64_t arrived = 0;  // arrivals in the window
  // Jobs a worker finished (throughput); those finished after their client gave up are also
  // counted in timed_out.
  std::uint64_t completed = 0;
  // Jobs finished within their client's timeout (every completed job when there is none).
  std::uint64_t good = 0;
  std::uint64_t rejected = 0;  // refused: queue full, tenant cap, rate limit, concurrency limit
  // Clients that gave up: their job finished after the client timeout, or they gave up waiting
  // for room (block policy).
  std::uint64_t timed_out = 0;
  std::uint64_t skipped = 0;    // not run: could not finish before the client's deadline
  double window_s = 0;          // duration - warmup, in seconds
  double throughput_per_s = 0;  // completed / window_s
  double goodput_per_s = 0;     // good / window_s
  // Sum of the service times of the jobs (of every stream) finished in the window / (workers *
  // window).
  double utilization = 0;
  std::size_t max_queue = 0;  // the longest the pool's queue was in the window (all streams)
  std::size_t max_in_flight = 0;
  MillisecondSummary latency_ms;  // completed jobs: arrival to done
  MillisecondSummary wait_ms;     // jobs a worker took (skipped ones too): arrival to start
  LatencySummary latency;         // the same latencies, exact, as durations
  Series series;
  std::uint64_t jobs_simulated = 0;  // every job a worker took, window or not (for speed figures)
};

// Runs `config` (after validate(config), which throws std::invalid_argument naming the field).
// Blocks the calling OS thread until the simulation ends; must not be called from a bubble.
SimResult simulate(const SimConfig& config);

// Converts a LatencySummary to milliseconds.
MillisecondSummary to_milliseconds(const LatencySummary& s);

}  // namespace bubble::sim

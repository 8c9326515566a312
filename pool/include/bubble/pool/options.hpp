#pragma once

#include <cstddef>
#include <string>

#include <bubble/time.hpp>

namespace bubble {

class PoolMetricsSink;

// The configuration of a Pool. Invalid values make the Pool constructor throw
// std::invalid_argument naming the field and its value.
struct PoolOptions {
  // Worker threads, started by the constructor. Must be >= 1.
  int workers = 1;
  // The most jobs that may wait in the queue (not counting running ones). Must be >= 1.
  std::ptrdiff_t queue_capacity = 64;
  // Hysteresis of backpressure: how many free slots a full queue must have before the workers
  // resume a submitter that waits for room (Pool::submit, Pool::submit_within). Zero (the
  // default) means automatic: a quarter of queue_capacity, at least 1. One resumes a waiter as
  // soon as a worker frees a slot. Must be >= 0 and <= queue_capacity.
  //
  // Resuming in batches saves a sleep and a wake-up per job on real threads: a submitter that
  // outruns the workers waits once per batch instead of once per freed slot. It only decides
  // when the workers wake a waiter, never whether a submit may proceed: a submit that finds room
  // queues its job without waiting, whatever the threshold. A resumed submitter, once it has
  // queued its job, resumes the next waiter while room remains, so a batch of free slots serves
  // every waiter in turn. Closing the pool and a waiter's own context (or submit_within's
  // max_wait) still end a wait at once, whatever the room.
  //
  // Set 1 when a job may wait for its own submitter's progress (for instance, a job that waits
  // for an event its submitter sends after its next submit): with a larger threshold, workers
  // blocked in such jobs free fewer slots than the threshold, the submitter is never resumed
  // and the two wait for each other.
  std::ptrdiff_t room_to_resume = 0;
  // Names the pool's threads ("<name>/worker-<i>") in reports and traces.
  std::string name = "pool";
  // Aging, against starvation: a queued job's effective priority is its JobOptions::priority plus
  // one for every full aging_step it has waited, computed when a worker takes a job (not in a
  // comparator, so it is always current). Zero (the default) disables aging: a higher priority
  // always goes first and a steady flood of urgent jobs starves the others. Must be >= 0.
  Duration aging_step{};
  // Per-tenant cap on queued jobs: a submit that would exceed it returns errc::tenant_limit at
  // once (the "429" of load shedding), without waiting. Zero: no cap. Must be >= 0.
  std::ptrdiff_t max_queued_per_tenant = 0;
  // Per-tenant cap on running jobs: a worker does not start a job of a tenant that already has
  // this many running; the job stays queued until one of them ends (a per-tenant bulkhead).
  // Zero: no cap. Must be >= 0.
  int max_running_per_tenant = 0;
  // Measure every job's queue wait and service time on the runtime's clock (PoolStats histograms,
  // JobOutcome, PoolMetricsSink). It costs two clock reads per job, which on real threads is
  // most of the pool's own overhead for tiny jobs; false skips them (the histograms stay empty
  // and the durations reported are zero). Counters and gauges are kept either way.
  bool measure_latency = true;
  // Receives every metric event (see PoolMetricsSink). Not owned; must outlive the pool. Null:
  // none (PoolStats is always available).
  PoolMetricsSink* metrics_sink = nullptr;
};

}  // namespace bubble

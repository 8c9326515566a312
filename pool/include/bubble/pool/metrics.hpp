#pragma once

#include <cstddef>
#include <cstdint>
#include <system_error>

#include <bubble/pool/job_outcome.hpp>
#include <bubble/pool/latency_histogram.hpp>
#include <bubble/time.hpp>

namespace bubble {

// PoolStats is a consistent snapshot of a Pool's metrics (Pool::stats()): the USE method's
// utilisation (busy workers), saturation (queue depth, queue wait) and errors (rejections,
// failures). Counters count from the pool's construction and never decrease.
struct PoolStats {
  int workers = 0;                     // Worker threads the pool was built with.
  int busy_workers = 0;                // Workers running a job right now.
  std::size_t queue_depth = 0;         // Jobs waiting in the queue right now.
  std::size_t queue_capacity = 0;      // PoolOptions::queue_capacity.
  std::size_t waiting_submitters = 0;  // Threads blocked in submit/submit_within for room.
  bool closed = false;                 // shutdown() has begun; no job is accepted any more.
  bool cancelled = false;              // A shutdown deadline passed; job contexts are cancelled.

  std::uint64_t submitted = 0;              // Jobs accepted (queued).
  std::uint64_t rejected_full = 0;          // errc::full: try_submit, or submit_within out of time.
  std::uint64_t rejected_closed = 0;        // errc::closed: submitted during or after shutdown.
  std::uint64_t rejected_tenant_limit = 0;  // errc::tenant_limit.
  std::uint64_t completed = 0;              // JobStatus::done.
  std::uint64_t canceled = 0;               // JobStatus::canceled.
  std::uint64_t failed = 0;                 // JobStatus::failed (the job threw).
  std::uint64_t too_late = 0;               // JobStatus::too_late (not run).
  // Load deliberately shed to protect the jobs that are served:
  // rejected_full + rejected_tenant_limit + too_late.
  std::uint64_t shed = 0;

  // Time from queueing to being taken by a worker, of every job taken (too_late ones included),
  // on the runtime's clock. All zero when PoolOptions::measure_latency is false.
  LatencySummary queue_wait;
  // Time a job ran, of every job that ran. All zero when PoolOptions::measure_latency is false.
  LatencySummary service_time;
};

// PoolMetricsSink receives a Pool's metric events as they happen, for exporting them to a
// metrics library (Prometheus, OpenTelemetry, ...). Every method has an empty default, so a sink
// overrides only what it needs.
//
// Thread safety: methods are called on the submitting threads and the worker threads,
// concurrently, without any pool lock held; an implementation must synchronise itself and must
// not block for long (if it may run in a bubble, synchronise with a bubble::Mutex, whose waits the
// bubble sees, rather than a standard library mutex, whose waits it cannot see). They must not
// call back into the pool except for stats(). Exceptions must not escape them.
class PoolMetricsSink {
 public:
  virtual ~PoolMetricsSink() = default;
  // A job was queued; `queue_depth` counts it.
  virtual void job_submitted(std::size_t queue_depth) { (void)queue_depth; }
  // A submit was refused with `reason` (errc::full, errc::closed or errc::tenant_limit).
  virtual void job_rejected(std::error_code reason) { (void)reason; }
  // A worker took a job that waited `queue_wait`; `busy_workers` counts this one if it runs it.
  virtual void job_started(Duration queue_wait, int busy_workers) {
    (void)queue_wait;
    (void)busy_workers;
  }
  // A job ended (the same outcome on_complete receives).
  virtual void job_finished(const JobOutcome& outcome) { (void)outcome; }
};

}  // namespace bubble

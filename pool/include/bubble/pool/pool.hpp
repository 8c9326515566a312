#pragma once

#include <memory>
#include <system_error>

#include <bubble/context.hpp>
#include <bubble/pool/job.hpp>
#include <bubble/pool/job_options.hpp>
#include <bubble/pool/job_outcome.hpp>
#include <bubble/pool/metrics.hpp>
#include <bubble/pool/options.hpp>
#include <bubble/runtime.hpp>
#include <bubble/source_location.hpp>
#include <bubble/time.hpp>

namespace bubble {

// Pool is a fixed set of worker threads serving a bounded queue of jobs: a production-shaped
// pool (backpressure, graceful shutdown, tenant fairness, priorities), written on the Runtime and
// the framework's primitives only, so it runs on real threads and in a bubble (virtual time) with
// the same contract. On real threads most submits do not take the pool's mutex (they leave the
// job where the next holder of the mutex queues it, as if queued at the submit); in a bubble
// every submit takes it, so that the bubble schedules each submit against the workers.
//
// Admission (backpressure and load shedding). The queue holds at most
// PoolOptions::queue_capacity jobs. When it is full, submit() waits for room (the caller is slowed
// down: backpressure), try_submit() refuses at once with errc::full (load shedding), and
// submit_within() waits at most a given time, then refuses with errc::full. Every submit returns
// errc::closed once shutdown() has begun, including submits that were waiting for room when it
// began; errc::tenant_limit when the job's tenant already has PoolOptions::max_queued_per_tenant
// jobs queued; and the submitter's ctx.err() if its context ends first (a context that is already
// done refuses the job at once). A refused job is destroyed before the call returns and never
// runs; only a call that returns {} hands the job to the pool. A submit that waits for room is
// resumed once the queue has PoolOptions::room_to_resume free slots (by default a quarter of the
// capacity), not at every freed slot: backpressure in batches, which spares real threads a sleep
// and a wake-up per job. A submit that finds room never waits, and each resumed submitter
// resumes the next waiter while room remains.
//
// Which job a worker takes. Workers take the job of highest effective priority: its
// JobOptions::priority plus one for every full PoolOptions::aging_step it has waited, computed
// when the worker takes a job (so a flood of urgent work delays but cannot starve older, less
// urgent jobs when aging is on). Ties go to the level whose oldest job is older. Within a
// priority, tenants with queued jobs are served round robin, one job each in turn, in the order
// they became non-empty; within a tenant, first in, first out. A tenant that already has
// PoolOptions::max_running_per_tenant jobs running is skipped until one of them ends.
//
// Which worker runs it. A job queued while workers are idle wakes one of them at once, the one
// that went idle last (idle workers are woken last in, first out: on real threads the one most
// likely still spinning before it sleeps, with the warmest caches), and each further job queued
// wakes one more idle worker while there are jobs for them; a worker back from a job takes the
// next one without waiting.
//
// How a job runs. Each job runs with a context that ends when either its submitter's context
// ends or the pool is cancelled (at a shutdown deadline, or by the destructor). A job taken after
// the pool was cancelled starts with a context that is already done, and should return at once.
// If the job declared JobOptions::expected_duration and, when a worker takes it, the time left
// before its context's deadline is less than that, the job is not run (JobStatus::too_late).
// Every job a submit accepted ends exactly once — done, canceled, too_late or failed (see
// JobStatus) — and is reported exactly once, through JobOptions::on_complete, the metrics sink
// and the counters of stats(); shutdown never drops a queued job.
//
// Exceptions. A job that throws an exception derived from std::exception fails: the exception is
// caught, counted (PoolStats::failed), handed to on_complete, and the worker goes on serving.
// Exceptions of any other type are not caught: they escape the worker thread (the system runtime
// then calls std::terminate; a bubble fails the run and rethrows them from bubble::run). That is
// deliberate: a bubble unwinds the stacks of its threads with an exception that is not a
// std::exception (bubble::Unwind), which must propagate, and RapidCheck's
// RC_ASSERT failures must reach the property, not be counted as a failed job.
//
// Nested submits. A job that submits into its own pool and waits for the inner job can
// deadlock: when every worker runs such a job, the inner jobs never get a worker. In a
// bubble the run fails with bubble::DeadlockError naming the pool's workers; give the inner jobs
// their own pool (a bulkhead). A job that waits for its own submitter's progress needs
// PoolOptions::room_to_resume = 1 (see there).
//
// Thread safety: every member may be called concurrently from any thread of the pool's runtime,
// including from the pool's own jobs (except waiting submits into a full pool, see above). The
// destructor must not run concurrently with other members.
class Pool {
 public:
  // Starts options.workers threads on `rt`, named "<options.name>/worker-<i>". Throws
  // std::invalid_argument naming the field and its value if the options are invalid (see
  // PoolOptions).
  explicit Pool(PoolOptions options, Runtime& rt = current_runtime());

  // Shuts the pool down with a deadline that has already passed: stops accepting, cancels the
  // pool (every job still queued runs with a context that is already done), waits for the
  // workers to stop, joins them. A well-behaved job returns promptly, so this does not block for
  // long; a job that ignores its context keeps the destructor waiting.
  ~Pool();

  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Queues `job`, waiting while the queue is full. Returns {} once it is queued; errc::closed if
  // shutdown has begun or begins while waiting; errc::tenant_limit if the job's tenant is at its
  // queued cap (at once, or after waiting for room); ctx.err() if `ctx` is done first. `ctx` is
  // the submitter's context: the job's context ends when it ends. Throws std::invalid_argument if
  // `job` is empty or opts.expected_duration is negative.
  [[nodiscard]] std::error_code submit(const Context& ctx, Job job, JobOptions opts = {},
                                       SourceLocation where = SourceLocation::current());

  // Like submit, but never waits: returns errc::full at once if the queue is full.
  [[nodiscard]] std::error_code try_submit(const Context& ctx, Job job, JobOptions opts = {},
                                           SourceLocation where = SourceLocation::current());

  // Like submit, but waits for room at most `max_wait` (a "queue measured in time"): returns
  // errc::full if the queue is still full after exactly max_wait on the runtime's clock
  // (max_wait <= 0: like try_submit). If ctx ends first, returns ctx.err().
  [[nodiscard]] std::error_code submit_within(const Context& ctx, Job job, Duration max_wait,
                                              JobOptions opts = {},
                                              SourceLocation where = SourceLocation::current());

  // Graceful shutdown, in three steps:
  //   1. stop accepting: later submits, and submits waiting for room, return errc::closed;
  //   2. drain: the workers finish the running jobs and every queued one, then stop;
  //   3. if `ctx` ends before they have stopped: cancel the pool (every running job's context
  //      ends, every job still queued runs with an already-done context), wait for the workers to
  //      stop, and return ctx.err().
  // Returns {} when the workers stopped before ctx ended. Blocks until the workers have stopped
  // in every case (so it waits for jobs that ignore their context). Idempotent and safe to call
  // concurrently: every call waits for the workers to stop; a call whose ctx ends first cancels
  // the pool and returns its error; a call made after the workers stopped returns {} at once.
  // Calling it from one of the pool's own jobs deadlocks (the job waits for itself).
  std::error_code shutdown(const Context& ctx = Context::background(),
                           SourceLocation where = SourceLocation::current());

  // A consistent snapshot of the pool's metrics. Takes the pool's lock, never waits for a job:
  // it holds the lock while it merges each worker's latency histograms (measure_latency), for a
  // time that grows with the number of workers and the range of the recorded latencies.
  PoolStats stats() const;

  // The runtime the pool's threads, clock and primitives belong to.
  Runtime& runtime() const noexcept;

  // The options the pool was built with.
  const PoolOptions& options() const noexcept;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace bubble

#pragma once

#include <exception>
#include <system_error>

#include <bubble/time.hpp>

namespace bubble {

// How a job accepted by a Pool ended. Every accepted job ends in exactly one of these ways, and
// the pool reports it exactly once (JobOptions::on_complete, PoolMetricsSink, PoolStats).
enum class JobStatus {
  // The job ran and returned normally, and its context was not done when it returned.
  done,
  // The job ran (possibly starting with a context that was already done) and returned normally,
  // but its context was done when it returned: its submitter gave up, or the pool was cancelled
  // at its shutdown deadline. Whether the job finished its work is the job's business.
  canceled,
  // The job was not run: when a worker took it, the time left before its context's deadline was
  // less than its JobOptions::expected_duration ("skipping work whose client is gone").
  too_late,
  // The job ran and threw an exception derived from std::exception; the pool caught it.
  failed,
};

// A short name for a status: "done", "canceled", "too_late" or "failed".
const char* to_string(JobStatus status) noexcept;

// What the pool reports about one job when it has ended.
struct JobOutcome {
  JobStatus status = JobStatus::done;
  // {} for done; the job context's err() for canceled (errc::canceled or errc::deadline_exceeded);
  // errc::too_late; errc::job_failed for failed.
  std::error_code error;
  // For failed: the exception the job threw. Null otherwise.
  std::exception_ptr exception;
  // Time from the moment the job was queued to the moment a worker took it, on the pool
  // runtime's clock (zero when PoolOptions::measure_latency is false). Never negative.
  Duration queue_wait{};
  // Time the job ran, on the pool runtime's clock (zero for too_late, and when
  // PoolOptions::measure_latency is false). Never negative.
  Duration service_time{};
  // How the two are measured: the submitter reads the clock once as it queues the job, and a
  // worker reads it once between two jobs, after finishing one and before locking the queue to
  // take the next; that one reading is both the end of the first job's service time and the
  // moment the second was taken. In a bubble virtual time cannot move in between (the worker at
  // most waits for the pool's lock, and no thread blocks while holding it), so both figures are
  // exact. On real threads the moment taken is that reading, made just before the worker locks
  // the queue: a job queued by another thread after that reading reports a queue wait of zero.
};

}  // namespace bubble

#pragma once

#include <functional>
#include <optional>
#include <string>

#include <bubble/pool/job_outcome.hpp>
#include <bubble/time.hpp>

namespace bubble {

// Per-job options of Pool::submit, Pool::try_submit and Pool::submit_within.
struct JobOptions {
  // Larger is more urgent. Among queued jobs a worker takes one of the highest (aged) priority;
  // see PoolOptions::aging_step for how waiting raises a job's priority.
  int priority = 0;
  // The tenant the job belongs to ("" is a tenant like any other, the default one). Tenants with
  // queued jobs of the same priority are served round robin, and PoolOptions caps apply per
  // tenant.
  std::string tenant{};
  // How long the job is expected to run. When set, a worker that takes the job while the time
  // left before its context's deadline is less than this does not run it and reports
  // JobStatus::too_late. Must not be negative.
  std::optional<Duration> expected_duration{};
  // Called exactly once with the job's outcome, on the worker thread, after the job has ended
  // (and after the pool's counters include it). It must not block for long: the worker serves no
  // other job meanwhile. An exception escaping it escapes the worker thread (the system runtime
  // terminates; a bubble fails the run): report errors some other way.
  std::function<void(const JobOutcome&)> on_complete{};
};

}  // namespace bubble

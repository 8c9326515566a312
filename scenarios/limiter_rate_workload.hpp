#pragma once

// RateLimiter workloads for the limiter suite: what the generated submitters do, what a run
// observed, and the conditions every run must satisfy. Private to the scenarios library.
#include <bubble/gen/schedule.hpp>
#include <bubble/schedule.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/time.hpp>

#include <rapidcheck.h>

#include <optional>
#include <ostream>
#include <system_error>
#include <vector>

namespace bubble::scenarios {

// One call a submitter makes: it sleeps `gap_ms`, then submits one job through limiter `limiter`
// with submit (waits for a token and for room) or try_submit (never waits). The job belongs to
// tenant `tenant` and works `work_ms` of virtual time (less if its context ends). A submit whose
// `deadline_ms` is set uses a context that ends that long after the call starts.
struct RateCall {
  int gap_ms = 0;
  int limiter = 0;
  bool try_submit = false;
  int tenant = 0;
  int work_ms = 0;
  int deadline_ms = -1;  // -1: the context never ends
};

// One RateLimiter on the shared pool: n per interval; stop() called at stop_at_ms (-1: only at
// the end of the run, after every submitter returned).
struct RateLimiterSpec {
  int n = 1;
  int interval_ms = 10;
  int stop_at_ms = -1;
};

// A whole case: one pool, several limiters feeding it, several submitter threads, the moment the
// pool shuts down (-1: at the end) and the schedule of the bubble.
struct RateWorkload {
  int workers = 1;
  int queue_capacity = 1;
  int tenant_cap = 0;   // PoolOptions::max_queued_per_tenant (0: no cap)
  int running_cap = 0;  // PoolOptions::max_running_per_tenant (0: no cap)
  std::vector<RateLimiterSpec> limiters;
  std::vector<std::vector<RateCall>> submitters;
  int shutdown_at_ms = -1;
  Schedule schedule;

  int calls() const;
};

void showValue(const RateCall& c, std::ostream& os);
void showValue(const RateLimiterSpec& l, std::ostream& os);
void showValue(const RateWorkload& w, std::ostream& os);

// Workloads whose pool is small (1-3 slots, 1-2 workers, tenant caps 0-2) so that submits wait
// for room across interval boundaries and are refused with full, closed and tenant_limit, with
// context deadlines, stop() and shutdown at random moments, one or two limiters.
rc::Gen<RateWorkload> backpressure_workload();
// The same without backpressure: the pool's queue holds every job, so a submit never waits for
// room (refusals are immediate: tenant_limit, closed), and a submit that is still blocked at an
// interval boundary is known to be waiting for a token.
rc::Gen<RateWorkload> backlog_workload();

// What one call observed: when it was made and returned (since the start), its result, how often
// its job's body ran and how many outcomes the pool reported for it.
struct CallRecord {
  int submitter = 0;
  int index = 0;
  RateCall call{};
  Duration called{};
  Duration returned{};
  std::error_code result{};
  bool finished = false;
  // The order in which calls returned, and every limiter's available() right then.
  int return_seq = 0;
  std::vector<int> available_after;
  int ran = 0;
  int outcomes = 0;
};

// What a run observed: every call, and when each limiter's stop() and the pool's shutdown began.
struct RateObservations {
  std::vector<CallRecord> calls;
  std::vector<std::optional<Duration>> stopped_at;
  std::optional<Duration> shutdown_at;
};

// The conditions of the RateLimiter properties, as BUBBLE_ASSERT / BUBBLE_FAIL with a message
// naming the calls involved:
// - at most n admissions per refill window: for every span of windows [a, b] of a limiter, the
//   accepted calls made at or after the start of window a and returned before the end of window b
//   are at most n * (b - a + 1) (a call spends its token between its start and its return);
// - the tokens a limiter holds when a call returns, plus the jobs the current window has admitted
//   so far (made and returned within it), never exceed n: a refund that lifts the bucket above
//   what the window has left is seen at once, even if no job takes the extra token;
// - every call ends; an accepted job reports exactly one outcome, its body runs at most once; a
//   refused job never runs and reports nothing; results are among the documented ones;
// - stop(): a call that returns limiter_stopped returns at max(its start, the stop instant), and
//   every call made after the stop instant returns limiter_stopped;
// - with `exact` (backlog workloads only): the admissions of a window are exactly n whenever a
//   submit through that limiter was still waiting at the window's end: a limiter that refuses
//   too much fails as surely as one that admits too much.
void check_rate_observations(const RateWorkload& w, const RateObservations& obs, bool exact);

}  // namespace bubble::scenarios

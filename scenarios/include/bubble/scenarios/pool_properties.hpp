#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include <bubble/runtime.hpp>
#include <bubble/scenarios/pool_under_test.hpp>
#include <bubble/scenarios/show.hpp>

// The pool's workload property: generated workloads that reach every admission, cancellation and
// shutdown path of a pool, and the conditions every run must satisfy. Parameterised by the pool
// implementation (PoolImplementation), so that bubble::Pool and the known-bad exhibits run the
// same checks.
namespace bubble::scenarios {

// What a generated job does when it runs.
enum class JobBehaviour {
  watches_context,  // works for `work`, returning early when its context ends
  ignores_context,  // works for `work` whatever its context says
  throws,           // works for `work`, then throws std::runtime_error
};
const char* to_string(JobBehaviour b) noexcept;

// One generated job and how its submitter hands it over.
struct JobSpec {
  SubmitKind kind = SubmitKind::submit;
  DurationValue gap;       // the submitter sleeps this long before submitting it
  DurationValue work;      // how long the job works
  DurationValue max_wait;  // submit_within's max_wait
  JobBehaviour behaviour = JobBehaviour::watches_context;
  int tenant = 0;    // tenant "t<tenant>"
  int priority = 0;  // JobOptions::priority
  int context = -1;  // -1: Context::background(); else the index of a generated context
  std::optional<DurationValue> expected;  // JobOptions::expected_duration
};
void showValue(const JobSpec& j, std::ostream& os);

// A submitter context: cancelled at `cancel_at` (if set), with a deadline `deadline` after the
// start (if set).
struct ContextSpec {
  std::optional<DurationValue> cancel_at;
  std::optional<DurationValue> deadline;
};
void showValue(const ContextSpec& c, std::ostream& os);

// A thread that calls shutdown at `at` with a context whose deadline is `grace` later.
struct ShutdownSpec {
  DurationValue at;
  DurationValue grace;
};
void showValue(const ShutdownSpec& s, std::ostream& os);

// A whole generated case. No shutdowns: the pool is destroyed without shutdown at `destroy_at`
// (after every submitter has returned).
struct PoolCase {
  int workers = 1;
  int capacity = 1;
  int room_to_resume = 0;  // PoolOptions::room_to_resume: 0 (a quarter of capacity) to capacity
  DurationValue aging_step;
  int max_queued_per_tenant = 0;
  int max_running_per_tenant = 0;
  std::vector<std::vector<JobSpec>> submitters;
  std::vector<ContextSpec> contexts;
  std::vector<ShutdownSpec> shutdowns;
  DurationValue destroy_at;
  // The workload runs once under each of these (1-4 of them): a race that needs several
  // preemptions in a row gets several chances per workload. Shrinking keeps the failing one.
  std::vector<StrategyValue> strategies;
};
void showValue(const PoolCase& c, std::ostream& os);

// Generates cases for `impl`: 1-3 workers, queue capacity 1-4, 1-4 submitters of 0-8 jobs each
// (gaps 0-20 ms, work 0-60 ms, some 150-300 ms; submit / try_submit / submit_within mixed per
// job), 0-3 submitter contexts cancelled or timing out at random instants, tenant caps 0-2 and
// priorities 0-2 with and without aging (when impl honours them), expected durations 0-40 ms, and
// 0-2 shutdowns whose instants are drawn mostly at or 1 ms after a planned submit instant (so
// that shutdown starts while submits are in flight), the rest anywhere in 0-150 ms, with
// grace 0-100 ms; no shutdown at all in about one case in eight; 1-4 strategies (case_strategy).
rc::Gen<PoolCase> pool_case(const PoolImplementation& impl);

// Runs `c` against `impl` as a bubble body and throws PropertyViolation (a std::logic_error,
// which fails the bubble run) naming the first broken condition. The conditions:
//   1. every accepted job reports exactly one outcome; a job reported done or failed ran its body
//      exactly once; canceled: ran once and its context was done when it returned; too_late: never
//      ran, had an expected duration and a deadline too close;
//   2. a refused job never runs and reports nothing; refusals are errc::closed, errc::full
//      (try_submit, submit_within), errc::tenant_limit (with a queued cap) or the submitter
//      context's error;
//   3. the queue depth is at most the capacity right after every acceptance, and a tenant never
//      has more than max_running_per_tenant jobs running;
//   4. when every shutdown returned {}, no job was canceled unless its own submitter's context
//      had ended;
//   5. every submit that started at or before the first shutdown returned by that virtual
//      instant, and every submit that started later returned errc::closed (or its context's
//      error) at once;
//   6. the pool's counters agree: completed + canceled + failed + too_late == accepted, each
//      equal to the outcomes reported.
//
// If `coverage` is not null, a run that passes adds the paths it reached to it.
struct PoolCoverage;
std::function<void(Runtime&)> pool_case_body(const PoolImplementation& impl, const PoolCase& c,
                                             PoolCoverage* coverage = nullptr);

// How often passing runs reached each path: refusals by kind, outcomes by kind, submits that were
// waiting when shutdown started, shutdowns that gave up at their deadline, destructors that
// stopped a pool without shutdown. `bubble run pool --verbose` prints it.
struct PoolCoverage {
  std::uint64_t runs = 0;
  std::uint64_t accepted = 0;
  std::uint64_t refused_closed = 0;
  std::uint64_t refused_full = 0;
  std::uint64_t refused_tenant_limit = 0;
  std::uint64_t refused_by_context = 0;
  std::uint64_t done = 0;
  std::uint64_t canceled = 0;
  std::uint64_t failed = 0;
  std::uint64_t too_late = 0;
  std::uint64_t waiting_when_shutdown_started = 0;
  std::uint64_t shutdown_deadline_exceeded = 0;
  std::uint64_t destructor_without_shutdown = 0;
};
void showValue(const PoolCoverage& c, std::ostream& os);

// Thrown by pool_case_body when a condition fails.
class PropertyViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace bubble::scenarios

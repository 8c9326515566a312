#pragma once

#include <ostream>
#include <vector>

#include <rapidcheck.h>

#include <bubble/scenarios/pool_under_test.hpp>
#include <bubble/scenarios/show.hpp>

// Properties of bubble::Pool under bursts of concurrent submits: the workloads that reach the
// pool's lock-free submit path (its inbox, the occupancy counts and the idle count) most, with
// several submitters pushing at once while the workers take, so that the ring of the inbox wraps
// around many times and compare-exchanges on its tail and counts collide.
namespace bubble::scenarios {

// One job of a burst: how it is submitted and how long it works (virtual time).
struct BurstJob {
  SubmitKind kind = SubmitKind::try_submit;  // submit or try_submit
  DurationValue work;
};
void showValue(const BurstJob& j, std::ostream& os);

// A generated burst: 1-3 workers, capacity 2-16 (inbox rings of 2 to 16 slots), an optional
// metrics sink (which makes every submit read the exact queue depth), 2-5 submitters of 1-30 jobs
// each, submitted back to back; 1-3 strategies (case_strategy).
struct BurstCase {
  int workers = 1;
  int capacity = 2;
  bool metrics = false;
  std::vector<std::vector<BurstJob>> submitters;
  std::vector<StrategyValue> strategies;
};
void showValue(const BurstCase& c, std::ostream& os);
rc::Gen<BurstCase> burst_case();

// Checks one burst case under each of its strategies and throws PropertyViolation (failing the
// run) at the first broken condition:
//   1. every accepted job runs exactly once, and a refused job (errc::full) never runs;
//   2. the queue depth a metrics sink is told is never above the capacity;
//   3. no accepted job waits while a worker is idle: once every submitter has returned and the
//      jobs have had the time to run (the sum of their work), every accepted job has ended,
//      without a shutdown to flush them;
//   4. with one worker, each submitter's jobs start in the order it submitted them (one tenant,
//      one priority: first in, first out);
//   5. shutdown then returns {} with every accepted job done, and a submit after it is refused
//      with errc::closed.
void check_burst_case(const BurstCase& c);

// A stalled pool: every worker holds a job that waits for a gate, so that nothing is taken from
// the queue while 2-5 submitters race try_submit (1-12 calls each). Checked under 1-3 strategies:
// exactly min(calls, capacity) are accepted (the capacity is never exceeded, and no slot is lost
// to a race between reservations), and once the gate opens every accepted job runs exactly once.
struct StallCase {
  int workers = 1;
  int capacity = 2;
  std::vector<int> calls;  // try_submits per submitter
  std::vector<StrategyValue> strategies;
};
void showValue(const StallCase& c, std::ostream& os);
rc::Gen<StallCase> stall_case();
void check_stall_case(const StallCase& c);

}  // namespace bubble::scenarios

// Scenario suite "pool": properties of the worker pool over generated workloads, shutdown moments
// and schedules, each run in a bubble (exact virtual time), and a model-based test of the pool's
// admission and shutdown against a pure model.
#include <bubble/scenarios/pool_burst.hpp>
#include <bubble/scenarios/pool_model.hpp>
#include <bubble/scenarios/pool_order.hpp>
#include <bubble/scenarios/pool_properties.hpp>
#include <bubble/scenarios/property.hpp>
#include <bubble/scenarios/suites.hpp>
#include <bubble/testing/property.hpp>

#include <rapidcheck.h>

namespace bubble::scenarios {
namespace {

SuiteResult run_pool_suite(const SuiteOptions& options, std::ostream& log) {
  SuiteResult result;
  const std::string suite = "pool";
  const PoolImplementation impl = real_pool();
  PoolCoverage coverage;
  // Property: whatever the workload (submit, try_submit and submit_within mixed, tenants with
  // caps, priorities and aging, expected durations, submitter contexts cancelled or timing out,
  // jobs that throw, ignore their context or take long), the shutdowns (concurrent, at submit
  // instants or between them, with any grace, or none: the destructor) and the schedule, every
  // accepted job ends exactly once as it should, no refused job runs, no submit outlives the
  // start of shutdown, and the counters agree (pool_case_body lists the conditions).
  check_property(suite, "every accepted job ends exactly once; shutdown keeps its promises",
                 options, result, log, [impl, &coverage] {
                   const PoolCase c = testing::draw(pool_case(impl));
                   for (const StrategyValue& s : c.strategies) {
                     testing::run_property({.strategy = s.value},
                                           pool_case_body(impl, c, &coverage));
                   }
                 });
  if (options.verbose) {
    showValue(coverage, log);
    log << "\n";
  }
  // Property: a sequence of submits, try_submits, submit_withins, context cancellations, time
  // steps and a shutdown leaves the pool exactly where a pure model of it says: every call's
  // result, the queue depth, the busy workers and each job's outcome (pool_model.hpp).
  check_property(suite, "the pool agrees with its model, command by command", options, result, log,
                 [impl] { check_pool_against_model(impl); });
  // Property: whatever the burst of concurrent submits and try_submits (several submitters
  // pushing at once while the workers take, the inbox's ring wrapping around many times), every
  // accepted job runs exactly once, a refused one never; no accepted job waits while a worker is
  // idle; the queue never holds more than its capacity; with one worker each submitter's jobs
  // start in its order; shutdown then closes the pool (pool_burst.hpp).
  check_property(suite, "a burst of concurrent submits: each job once, in order, never idle",
                 options, result, log, [] { check_burst_case(testing::draw(burst_case())); });
  // Property: while no job can be taken (every worker holds a job waiting for a gate), racing
  // try_submits fill the queue to exactly its capacity, never more and no slot lost; once the
  // gate opens, every accepted job runs exactly once.
  check_property(suite, "racing try_submits fill a stalled pool to exactly its capacity", options,
                 result, log, [] { check_stall_case(testing::draw(stall_case())); });
  // Property: one worker starts jobs arriving at generated instants in exactly the order the
  // header's rule gives (effective priority with aging, tenants in turn, FIFO within a tenant).
  check_property(suite, "jobs start in the order of priority, aging and tenant turns", options,
                 result, log, [] { pool_starts_jobs_in_priority_and_tenant_order(); });
  // Property: with submitters competing for the slots, submit_within returns {} within max_wait
  // or full at exactly max_wait, never later (pool_order.hpp).
  check_property(suite, "submit_within never waits past max_wait while others compete", options,
                 result, log, [] { submit_within_never_waits_past_its_bound(); });
  // Property: a shutdown that starts during a burst of submits (jobs in the inbox when it closes)
  // returns {} only once every accepted job has run exactly once; refused jobs never run.
  check_property(suite, "a shutdown racing a burst runs every accepted job first", options, result,
                 log, [] { shutdown_racing_a_burst_runs_every_accepted_job(); });
  return result;
}

}  // namespace

ScenarioSuite pool_suite() {
  return {"pool",
          "accepted jobs end exactly once, refused ones never run, shutdown closes at once; the "
          "pool agrees with a model",
          run_pool_suite};
}

}  // namespace bubble::scenarios

// Scenario suite "primitives": the promises of the framework's primitives that the pool and the
// limiters build on (Semaphore, CondVar, Channel, select, Context) and their misuse checks, over
// generated steps and schedules, each run in a bubble. The properties are in
// primitive_properties.hpp.
#include <bubble/scenarios/primitive_properties.hpp>
#include <bubble/scenarios/property.hpp>
#include <bubble/scenarios/suites.hpp>

namespace bubble::scenarios {
namespace {

SuiteResult run_primitives_suite(const SuiteOptions& options, std::ostream& log) {
  SuiteResult result;
  const std::string suite = "primitives";
  // Property: release(n) wakes exactly the min(n, waiters) longest waiters.
  check_property(suite, "semaphore release(n) hands permits to the n longest waiters", options,
                 result, log, [] { semaphore_hands_permits_in_fifo_order(); });
  // Property: notify_one wakes exactly the longest waiter, notify_all every waiter.
  check_property(suite, "cond var notify_one wakes exactly one waiter, notify_all every one",
                 options, result, log, [] { cond_var_wakes_exactly_whom_it_should(); });
  // Property: receivers of a closed channel get every buffered value, in order, then closed.
  check_property(suite, "a closed channel delivers its buffered values before closed", options,
                 result, log, [] { closed_channel_drains_before_closed(); });
  // Property: select performs exactly one ready case: the first under fifo, each about equally
  // often under random.
  check_property(suite, "select performs one ready case: the first under fifo, any under random",
                 options, result, log, [] { select_chooses_among_ready_cases(); });
  // Property: a context's deadline and end are the earliest of its own and its ancestors'.
  check_property(suite, "contexts end at the earliest deadline or cancellation of their ancestry",
                 options, result, log, [] { contexts_inherit_deadlines_and_cancellation(); });
  // Property: every checked misuse throws the promised exception naming its value, changing
  // nothing.
  check_property(suite, "every checked misuse throws, names its value and changes nothing", options,
                 result, log, [] { misuse_is_reported_and_changes_nothing(); });
  return result;
}

}  // namespace

ScenarioSuite primitives_suite() {
  return {"primitives",
          "Semaphore and CondVar wake-ups, closed channels drain, select's choice, Context "
          "deadlines and cancellation, misuse checks",
          run_primitives_suite};
}

}  // namespace bubble::scenarios

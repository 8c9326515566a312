// Scenario suite "exhibits": the known-bad exhibits under the properties that must catch them.
// Every property here fails, with a shrunk counterexample; the suite is not part of the default
// run. It is what `bubble run exhibits` shows a failure with, and what the failure-file and
// `bubble replay` tests replay.
#include <bubble/scenarios/exhibit_pools.hpp>
#include <bubble/scenarios/pool_properties.hpp>
#include <bubble/scenarios/property.hpp>
#include <bubble/scenarios/suites.hpp>
#include <bubble/scenarios/timing_exhibits.hpp>
#include <bubble/testing/property.hpp>

#include <rapidcheck.h>

namespace bubble::scenarios {
namespace {

SuiteResult run_exhibits_suite(const SuiteOptions& options, std::ostream& log) {
  SuiteResult result;
  const std::string suite = "exhibits";
  // Property (fails): the pool suite's workload property, on a pool whose shutdown drops the
  // queued jobs instead of letting the workers drain them.
  const PoolImplementation closes = exhibit_pool(PoolFlaw::closes_before_draining);
  check_property(suite, "a pool that closes before draining loses accepted jobs", options, result,
                 log, [closes] {
                   const PoolCase c = testing::draw(pool_case(closes));
                   for (const StrategyValue& s : c.strategies) {
                     testing::run_property({.strategy = s.value}, pool_case_body(closes, c));
                   }
                 });
  // Property (fails): consumers that call cv.wait(lk) without a predicate loop all see the
  // producer's broadcast; one that reaches the wait after the broadcast misses it.
  check_property(suite, "a CondVar wait without a predicate loop misses its wake-up", options,
                 result, log, [] {
                   const RaceCase c = testing::draw(race_case());
                   testing::run_property({.strategy = c.strategy.value},
                                         lost_wakeup_body(false, c));
                 });
  // Property (fails): buyers that check for a ticket, then take it, without a lock, never sell
  // more tickets than there are.
  check_property(suite, "an unlocked check-then-act oversells", options, result, log, [] {
    const RaceCase c = testing::draw(race_case());
    testing::run_property({.strategy = c.strategy.value}, check_then_act_body(false, c));
  });
  return result;
}

}  // namespace

ScenarioSuite exhibits_suite() {
  return {"exhibits",
          "known-bad exhibits (every property fails; not in the default run): a pool that closes "
          "before draining, a lost wake-up, an unlocked check-then-act",
          run_exhibits_suite, false};
}

}  // namespace bubble::scenarios

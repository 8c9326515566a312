#include <bubble/scenarios/registry.hpp>
#include <bubble/scenarios/suites.hpp>

namespace bubble::scenarios {

const std::vector<ScenarioSuite>& all_suites() {
  static const std::vector<ScenarioSuite> suites = {limiter_suite(),    pool_suite(),
                                                    primitives_suite(), timing_bugs_suite(),
                                                    exhibits_suite(),   proofs_suite()};
  return suites;
}

}  // namespace bubble::scenarios

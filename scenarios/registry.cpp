#include <bubble/scenarios/registry.hpp>

namespace bubble::scenarios {

const std::vector<ScenarioSuite>& all_suites() {
  static const std::vector<ScenarioSuite> suites = {};
  return suites;
}

}  // namespace bubble::scenarios

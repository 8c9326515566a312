#pragma once

#include <bubble/scenarios/registry.hpp>

namespace bubble::scenarios {

// The suites, one per scenarios/<name>_suite.cpp; all_suites() lists them.
ScenarioSuite limiter_suite();
ScenarioSuite pool_suite();
ScenarioSuite timing_bugs_suite();

}  // namespace bubble::scenarios

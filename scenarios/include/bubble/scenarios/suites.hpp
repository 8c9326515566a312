#pragma once

#include <bubble/scenarios/registry.hpp>

namespace bubble::scenarios {

// The suites, one per scenarios/<name>_suite.cpp; all_suites() lists them.
ScenarioSuite limiter_suite();
ScenarioSuite pool_suite();
ScenarioSuite primitives_suite();
ScenarioSuite timing_bugs_suite();
// The known-bad exhibits under the properties that must catch them: every property fails. Not
// in the default run; `bubble run exhibits` runs it (to see a failure, its file and its replay).
ScenarioSuite exhibits_suite();
// The claims proven exhaustively within a preemption bound on small configurations (proof.hpp).
// Not in the default run; `bubble run proofs` or `bubble run --exhaustive K` runs it.
ScenarioSuite proofs_suite();

}  // namespace bubble::scenarios

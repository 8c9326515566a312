#pragma once

#include <bubble/scenarios/registry.hpp>

#include <rapidcheck.h>

#include <chrono>
#include <ostream>
#include <string>
#include <utility>

namespace bubble::scenarios {

// Runs one RapidCheck property `testable` (a callable whose arguments RapidCheck generates and
// whose RC_ASSERTs state the property) with the cases and seed of `options`, prints RapidCheck's
// report of a failure (or of every property when options.verbose) to `log`, and counts the
// outcome in `result` (properties_passed/failed, properties, failed, failures); a passing
// property's line shows its cases and wall time.
//
// A failure's PropertyFailure holds the shrunk case's RapidCheck reproduce string, the strategy
// of its failing bubble run (recorded through bubble::testing::FailedRunRecorder, so only runs of
// testing::run_property count) and its message; with options.trace, the failing run's trace. Its
// entry in result.failures names the property and ends with the commands that reproduce the
// whole case: `bubble run <suite> --seed <seed>` (plus `--cases N` when not the default), or
// RapidCheck's reproduce string, RC_PARAMS="reproduce=...".
//
// With options.replay, a property of another name is skipped, and the named one runs the single
// case of the reproduce string (no shrinking); a reproduce string that has no case for this
// property throws std::invalid_argument naming it.
template <class Testable>
void check_property(const std::string& suite, const std::string& property,
                    const SuiteOptions& options, SuiteResult& result, std::ostream& log,
                    Testable&& testable);

// The seed a suite run uses: options.seed, or a fresh one when it is 0.
std::uint64_t effective_seed(const SuiteOptions& options);

namespace detail {
// Checks `property` (the testable as a RapidCheck property) as check_property describes and
// records the outcome in `result`.
void check_rapidcheck_property(const std::string& suite, const std::string& property,
                               const rc::detail::Property& checked, const SuiteOptions& options,
                               SuiteResult& result, std::ostream& log);
}  // namespace detail

template <class Testable>
void check_property(const std::string& suite, const std::string& property,
                    const SuiteOptions& options, SuiteResult& result, std::ostream& log,
                    Testable&& testable) {
  if (options.replay && options.replay->property != property) return;
  detail::check_rapidcheck_property(suite, property,
                                    rc::detail::toProperty(std::forward<Testable>(testable)),
                                    options, result, log);
}

}  // namespace bubble::scenarios

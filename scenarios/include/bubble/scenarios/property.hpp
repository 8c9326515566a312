#pragma once

#include <bubble/scenarios/registry.hpp>

#include <bubble/testing/check.hpp>

#include <chrono>
#include <ostream>
#include <string>
#include <utility>

namespace bubble::scenarios {

// Checks one property `testable` (a callable taking no arguments that draws its inputs with
// `*gen` or bubble::testing::draw and states what must hold with BUBBLE_ASSERT/BUBBLE_FAIL) with
// bubble::testing::check, on the cases and seed of `options`; prints the report of a failure (or
// of every property when options.verbose) to `log`, and counts the outcome in `result`
// (properties_passed/failed, properties, failed, failures); a passing property's line shows its
// cases and wall time.
//
// A failure's PropertyFailure holds the shrunk case's reproduce string (CheckResult::reproduce),
// the strategy of its failing bubble run (recorded through bubble::testing::FailedRunRecorder, so
// only runs of testing::run_property count) and its message; with options.trace, the failing
// run's trace. Its entry in result.failures names the property and ends with the commands that
// reproduce the whole case: `bubble run <suite> --seed <seed>` (plus `--cases N` when not the
// default), or `bubble replay` on its failure file.
//
// With options.replay, a property of another name is skipped, and the named one runs the single
// case of the reproduce string (no shrinking); a reproduce string that names no case throws
// std::invalid_argument naming it.
template <class Testable>
void check_property(const std::string& suite, const std::string& property,
                    const SuiteOptions& options, SuiteResult& result, std::ostream& log,
                    Testable&& testable);

// The seed a suite run uses: options.seed, or a fresh one when it is 0.
std::uint64_t effective_seed(const SuiteOptions& options);

namespace detail {
// The parameters check_property checks `property` with (cases, seed, replay, trace, progress
// shown on `log`).
testing::CheckParams check_params(const std::string& property, const SuiteOptions& options,
                                  std::ostream& log);
// Records the outcome of checking `property` in `result` and reports it on `log`, as
// check_property describes.
void record_outcome(const std::string& suite, const std::string& property,
                    const testing::CheckResult& checked, double seconds,
                    const SuiteOptions& options, SuiteResult& result, std::ostream& log);
}  // namespace detail

template <class Testable>
void check_property(const std::string& suite, const std::string& property,
                    const SuiteOptions& options, SuiteResult& result, std::ostream& log,
                    Testable&& testable) {
  if (options.replay && options.replay->property != property) return;
  const testing::CheckParams params = detail::check_params(property, options, log);
  // Wall time, for the report line only (how long the property took to check, not a test).
  const auto started = std::chrono::steady_clock::now();
  const testing::CheckResult checked = testing::check(std::forward<Testable>(testable), params);
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - started;
  detail::record_outcome(suite, property, checked, seconds.count(), options, result, log);
}

}  // namespace bubble::scenarios

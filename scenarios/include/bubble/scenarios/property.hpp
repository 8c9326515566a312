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
// outcome in `result`; a passing property's line shows its cases and wall time. A failure's entry
// in result.failures names the property and ends with the commands that reproduce the whole case:
// `bubble run <suite> --seed <seed>` (plus `--cases N` when not the default), or RapidCheck's
// reproduce string, RC_PARAMS="reproduce=...", which RapidCheck prints when the program ends.
template <class Testable>
void check_property(const std::string& suite, const std::string& property,
                    const SuiteOptions& options, SuiteResult& result, std::ostream& log,
                    Testable&& testable);

// The seed a suite run uses: options.seed, or a fresh one when it is 0.
std::uint64_t effective_seed(const SuiteOptions& options);

namespace detail {
// Records a finished property: prints the outcome and updates `result`.
void record_property(const std::string& suite, const std::string& property, std::uint64_t seed,
                     const rc::detail::TestResult& outcome, double seconds,
                     const SuiteOptions& options, SuiteResult& result, std::ostream& log);
}  // namespace detail

template <class Testable>
void check_property(const std::string& suite, const std::string& property,
                    const SuiteOptions& options, SuiteResult& result, std::ostream& log,
                    Testable&& testable) {
  rc::detail::TestMetadata metadata;
  metadata.id = suite + "/" + property;
  metadata.description = property;
  rc::detail::TestParams params;
  params.seed = effective_seed(options);
  params.maxSuccess = options.cases;
  // Wall time, for the report line only (how long the property took to check, not a test).
  const auto started = std::chrono::steady_clock::now();
  const rc::detail::TestResult outcome =
      rc::detail::checkTestable(std::forward<Testable>(testable), metadata, params);
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - started;
  detail::record_property(suite, property, params.seed, outcome, seconds.count(), options, result,
                          log);
}

}  // namespace bubble::scenarios

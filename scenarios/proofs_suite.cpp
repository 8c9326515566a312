// Scenario suite "proofs": the two central claims proven by exhaustive search within a preemption
// bound on every workload of a small configuration (bubble::ScheduleTree through prove()), rather
// than checked on sampled workloads and schedules as the other suites do.
#include <bubble/scenarios/proofs.hpp>
#include <bubble/scenarios/suites.hpp>

#include <fmt/core.h>

#include <chrono>
#include <cstdint>
#include <ostream>

namespace bubble::scenarios {
namespace {

SuiteResult run_proofs_suite(const SuiteOptions& options, std::ostream& log) {
  SuiteResult result;
  for (const Proof& proof : {rate_limiter_proof(), shutdown_proof(real_pool())}) {
    if (options.replay) continue;  // Proofs have no generated case to replay.
    const std::uint32_t bound = options.exhaustive.value_or(proof.default_bound);
    // Wall time, for the report line only.
    const auto started = std::chrono::steady_clock::now();
    const ProofOutcome outcome = prove(
        proof, bound, options.shard,
        [&](std::uint64_t schedules) {
          if (options.progress) {
            log << "\r  ..   " << proof.name << " (" << schedules << " schedules)" << std::flush;
          }
        },
        options.reduction);
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - started;
    if (options.progress) log << "\r\033[K";
    PropertyOutcome property{proof.name, !outcome.failed, static_cast<int>(outcome.workloads),
                             seconds.count()};
    property.certificate = outcome.certificate;
    result.properties.push_back(property);
    if (!outcome.failed) {
      ++result.properties_passed;
      log << fmt::format("  ok   {} ({} workloads: {}; {:.2f} s)\n       {}\n", proof.name,
                         outcome.workloads, proof.configuration, seconds.count(),
                         outcome.certificate);
      continue;
    }
    ++result.properties_failed;
    log << fmt::format(
        "  FAIL {}\n  workload #{}: {}\n  schedule: {} (run {} of the search, at most {} "
        "preemptions)\n{}\n",
        proof.name, outcome.failed_workload, proof.describe(outcome.failed_workload),
        outcome.failed_strategy, outcome.schedules, bound, outcome.message);
    result.failures.push_back(fmt::format(
        "proofs/{}: workload #{} fails under {}; the same search finds it again: `bubble run "
        "proofs --exhaustive {}`",
        proof.name, outcome.failed_workload, outcome.failed_strategy, bound));
  }
  return result;
}

}  // namespace

ScenarioSuite proofs_suite() {
  ScenarioSuite suite{"proofs",
                      "exhaustive within a preemption bound: the rate limiter's at most n per "
                      "window, shutdown losing no job (`bubble run --exhaustive K`)",
                      run_proofs_suite};
  suite.in_default_run = false;
  return suite;
}

}  // namespace bubble::scenarios

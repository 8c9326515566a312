#include <bubble/scenarios/property.hpp>
#include <bubble/testing/check.hpp>
#include <bubble/testing/property.hpp>

#include <cstdio>
#include <optional>
#include <random>
#include <stdexcept>

namespace bubble::scenarios {

std::uint64_t effective_seed(const SuiteOptions& options) {
  if (options.seed != 0) return options.seed;
  static const std::uint64_t fresh = [] {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32U) | device() | 1U;
  }();
  return fresh;
}

namespace detail {

testing::CheckParams check_params(const std::string& property, const SuiteOptions& options,
                                  std::ostream& log) {
  testing::CheckParams params;
  params.seed = effective_seed(options);
  params.cases = options.cases;
  params.trace = options.trace;
  if (options.replay) params.reproduce = options.replay->reproduce;
  if (options.progress) {
    // A progress line every 10 cases or shrinks, rewritten in place.
    params.progress = [&property, &log, shown = 0](int cases, int shrinks) mutable {
      if ((cases + shrinks) / 10 == shown) return;
      shown = (cases + shrinks) / 10;
      log << "\r  ..   " << property << " (" << cases << " cases";
      if (shrinks > 0) log << ", " << shrinks << " shrinks";
      log << ")" << std::flush;
    };
  }
  return params;
}

void record_outcome(const std::string& suite, const std::string& property,
                    const testing::CheckResult& checked, double seconds,
                    const SuiteOptions& options, SuiteResult& result, std::ostream& log) {
  if (options.progress) log << "\r\033[K";
  if (checked.passed()) {
    ++result.properties_passed;
    result.properties.push_back({property, true, checked.cases_passed, seconds});
    char wall[32];
    std::snprintf(wall, sizeof wall, "%.2f s", seconds);
    log << "  ok   " << property << " (" << checked.cases_passed << " cases, " << wall << ")\n";
    if (options.verbose) log << checked.report() << "\n\n";
    return;
  }
  ++result.properties_failed;
  const std::string report = checked.report();
  log << "  FAIL " << property << "\n" << report << "\n";

  PropertyFailure failure;
  failure.suite = suite;
  failure.property = property;
  failure.seed = effective_seed(options);
  failure.cases = options.cases;
  if (checked.verdict == testing::CheckResult::Verdict::failed) {
    failure.message = checked.case_message();
    failure.reproduce = checked.reproduce;
    result.properties.push_back({property, false, checked.cases_passed, seconds});
  } else {
    // Too many discarded cases.
    failure.message = report;
    result.properties.push_back({property, false, 0, seconds});
  }
  if (const std::optional<testing::FailedRun>& run = checked.run) {
    failure.schedule = run->strategy.to_string();
    if (run->traced) {
      failure.trace_text = run->trace_text;
      failure.trace_chrome = run->trace_chrome;
    } else if (options.trace) {
      failure.trace_note =
          "the failing bubble run ended with an exception that is not a std::exception (a "
          "RapidCheck assertion?), which carries no trace";
    }
  } else if (options.trace) {
    failure.trace_note = "the case failed outside any bubble run: there is no trace";
  }
  result.failed.push_back(failure);
  // The same seed and case count generate the same cases (each property starts from the seed), so
  // this command reproduces the whole failing case: its generated values and its bubble schedule.
  std::string command = "bubble run " + suite + " --seed " + std::to_string(failure.seed);
  if (options.cases != SuiteOptions{}.cases) command += " --cases " + std::to_string(options.cases);
  result.failures.push_back(suite + "/" + property + ": reproduce the whole case with `" + command +
                            "`, or with `bubble replay` on its failure file (its reproduce " +
                            "string replays the shrunk counterexample at once)");
}

}  // namespace detail
}  // namespace bubble::scenarios

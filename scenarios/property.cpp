#include <bubble/scenarios/property.hpp>

#include <cstdio>
#include <random>
#include <sstream>

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

void record_property(const std::string& suite, const std::string& property, std::uint64_t seed,
                     const rc::detail::TestResult& outcome, double seconds,
                     const SuiteOptions& options, SuiteResult& result, std::ostream& log) {
  rc::detail::SuccessResult success;
  if (outcome.match(success)) {
    ++result.properties_passed;
    char wall[32];
    std::snprintf(wall, sizeof wall, "%.2f s", seconds);
    log << "  ok   " << property << " (" << success.numSuccess << " cases, " << wall << ")\n";
    if (options.verbose) {
      rc::detail::printResultMessage(outcome, log);
      log << "\n";
    }
    return;
  }
  ++result.properties_failed;
  std::ostringstream report;
  rc::detail::printResultMessage(outcome, report);
  log << "  FAIL " << property << "\n" << report.str() << "\n";
  // The same seed and case count generate the same cases (each property starts from the seed), so
  // this command reproduces the whole failing case: its generated values and its bubble schedule.
  std::string command = "bubble run " + suite + " --seed " + std::to_string(seed);
  if (options.cases != SuiteOptions{}.cases) command += " --cases " + std::to_string(options.cases);
  result.failures.push_back(suite + "/" + property + ": reproduce the whole case with `" + command +
                            "`, or with RC_PARAMS=\"reproduce=...\" " + "bubble run " + suite +
                            " (RapidCheck prints that reproduce string when bubble exits; it " +
                            "replays the shrunk counterexample at once)");
}

}  // namespace detail
}  // namespace bubble::scenarios

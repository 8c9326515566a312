#include <bubble/scenarios/property.hpp>

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
                     const rc::detail::TestResult& outcome, const SuiteOptions& options,
                     SuiteResult& result, std::ostream& log) {
  rc::detail::SuccessResult success;
  if (outcome.match(success)) {
    ++result.properties_passed;
    log << "  ok   " << property << " (" << success.numSuccess << " cases)\n";
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
  result.failures.push_back(suite + "/" + property + ": reproduce with `bubble run " + suite +
                            " --seed " + std::to_string(seed) + "`");
}

}  // namespace detail
}  // namespace bubble::scenarios

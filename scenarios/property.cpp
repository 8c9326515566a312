#include <bubble/scenarios/property.hpp>
#include <bubble/testing/property.hpp>

#include <rapidcheck/detail/TestListener.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

// RapidCheck's own encoding of RC_PARAMS="reproduce=..." (librapidcheck, Configuration.cpp); not
// declared in its installed headers.
namespace rc::detail {
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& reproduceMap);
std::unordered_map<std::string, Reproduce> stringToReproduceMap(const std::string& str);
}  // namespace rc::detail

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
namespace {

// Follows the cases and shrinks of one check: keeps the failed bubble run of the case that
// failed last (the first failing case, then each accepted shrink: at the end, the shrunk case),
// and shows progress.
class CaseListener : public rc::detail::TestListener {
 public:
  CaseListener(testing::FailedRunRecorder& recorder, const std::string& property, bool progress,
               std::ostream& log)
      : recorder_(recorder), property_(property), progress_(progress), log_(log) {}

  void onTestCaseFinished(const rc::detail::CaseDescription& description) override {
    std::optional<testing::FailedRun> run = recorder_.take();
    if (description.result.type == rc::detail::CaseResult::Type::Failure) failing_ = std::move(run);
    ++cases_;
    show();
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    std::optional<testing::FailedRun> run = recorder_.take();
    if (accepted) failing_ = std::move(run);
    ++shrinks_;
    show();
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}

  // The failed run of the last failing case (a replayed case is not reported to the listener:
  // its run is the last one recorded).
  std::optional<testing::FailedRun> failing_run() {
    if (std::optional<testing::FailedRun> rest = recorder_.take()) failing_ = std::move(rest);
    return std::move(failing_);
  }

 private:
  void show() {
    if (!progress_ || (cases_ + shrinks_) % 10 != 0) return;
    log_ << "\r  ..   " << property_ << " (" << cases_ << " cases";
    if (shrinks_ > 0) log_ << ", " << shrinks_ << " shrinks";
    log_ << ")" << std::flush;
  }

  testing::FailedRunRecorder& recorder_;
  const std::string& property_;
  bool progress_;
  std::ostream& log_;
  std::optional<testing::FailedRun> failing_;
  int cases_ = 0;
  int shrinks_ = 0;
};

// The failure's counterexample and description: the part of RapidCheck's report that depends
// only on the case (the "Falsifiable after N tests" header counts what this process tried).
std::string case_message(const rc::detail::FailureResult& failure) {
  std::string message;
  for (const auto& [type, value] : failure.counterExample) message += type + ":\n" + value + "\n\n";
  return message + failure.description;
}

}  // namespace

void check_rapidcheck_property(const std::string& suite, const std::string& property,
                               const rc::detail::Property& checked, const SuiteOptions& options,
                               SuiteResult& result, std::ostream& log) {
  rc::detail::TestMetadata metadata;
  metadata.id = suite + "/" + property;
  metadata.description = property;
  rc::detail::TestParams params;
  params.seed = effective_seed(options);
  params.maxSuccess = options.cases;
  // Without a replay, RapidCheck's own RC_PARAMS="reproduce=..." still replays a case.
  std::unordered_map<std::string, rc::detail::Reproduce> reproduce =
      rc::detail::configuration().reproduce;
  if (options.replay) {
    try {
      reproduce = rc::detail::stringToReproduceMap(options.replay->reproduce);
    } catch (const std::exception&) {
      reproduce.clear();
    }
    if (reproduce.count(metadata.id) == 0) {
      throw std::invalid_argument("reproduce string \"" + options.replay->reproduce +
                                  "\": has no case of " + metadata.id);
    }
  }
  testing::FailedRunRecorder recorder(options.trace);
  CaseListener listener(recorder, property, options.progress, log);
  // Wall time, for the report line only (how long the property took to check, not a test).
  const auto started = std::chrono::steady_clock::now();
  const rc::detail::TestResult outcome =
      rc::detail::checkProperty(checked, metadata, params, listener, reproduce);
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - started;
  if (options.progress) log << "\r\033[K";

  rc::detail::SuccessResult success;
  if (outcome.match(success)) {
    ++result.properties_passed;
    result.properties.push_back({property, true, success.numSuccess, seconds.count()});
    char wall[32];
    std::snprintf(wall, sizeof wall, "%.2f s", seconds.count());
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

  PropertyFailure failure;
  failure.suite = suite;
  failure.property = property;
  failure.seed = params.seed;
  failure.cases = options.cases;
  rc::detail::FailureResult failed;
  if (outcome.match(failed)) {
    failure.message = case_message(failed);
    failure.reproduce = rc::detail::reproduceMapToString({{metadata.id, failed.reproduce}});
    result.properties.push_back({property, false, failed.numSuccess, seconds.count()});
  } else {
    // RapidCheck gave up (too many discarded cases) or could not run the property.
    failure.message = report.str();
    result.properties.push_back({property, false, 0, seconds.count()});
  }
  if (std::optional<testing::FailedRun> run = listener.failing_run()) {
    failure.schedule = run->strategy.to_string();
    if (run->traced) {
      failure.trace_text = std::move(run->trace_text);
      failure.trace_chrome = std::move(run->trace_chrome);
    } else if (options.trace) {
      failure.trace_note =
          "the failing bubble run ended with a RapidCheck assertion, which carries no trace";
    }
  } else if (options.trace) {
    failure.trace_note = "the case failed outside any bubble run: there is no trace";
  }
  result.failed.push_back(failure);
  // The same seed and case count generate the same cases (each property starts from the seed), so
  // this command reproduces the whole failing case: its generated values and its bubble schedule.
  std::string command = "bubble run " + suite + " --seed " + std::to_string(params.seed);
  if (options.cases != SuiteOptions{}.cases) command += " --cases " + std::to_string(options.cases);
  result.failures.push_back(suite + "/" + property + ": reproduce the whole case with `" + command +
                            "`, or with `bubble replay` on its failure file, or with " +
                            "RC_PARAMS=\"reproduce=...\" " + "bubble run " + suite +
                            " (the reproduce string is in the failure file; it replays the " +
                            "shrunk counterexample at once)");
}

}  // namespace detail
}  // namespace bubble::scenarios

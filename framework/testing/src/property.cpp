#include <bubble/testing/property.hpp>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <optional>
#include <string>
#include <utility>

namespace bubble::testing {
namespace {

// Inside a RapidCheck case a bubble's "replay: BUBBLE_STRATEGY=..." line is not a command that
// reproduces anything: the environment variable does not regenerate the case's inputs. The line
// that replaces it says what the strategy replays.
std::string case_schedule_line(const Strategy& strategy) {
  return kCaseScheduleLabel + strategy.to_string();
}

std::string replay_line_for(const Options& options) {
  return case_schedule_line(options.replay ? options.replay->to_strategy() : options.strategy);
}

// A RunFailure's message with its last line, the replay line, replaced by case_schedule_line.
std::string case_failure_message(const RunFailure& e) {
  std::string message = e.what();
  const std::size_t at = message.rfind("\nreplay: BUBBLE_STRATEGY=");
  if (at != std::string::npos) message.erase(at);
  Strategy strategy = e.strategy();
  if (strategy.kind() == Strategy::Kind::choices) {
    strategy = e.schedule().to_strategy();
  }
  return message + "\n" + case_schedule_line(strategy);
}

[[noreturn]] void fail_case(std::string message) {
  throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Failure, std::move(message));
}

}  // namespace

RunResult run_property(const Options& options, std::function<void(Runtime&)> root) {
  ::testing::TestPartResultArray parts;
  std::optional<RunResult> result;
  std::optional<std::string> failure;
  {
    // Only inside a GoogleTest test: elsewhere (rc::check from main) there is nothing to capture.
    std::optional<::testing::ScopedFakeTestPartResultReporter> capture;
    if (::testing::UnitTest::GetInstance()->current_test_info() != nullptr) {
      capture.emplace(::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD,
                      &parts);
    }
    try {
      result = bubble::run(options, std::move(root));
    } catch (const RunFailure& e) {
      failure = case_failure_message(e);
    } catch (const rc::detail::CaseResult& r) {
      if (r.type != rc::detail::CaseResult::Type::Failure) throw;
      failure = r.description + "\n" + replay_line_for(options);
    }
  }
  std::string gtest_failures;
  for (int i = 0; i < parts.size(); ++i) {
    const ::testing::TestPartResult& r = parts.GetTestPartResult(i);
    if (!r.failed()) continue;
    gtest_failures += std::string(r.file_name() != nullptr ? r.file_name() : "unknown file") + ":" +
                      std::to_string(r.line_number()) + ": " + r.message() + "\n";
  }
  if (failure) {
    if (!gtest_failures.empty()) *failure = gtest_failures + *failure;
    fail_case(std::move(*failure));
  }
  if (!gtest_failures.empty()) {
    fail_case("GoogleTest assertions failed in the bubble:\n" + gtest_failures +
              replay_line_for(options));
  }
  return std::move(*result);
}

RunResult run_with_generated_schedule(std::function<void(Runtime&)> root, Options options,
                                      gen::ScheduleShape shape) {
  const Schedule schedule = *gen::schedule(shape);
  options.replay.reset();
  options.strategy = schedule.to_strategy();
  return run_property(options, std::move(root));
}

}  // namespace bubble::testing

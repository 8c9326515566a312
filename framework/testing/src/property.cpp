#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <optional>
#include <string>
#include <utility>

#include "captured_failures.hpp"

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

// The strategy that replays a failed run inside its case: the recorded picks for a choices
// strategy (they end at the failure), the seeded strategy itself otherwise.
Strategy case_strategy(const RunFailure& e) {
  return e.strategy().kind() == Strategy::Kind::choices ? e.schedule().to_strategy() : e.strategy();
}

// A RunFailure's message with its last line, the replay line, replaced by case_schedule_line.
std::string case_failure_message(const RunFailure& e) {
  std::string message = e.what();
  const std::size_t at = message.rfind("\nreplay: ");
  if (at != std::string::npos) message.erase(at);
  return message + "\n" + case_schedule_line(case_strategy(e));
}

// Fails the case with a CaseFailure: a std::exception, so that RapidCheck's runners and
// bubble::testing::check both report it with its message.
[[noreturn]] void fail_run_case(const std::string& message) {
  throw CaseFailure(message);
}

thread_local FailedRunRecorder* innermost_recorder = nullptr;

}  // namespace

FailedRunRecorder::FailedRunRecorder(bool trace) : trace_(trace), outer_(innermost_recorder) {
  innermost_recorder = this;
}

FailedRunRecorder::~FailedRunRecorder() {
  innermost_recorder = outer_;
}

std::optional<FailedRun> FailedRunRecorder::take() {
  std::optional<FailedRun> out = std::move(last_);
  last_.reset();
  return out;
}

FailedRunRecorder* FailedRunRecorder::current() noexcept {
  return innermost_recorder;
}

RunResult run_property(const Options& given, std::function<void(Runtime&)> root) {
  FailedRunRecorder* recorder = FailedRunRecorder::current();
  Options options = given;
  if (recorder != nullptr && recorder->traces()) options.trace = true;
  // Name the run explicitly (the engine's default is the same "bubble"), so that a case's
  // message never depends on how many bubbles the process ran before.
  if (options.name.empty()) options.name = "bubble";
  ::testing::TestPartResultArray parts;
  std::optional<RunResult> result;
  std::optional<std::string> failure;
  {
    // Only inside a GoogleTest test: elsewhere (rc::check from main) there is nothing to capture.
    std::optional<detail::CapturedFailures> capture;
    if (::testing::UnitTest::GetInstance()->current_test_info() != nullptr) {
      capture.emplace(&parts);
    }
    try {
      result = bubble::run(options, std::move(root));
    } catch (const RunFailure& e) {
      failure = case_failure_message(e);
      if (recorder != nullptr) {
        FailedRun run{case_strategy(e), options.trace, {}, {}};
        if (options.trace) {
          run.trace_text = e.trace().text();
          run.trace_chrome = e.trace().chrome_json();
        }
        recorder->record(std::move(run));
      }
    } catch (...) {
      // Not a std::exception (those escape a bubble thread as a RunFailure): RapidCheck's own
      // RC_ASSERT, RC_FAIL, RC_PRE or RC_SUCCEED, whose type RapidCheck does not publish. It
      // goes on unchanged, for RapidCheck to read; a failure among them failed this run.
      if (recorder != nullptr) {
        recorder->record(
            {options.replay ? options.replay->to_strategy() : options.strategy, false, {}, {}});
      }
      throw;
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
    fail_run_case(*failure);
  }
  if (!gtest_failures.empty()) {
    fail_run_case("GoogleTest assertions failed in the bubble:\n" + gtest_failures +
                  replay_line_for(options));
  }
  return std::move(*result);
}

RunResult run_with_generated_schedule(std::function<void(Runtime&)> root, Options options,
                                      gen::ScheduleShape shape) {
  const Schedule schedule = draw(gen::schedule(shape));
  options.replay.reset();
  options.strategy = schedule.to_strategy();
  return run_property(options, std::move(root));
}

}  // namespace bubble::testing

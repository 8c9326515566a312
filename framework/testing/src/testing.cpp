#include <bubble/testing.hpp>

#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

namespace bubble::testing {
namespace {

// Prints each distinct note once per process.
void print_notes(const TestPlan& plan) {
  static std::mutex mutex;
  static std::set<std::string> printed;
  const std::lock_guard<std::mutex> lock(mutex);
  for (const std::string& note : plan.notes()) {
    if (printed.insert(note).second) std::cout << note << "\n" << std::flush;
  }
}

}  // namespace

ExploreOutcome run_test(const std::function<void(Runtime&)>& body, const EnvLookup& env) {
  return run_test(body, Options{}, env);
}

ExploreOutcome run_test(const std::function<void(Runtime&)>& body, const Options& run_options,
                        const EnvLookup& env) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const char* file = info != nullptr ? info->file() : nullptr;
  const int line = info != nullptr ? info->line() : -1;
  TestPlan plan;
  try {
    plan = TestPlan::from_environment(env);
  } catch (const std::invalid_argument& e) {
    ADD_FAILURE_AT(file, line) << e.what();
    return {};
  }
  print_notes(plan);
  if (plan.size() == 0) {
    GTEST_MESSAGE_AT_(file, line, "", ::testing::TestPartResult::kSkip)
        << "bubble: schedule shard " << plan.shard().index << "/" << plan.shard().total
        << " has none of the " << plan.schedules() << " schedules to explore";
    return {};
  }
  ExploreOptions options;
  options.options = run_options;
  options.replay_command = current_test_command();
  options.report_file = file;
  options.report_line = line;
  options.trace_path = plan.trace_path();
  options.checkpoint_path = plan.checkpoint_path();
  if (info != nullptr) {
    options.checkpoint_key = std::string(info->test_suite_name()) + "." + info->name();
  }
  ExploreOutcome outcome = explore(plan, body, options);
  const std::optional<std::string> failure_file = env("BUBBLE_FAILURE_FILE");
  if (outcome.failed && failure_file && !failure_file->empty() && info != nullptr) {
    const std::string test = std::string(info->test_suite_name()) + "." + info->name();
    std::ofstream out(*failure_file, std::ios::binary | std::ios::trunc);
    out << failure_file_json(test, outcome);
    out.close();
    if (out) {
      std::cout << "bubble: failure file written to " << *failure_file << "\n" << std::flush;
    } else {
      ADD_FAILURE_AT(file, line) << "bubble: BUBBLE_FAILURE_FILE=" << *failure_file
                                 << ": cannot write the file";
    }
  }
  if (!outcome.certificate.empty()) {
    std::cout << outcome.certificate << "\n" << std::flush;
  } else if (plan.exploring() && !outcome.failed && !plan.exhaustive_bound()) {
    std::cout << "bubble: explored " << plan.describe() << "\n" << std::flush;
  }
  return outcome;
}

}  // namespace bubble::testing

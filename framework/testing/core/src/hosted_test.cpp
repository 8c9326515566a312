#include <bubble/testing/hosted_test.hpp>

#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace bubble::testing {

void print_notes(const std::vector<std::string>& notes) {
  static std::mutex mutex;
  static std::set<std::string> printed;
  const std::lock_guard<std::mutex> lock(mutex);
  for (const std::string& note : notes) {
    if (printed.insert(note).second) std::cout << note << "\n" << std::flush;
  }
}

ExploreOutcome run_hosted_test(TestHost& host, const std::function<void(Runtime&)>& body,
                               const Options& run_options, const EnvLookup& env) {
  const char* file = host.test_file();
  const int line = host.test_line();
  TestPlan plan;
  try {
    plan = TestPlan::from_environment(env);
  } catch (const std::invalid_argument& e) {
    host.report_failure(file, line, e.what());
    return {};
  }
  print_notes(plan.notes());
  if (plan.size() == 0) {
    host.report_skip(file, line,
                     "bubble: schedule shard " + std::to_string(plan.shard().index) + "/" +
                         std::to_string(plan.shard().total) + " has none of the " +
                         std::to_string(plan.schedules()) + " schedules to explore");
    return {};
  }
  const std::optional<std::string> key = host.test_key();
  ExploreOptions options;
  options.options = run_options;
  options.replay_command = host.replay_command();
  options.report_file = file;
  options.report_line = line;
  options.trace_path = plan.trace_path();
  options.checkpoint_path = plan.checkpoint_path();
  if (key) options.checkpoint_key = *key;
  ExploreOutcome outcome = explore(host, plan, body, options);
  const std::optional<std::string> failure_file = env("BUBBLE_FAILURE_FILE");
  if (outcome.failed && failure_file && !failure_file->empty() && key) {
    std::ofstream out(*failure_file, std::ios::binary | std::ios::trunc);
    out << failure_file_json(*key, outcome);
    out.close();
    if (out) {
      std::cout << "bubble: failure file written to " << *failure_file << "\n" << std::flush;
    } else {
      host.report_failure(
          file, line, "bubble: BUBBLE_FAILURE_FILE=" + *failure_file + ": cannot write the file");
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

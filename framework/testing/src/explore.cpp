#include <bubble/testing/explore.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "googletest_host.hpp"

namespace bubble::testing {

ExploreOutcome explore(const TestPlan& plan, const std::function<void(Runtime&)>& body,
                       const ExploreOptions& options) {
  detail::GoogleTestHost host;
  return explore(host, plan, body, options);
}

std::string current_test_command() {
  std::string program;
  const std::vector<std::string> argv = ::testing::internal::GetArgvs();
  program = !argv.empty() && !argv[0].empty() ? argv[0] : self_executable();
  std::string command = shell_word(program);
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info != nullptr) {
    // Appended piece by piece: `"literal" + std::string&&` trips GCC 12's -Wrestrict false
    // positive at -O2 (GCC bug 105329), which -Werror turns into a release-build failure.
    std::string filter = "--gtest_filter=";
    filter += info->test_suite_name();
    filter += '.';
    filter += info->name();
    command += ' ';
    command += shell_word(filter);
    // A disabled test runs only when asked to: without the flag, the line would run no test.
    // GoogleTest's rule: the suite's or the test's name matches DISABLED_* or */DISABLED_*.
    const auto disabled = [](std::string_view name) {
      return name.substr(0, 9) == "DISABLED_" || name.find("/DISABLED_") != std::string_view::npos;
    };
    if (disabled(info->test_suite_name()) || disabled(info->name())) {
      command += " --gtest_also_run_disabled_tests";
    }
  }
  return command;
}

}  // namespace bubble::testing

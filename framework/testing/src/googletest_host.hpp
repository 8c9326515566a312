#pragma once

// Private to the GoogleTest glue: GoogleTest as the host framework of an exploration.

#include <bubble/testing/host.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace bubble::testing::detail {

// The TestHost of BUBBLE_TEST, run_test() and explore(plan, ...): captures GoogleTest's test part
// results (EXPECT_*, ASSERT_*, ADD_FAILURE, GTEST_SKIP) with CapturedFailures, reports through
// GoogleTest's assertion machinery, and names the current test by
// ::testing::UnitTest::current_test_info().
class GoogleTestHost final : public TestHost {
 public:
  std::string_view name() const noexcept override { return "GoogleTest"; }
  std::unique_ptr<HostCapture> capture() override;
  void rereport(const HostResult& result) override;
  void report_failure(const char* file, int line, const std::string& message) override;
  void report_skip(const char* file, int line, const std::string& message) override;
  const char* test_file() const override;
  int test_line() const override;
  std::optional<std::string> test_key() const override;
  std::string replay_command() const override;
};

}  // namespace bubble::testing::detail

#include "googletest_host.hpp"

#include <bubble/testing/explore.hpp>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "captured_failures.hpp"

namespace bubble::testing::detail {
namespace {

HostResult::Kind kind_of(::testing::TestPartResult::Type type) {
  switch (type) {
    case ::testing::TestPartResult::kNonFatalFailure:
      return HostResult::Kind::failure;
    case ::testing::TestPartResult::kFatalFailure:
      return HostResult::Kind::fatal_failure;
    case ::testing::TestPartResult::kSkip:
      return HostResult::Kind::skip;
    case ::testing::TestPartResult::kSuccess:
      break;
  }
  return HostResult::Kind::success;
}

::testing::TestPartResult::Type type_of(HostResult::Kind kind) {
  switch (kind) {
    case HostResult::Kind::failure:
      return ::testing::TestPartResult::kNonFatalFailure;
    case HostResult::Kind::fatal_failure:
      return ::testing::TestPartResult::kFatalFailure;
    case HostResult::Kind::skip:
      return ::testing::TestPartResult::kSkip;
    case HostResult::Kind::success:
      break;
  }
  return ::testing::TestPartResult::kSuccess;
}

// GoogleTest's results, captured into a TestPartResultArray while `capture_` exists.
class GoogleTestCapture final : public HostCapture {
 public:
  GoogleTestCapture() { capture_.emplace(&parts_); }
  std::size_t size() const noexcept override { return static_cast<std::size_t>(parts_.size()); }
  HostResult at(std::size_t i) const override {
    const ::testing::TestPartResult& r = parts_.GetTestPartResult(static_cast<int>(i));
    return HostResult{kind_of(r.type()), r.file_name() != nullptr ? r.file_name() : "",
                      r.line_number(), r.message()};
  }
  void stop() noexcept override { capture_.reset(); }

 private:
  ::testing::TestPartResultArray parts_;
  std::optional<CapturedFailures> capture_;
};

const ::testing::TestInfo* current() {
  return ::testing::UnitTest::GetInstance()->current_test_info();
}

}  // namespace

std::unique_ptr<HostCapture> GoogleTestHost::capture() {
  return std::make_unique<GoogleTestCapture>();
}

void GoogleTestHost::rereport(const HostResult& result) {
  ::testing::internal::AssertHelper(type_of(result.kind),
                                    result.file.empty() ? nullptr : result.file.c_str(),
                                    result.line, result.message.c_str()) = ::testing::Message();
}

void GoogleTestHost::report_failure(const char* file, int line, const std::string& message) {
  ::testing::internal::AssertHelper(::testing::TestPartResult::kNonFatalFailure, file, line,
                                    message.c_str()) = ::testing::Message();
}

void GoogleTestHost::report_skip(const char* file, int line, const std::string& message) {
  GTEST_MESSAGE_AT_(file, line, "", ::testing::TestPartResult::kSkip) << message;
}

const char* GoogleTestHost::test_file() const {
  const ::testing::TestInfo* info = current();
  return info != nullptr ? info->file() : nullptr;
}

int GoogleTestHost::test_line() const {
  const ::testing::TestInfo* info = current();
  return info != nullptr ? info->line() : -1;
}

std::optional<std::string> GoogleTestHost::test_key() const {
  const ::testing::TestInfo* info = current();
  if (info == nullptr) return std::nullopt;
  return std::string(info->test_suite_name()) + "." + info->name();
}

std::string GoogleTestHost::replay_command() const {
  return current_test_command();
}

}  // namespace bubble::testing::detail

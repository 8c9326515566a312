// Deadlock reports of standard-library locks in an intercepting bubble name the user's line:
// without call stacks, as the caller's module and offset (which a symbolizer turns into that line);
// with Options::symbolize_stacks, as the file:line of the user's frame, as for bubble's own
// primitives. Built with debug information (-g), as file:line needs it.

#include <dlfcn.h>

#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/testing/stacks.hpp>

#include "../../support/failure_text.hpp"
#include "intercepted_run.hpp"

#if defined(BUBBLE_ASAN)
#include <sanitizer/lsan_interface.h>
#endif

namespace {

using bubble::test_support::ends_with;
using bubble::test_support::line_starting;

using namespace std::chrono_literals;

constexpr const char* kFile = "report_test.cpp:";

int a_blocks_line = 0;
int b_blocks_line = 0;

// Two std::threads take two std::mutexes in opposite orders through std::lock_guard.
void lock_order_inversion() {
  std::mutex accounts;
  std::mutex audit;
  // clang-format off
  std::thread a([&] { std::lock_guard first(accounts); std::this_thread::sleep_for(1s); a_blocks_line = __LINE__ + 1;
    std::lock_guard second(audit); });
  std::thread b([&] { std::lock_guard first(audit); std::this_thread::sleep_for(1s); b_blocks_line = __LINE__ + 1;
    std::lock_guard second(accounts); });
  // clang-format on
  a.join();
  b.join();
}

std::string deadlock_report(void (*body)(), const bubble::Options& options) {
#if defined(BUBBLE_ASAN)
  // Threads blocked in the noexcept pthread_mutex_lock are abandoned by the teardown: what their
  // stacks own leaks, by design.
  __lsan::ScopedDisabler abandoned_threads_leak;
#endif
  try {
    run_std(body, options);
  } catch (const bubble::DeadlockError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no deadlock";
  return {};
}

// The file:line a symbolizer gives for "<module>+0x<offset>" in this executable.
std::string symbolize_offset(const std::string& module_and_offset) {
  const std::size_t plus = module_and_offset.find("+0x");
  if (plus == std::string::npos) return "(no offset in \"" + module_and_offset + "\")";
  const std::uintptr_t offset = std::stoull(module_and_offset.substr(plus + 3), nullptr, 16);
  Dl_info self{};
  if (dladdr(reinterpret_cast<const void*>(&symbolize_offset), &self) == 0) return "(no dladdr)";
  const auto* address =
      reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(self.dli_fbase) + offset);
  const auto frames = bubble::testing::stack_symbolizer()({address});
  // Inlined frames come first: the outermost one at the address is the lambda's own line.
  for (const auto& f : frames) {
    if (bubble::is_user_frame(f)) return f.file + ":" + std::to_string(f.line);
  }
  return "(no user frame)";
}

TEST(InterposeReport, WithoutStacksAThreadIsReportedAtItsCallersModuleAndOffset) {
  const std::string report = deadlock_report(lock_order_inversion, {});
  for (int line : {a_blocks_line, b_blocks_line}) {
    SCOPED_TRACE(line);
    const std::string head =
        line_starting(report, "  thread #" + std::to_string(line == a_blocks_line ? 2 : 3));
    // "  thread #2 "std::thread": blocked on Mutex::lock "pthread_mutex_t" (object #4) at
    // pthread_mutex_lock called from interpose_report_tests+0x1a2b3"
    const std::string at = " at pthread_mutex_lock called from interpose_report_tests+0x";
    const std::size_t where = head.find(at);
    ASSERT_NE(where, std::string::npos) << report;
    EXPECT_EQ(
        head.substr(0, where).rfind("\": blocked on Mutex::lock \"pthread_mutex_t\" (object #"),
        head.find("\": "))
        << report;
    // The offset is the user's call: the line of the second lock_guard.
    const std::string symbolized = symbolize_offset(head.substr(where + at.size() - 27));
    EXPECT_TRUE(ends_with(symbolized, kFile + std::to_string(line))) << symbolized << "\n"
                                                                     << report;
  }
}

TEST(InterposeReport, WithStacksAThreadIsReportedAtTheUsersLine) {
  bubble::Options options;
  options.symbolize_stacks = bubble::testing::stack_symbolizer();
  const std::string report = deadlock_report(lock_order_inversion, options);
  for (int line : {a_blocks_line, b_blocks_line}) {
    SCOPED_TRACE(line);
    const std::string prefix =
        "  thread #" + std::to_string(line == a_blocks_line ? 2 : 3) +
        " \"std::thread\": blocked on Mutex::lock \"pthread_mutex_t\" (object #";
    const std::string head = line_starting(report, prefix);
    EXPECT_TRUE(ends_with(head, kFile + std::to_string(line))) << report;
    // Its stack marks the user's frame, not the interposer's nor the standard library's.
    const std::string stack = report.substr(report.find(head));
    EXPECT_TRUE(ends_with(line_starting(stack, "      > "), kFile + std::to_string(line)))
        << report;
  }
}

}  // namespace

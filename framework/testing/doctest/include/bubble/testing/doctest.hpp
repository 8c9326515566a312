#pragma once

#include <doctest/doctest.h>

#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <bubble/bubble.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing/exploration.hpp>
#include <bubble/testing/host.hpp>
#include <bubble/testing/hosted_test.hpp>
#include <bubble/testing/test_plan.hpp>

// doctest glue: a test case whose body runs as the root thread of a bubble, explored and reported
// as BUBBLE_TEST does for GoogleTest (bubble/testing.hpp). Link bubble::testing_doctest.
//
//   BUBBLE_DOCTEST_TEST_CASE("a timer fires after exactly one second") {
//     bubble::Runtime& rt = bubble::current_runtime();   // the bubble
//     const bubble::TimePoint start = rt.now();
//     rt.sleep_for(1s);                                   // returns at once in real time
//     CHECK(rt.now() - start == 1s);                      // exact
//   }
//
// BUBBLE_DOCTEST_TEST_CASE(name) takes TEST_CASE's argument (decorators included) and registers a
// doctest test case like it, so it is listed, filtered and decorated like any other. Its body runs
// in a fresh bubble once per run of the plan the environment chooses (BUBBLE_STRATEGY,
// BUBBLE_SEED, BUBBLE_SCHEDULES, BUBBLE_EXHAUSTIVE, the shard variables, BUBBLE_CHECKPOINT,
// BUBBLE_TRACE, BUBBLE_FAILURE_FILE; see bubble/testing/test_plan.hpp); by default once under
// fifo.
//
// The body may use CHECK, REQUIRE, MESSAGE and FAIL_CHECK on any bubble thread. While the runs go
// on, a doctest listener ("bubble") takes the results and the test case's console output is off,
// and the failures of the failing run are reported when it ends, at their own file and line. A run
// with a failed assertion is a failing run. REQUIRE's exception on the root thread ends the body as
// a failed assertion; on another bubble thread it escapes that thread and fails the run. A failing
// run (a failed assertion, an exception, a deadlock, an exhausted budget) fails the test case with
// one more failure, at the test case's line, whose message ends with the line that reproduces it:
//   replay: BUBBLE_STRATEGY=random:17 /path/to/program --test-case='a timer fires after ...'
// followed in an exploration by the shrunk line.
//
// BUBBLE_STD_DOCTEST_TEST_CASE(name) is the same with Options::intercept_std set, for unmodified
// std::thread, std::mutex, std::condition_variable and std::chrono code, in a program that links
// bubble::interpose (docs/unmodified-code.md).
//
// doctest keeps no way to take a result back: the failures of runs that are not reported (the
// search of a shrink, the replay with stacks, another shard's schedules) still count in doctest's
// totals, and reporters other than the console reporter still see them. Not supported inside the
// body: SUBCASE (doctest runs the test case again per subcase). doctest has no run-time skip: a
// schedule shard with no schedule prints a message and passes. The glue is header-only, so that it
// is compiled with the program's own doctest configuration macros.
namespace bubble::testing {
namespace detail {

// A file name that outlives every doctest result that refers to it.
inline const char* doctest_interned(const std::string& file) {
  static std::mutex mutex;
  static std::set<std::string> files;
  const std::lock_guard<std::mutex> lock(mutex);
  return files.insert(file).first->c_str();
}

// The results a DoctestCapture holds; the listener appends to the innermost active one.
struct DoctestResults {
  std::vector<HostResult> results;
  DoctestResults* previous = nullptr;
};

inline DoctestResults*& doctest_active_results() {
  static DoctestResults* active = nullptr;
  return active;
}

// The doctest listener that hands results to the active capture; it reports nothing itself.
class DoctestListener final : public doctest::IReporter {
 public:
  explicit DoctestListener(const doctest::ContextOptions& /*options*/) {}
  void report_query(const doctest::QueryData& /*data*/) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& /*stats*/) override {}
  void test_case_start(const doctest::TestCaseData& /*data*/) override {}
  void test_case_reenter(const doctest::TestCaseData& /*data*/) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& /*stats*/) override {}
  void test_case_exception(const doctest::TestCaseException& /*e*/) override {}
  void subcase_start(const doctest::SubcaseSignature& /*signature*/) override {}
  void subcase_end() override {}
  void test_case_skipped(const doctest::TestCaseData& /*data*/) override {}

  void log_assert(const doctest::AssertData& a) override {
    DoctestResults* active = doctest_active_results();
    if (active == nullptr || !a.m_failed) return;
    std::string message = std::string(doctest::assertString(a.m_at)) + "( " + a.m_expr + " ) ";
    if (a.m_threw) {
      message += "threw exception:\n  " + std::string(a.m_exception.c_str());
    } else {
      message += "is NOT correct!\n  values: " + std::string(doctest::assertString(a.m_at)) + "( " +
                 a.m_decomp.c_str() + " )";
    }
    active->results.push_back(
        HostResult{(a.m_at & doctest::assertType::is_require) != 0 ? HostResult::Kind::fatal_failure
                                                                   : HostResult::Kind::failure,
                   a.m_file != nullptr ? a.m_file : "", a.m_line, std::move(message)});
  }

  void log_message(const doctest::MessageData& m) override {
    DoctestResults* active = doctest_active_results();
    if (active == nullptr) return;
    HostResult::Kind kind = HostResult::Kind::success;
    if ((m.m_severity & doctest::assertType::is_warn) == 0) {
      kind = (m.m_severity & doctest::assertType::is_require) != 0 ? HostResult::Kind::fatal_failure
                                                                   : HostResult::Kind::failure;
    }
    active->results.push_back(HostResult{kind, m.m_file != nullptr ? m.m_file : "", m.m_line,
                                         std::string(m.m_string.c_str())});
  }
};

// Registers DoctestListener once per program, before doctest's main runs.
inline const int doctest_listener_registered =
    doctest::registerReporter<DoctestListener>("bubble", 0, false);

// Captures doctest's results while it is the innermost active capture, with the running test
// case's console output off.
class DoctestCapture final : public HostCapture {
 public:
  DoctestCapture() {
    (void)doctest_listener_registered;
    results_.previous = doctest_active_results();
    doctest_active_results() = &results_;
    const doctest::ContextOptions* options = doctest::getContextOptions();
    if (options != nullptr && options->currentTest != nullptr) {
      // The test case's own record, which doctest's console reporter reads; it is not a const
      // object (doctest keeps it in a std::set, whose order does not depend on this flag).
      test_ = const_cast<doctest::TestCaseData*>(
          static_cast<const doctest::TestCaseData*>(options->currentTest));
      no_output_before_ = test_->m_no_output;
      test_->m_no_output = true;
    }
  }
  DoctestCapture(const DoctestCapture&) = delete;
  DoctestCapture& operator=(const DoctestCapture&) = delete;
  ~DoctestCapture() override { stop(); }

  std::size_t size() const noexcept override { return results_.results.size(); }
  HostResult at(std::size_t i) const override { return results_.results.at(i); }
  void stop() noexcept override {
    if (!active_) return;
    active_ = false;
    doctest_active_results() = results_.previous;
    if (test_ != nullptr) test_->m_no_output = no_output_before_;
  }

 private:
  DoctestResults results_;
  doctest::TestCaseData* test_ = nullptr;
  bool no_output_before_ = false;
  bool active_ = true;
};

// doctest as the host of an exploration, for the test case that runs BUBBLE_DOCTEST_TEST_CASE's
// body.
class DoctestHost final : public TestHost {
 public:
  DoctestHost(const char* file, int line) : file_(file), line_(line) {}

  std::string_view name() const noexcept override { return "doctest"; }
  std::unique_ptr<HostCapture> capture() override { return std::make_unique<DoctestCapture>(); }
  void rereport(const HostResult& result) override {
    if (result.failed()) {
      fail(result.file.empty() ? nullptr : result.file.c_str(), result.line, result.message);
    } else if (result.skipped() || !result.message.empty()) {
      note(result.file.empty() ? nullptr : result.file.c_str(), result.line, result.message);
    }
  }
  void report_failure(const char* file, int line, const std::string& message) override {
    fail(file, line, message);
  }
  void report_skip(const char* file, int line, const std::string& message) override {
    note(file, line, message);
  }
  bool is_fatal_assertion(const std::exception_ptr& e) const override {
    try {
      std::rethrow_exception(e);
    } catch (const doctest::detail::TestFailureException&) {
      return true;
    } catch (...) {
      return false;
    }
  }
  const char* test_file() const override { return file_; }
  int test_line() const override { return line_; }
  std::optional<std::string> test_key() const override {
    const doctest::ContextOptions* options = doctest::getContextOptions();
    if (options == nullptr || options->currentTest == nullptr) return std::nullopt;
    return std::string(options->currentTest->m_name);
  }
  std::string replay_command() const override {
    std::string command = shell_word(self_executable());
    const std::optional<std::string> name = test_key();
    if (!name) return command;
    // doctest's filters are comma-separated: a backslash makes a comma or a backslash plain.
    std::string filter = "--test-case=";
    for (const char c : *name) {
      if (c == ',' || c == '\\') filter += '\\';
      filter += c;
    }
    return command + " " + shell_word(filter);
  }

 private:
  static void fail(const char* file, int line, const std::string& message) {
    DOCTEST_ADD_FAIL_CHECK_AT(doctest_interned(file != nullptr ? file : "unknown file"), line,
                              message);
  }
  static void note(const char* file, int line, const std::string& message) {
    DOCTEST_ADD_MESSAGE_AT(doctest_interned(file != nullptr ? file : "unknown file"), line,
                           message);
  }

  const char* file_;
  int line_;
};

}  // namespace detail

// Runs `body` as BUBBLE_DOCTEST_TEST_CASE does (run_hosted_test with doctest as the host), with
// Options::intercept_std = `intercept_std`, reporting at `file`:`line`. Call it from a doctest
// test case, on its thread, outside any bubble.
inline ExploreOutcome run_doctest_test(void (*body)(), bool intercept_std, const char* file,
                                       int line, const EnvLookup& env = process_environment()) {
  detail::DoctestHost host(file, line);
  Options options;
  options.intercept_std = intercept_std;
  return run_hosted_test(
      host, [body](Runtime&) { body(); }, options, env);
}

}  // namespace bubble::testing

#define BUBBLE_DOCTEST_CONCAT_INNER_(a, b) a##b
#define BUBBLE_DOCTEST_CONCAT_(a, b) BUBBLE_DOCTEST_CONCAT_INNER_(a, b)

#define BUBBLE_DOCTEST_TEST_CASE_IMPL_(body, intercept_std, decorators)                  \
  static void body();                                                                    \
  DOCTEST_TEST_CASE(decorators) {                                                        \
    (void)::bubble::testing::run_doctest_test(&body, intercept_std, __FILE__, __LINE__); \
  }                                                                                      \
  static void body()

#define BUBBLE_DOCTEST_TEST_CASE(decorators)                                                       \
  BUBBLE_DOCTEST_TEST_CASE_IMPL_(BUBBLE_DOCTEST_CONCAT_(bubble_doctest_body_, __COUNTER__), false, \
                                 decorators)

#define BUBBLE_STD_DOCTEST_TEST_CASE(decorators)                                                  \
  BUBBLE_DOCTEST_TEST_CASE_IMPL_(BUBBLE_DOCTEST_CONCAT_(bubble_doctest_body_, __COUNTER__), true, \
                                 decorators)

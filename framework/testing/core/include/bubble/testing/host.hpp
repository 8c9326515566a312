#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

// The test framework that hosts a bubble test (GoogleTest, Catch2, doctest), as the
// framework-neutral exploration (explore() in exploration.hpp, run_hosted_test() in
// hosted_test.hpp) sees it: capturing the framework's assertion results during runs, reporting
// the test's failure or skip, and naming the test for replay lines, failure files and checkpoints.
namespace bubble::testing {

// One assertion result the host framework reported during a run.
struct HostResult {
  enum class Kind {
    success,        // An assertion that passed, or a message that is not a failure.
    failure,        // A failed assertion that lets the test go on (EXPECT_*, CHECK).
    fatal_failure,  // A failed assertion that ends the function or body (ASSERT_*, REQUIRE).
    skip,           // The body skipped the test (GTEST_SKIP).
  };
  Kind kind = Kind::success;
  // Where the assertion is; empty: unknown.
  std::string file;
  int line = -1;
  // What the framework says about it, without the file and line.
  std::string message;

  bool failed() const noexcept { return kind == Kind::failure || kind == Kind::fatal_failure; }
  bool skipped() const noexcept { return kind == Kind::skip; }
  // "<file>:<line>: <message>\n" ("unknown file" when the file is unknown).
  std::string describe() const;
};

// The assertion results a host captures while it exists, in the order they were reported, from
// any thread (bubble threads of a run take turns, so no two report at once). Destroying it, or
// stop(), ends the capture: later results go to the running test again. The results captured
// stay readable after the capture has stopped.
class HostCapture {
 public:
  virtual ~HostCapture() = default;
  // How many results were captured so far. Cheap, and safe to call while a run fails.
  virtual std::size_t size() const noexcept = 0;
  // The i-th result captured (i < size()).
  virtual HostResult at(std::size_t i) const = 0;
  // Ends the capture; idempotent.
  virtual void stop() noexcept = 0;
};

// The host test framework. An implementation is used on the test's OS thread, while one test of
// the framework runs, by one exploration at a time.
class TestHost {
 public:
  virtual ~TestHost() = default;

  // The framework's name in messages: "GoogleTest", "Catch2", "doctest".
  virtual std::string_view name() const noexcept = 0;

  // Starts capturing the assertion results the framework's own assertions report, on the
  // calling thread and on every other thread, instead of reporting them to the running test.
  // Captures may nest: the innermost one gets the results, and stopping it restores the one
  // before.
  virtual std::unique_ptr<HostCapture> capture() = 0;

  // Reports `result`, captured earlier, to the running test, unchanged (same kind, place and
  // message). Called with no capture of this host active.
  virtual void rereport(const HostResult& result) = 0;

  // Reports a failure of the running test at `file`:`line` (nullptr / -1: unknown) with
  // `message`, which may span several lines. The test goes on (a non-fatal failure).
  virtual void report_failure(const char* file, int line, const std::string& message) = 0;

  // Reports that the running test is skipped, with `message`. A framework that cannot skip a test
  // at run time shows the message and lets the test pass.
  virtual void report_skip(const char* file, int line, const std::string& message) = 0;

  // True when `e` is the exception by which the framework ends a body after a fatal assertion
  // (Catch2's and doctest's REQUIRE). The exploration then counts the run as failed by its
  // captured assertions, not as an exception that escaped. The default: false.
  virtual bool is_fatal_assertion(const std::exception_ptr& e) const;

  // The running test's file and line (nullptr / -1 outside a test): failures of the whole test
  // are reported there.
  virtual const char* test_file() const = 0;
  virtual int test_line() const = 0;

  // The running test's key, "Suite.Name" or the test's name, for failure files and checkpoints;
  // nullopt outside a test.
  virtual std::optional<std::string> test_key() const = 0;

  // The shell command that runs only the running test of this process, for replay lines: the
  // program followed by the framework's own way of selecting the test. Only the program outside
  // a test.
  virtual std::string replay_command() const = 0;
};

// The path of the running executable (/proc/self/exe), or "<test program>" if it cannot be read.
std::string self_executable();

// `word` quoted for a POSIX shell when it holds anything but letters, digits and _-./=:,+@%.
std::string shell_word(const std::string& word);

}  // namespace bubble::testing

#pragma once

#include <catch2/catch.hpp>

#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <bubble/bubble.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing/exploration.hpp>
#include <bubble/testing/host.hpp>
#include <bubble/testing/hosted_test.hpp>
#include <bubble/testing/test_plan.hpp>

// Catch2 (2.x) glue: a test case whose body runs as the root thread of a bubble, explored and
// reported as BUBBLE_TEST does for GoogleTest (bubble/testing.hpp). Link bubble::testing_catch2.
//
//   BUBBLE_CATCH_TEST_CASE("a timer fires after exactly one second", "[timer]") {
//     bubble::Runtime& rt = bubble::current_runtime();   // the bubble
//     const bubble::TimePoint start = rt.now();
//     rt.sleep_for(1s);                                   // returns at once in real time
//     CHECK(rt.now() - start == 1s);                      // exact
//   }
//
// BUBBLE_CATCH_TEST_CASE(name, tags) takes TEST_CASE's arguments and registers a Catch2 test case
// like it, so it is listed, filtered and tagged like any other. Its body runs in a fresh bubble
// once per run of the plan the environment chooses (BUBBLE_STRATEGY, BUBBLE_SEED,
// BUBBLE_SCHEDULES, BUBBLE_EXHAUSTIVE, the shard variables, BUBBLE_CHECKPOINT, BUBBLE_TRACE,
// BUBBLE_FAILURE_FILE; see bubble/testing/test_plan.hpp); by default once under fifo.
//
// The body may use CHECK, REQUIRE, INFO, WARN and FAIL on any bubble thread. While the runs go
// on, Catch2's results are held back (a forwarding Catch::IResultCapture takes them), and the
// failures of the failing run are reported when it ends, at their own file and line. A run with a
// failed assertion is a failing run. REQUIRE's exception on the root thread ends the body as a
// failed assertion; on another bubble thread it escapes that thread and fails the run. A failing
// run (a failed assertion, an exception, a deadlock, an exhausted budget) fails the test case with
// one more failure, at the test case's line, whose message ends with the line that reproduces it:
//   replay: BUBBLE_STRATEGY=random:17 /path/to/program 'a timer fires after exactly one second'
// (the program and the test case's name, escaped as a Catch2 test spec, as its filter argument),
// followed in an exploration by the shrunk line. Catch2's console reporter wraps long messages, so
// those two lines are also printed to standard output as they are, to be copied.
//
// BUBBLE_STD_CATCH_TEST_CASE(name, tags) is the same with Options::intercept_std set, for
// unmodified std::thread, std::mutex, std::condition_variable and std::chrono code, in a program
// that links bubble::interpose (docs/unmodified-code.md).
//
// Not supported inside the body: SECTION and GENERATE (Catch2 runs the test case again per section
// and per generated value; each such run would explore on its own), and Catch2 2.x has no skip: a
// schedule shard with no schedule prints a warning and passes. The glue is header-only, so that
// it is compiled with the program's own Catch2 configuration macros.
namespace bubble::testing {
namespace detail {

// A file name that outlives every Catch2 result that refers to it.
inline const char* catch2_interned(const std::string& file) {
  static std::mutex mutex;
  static std::set<std::string> files;
  const std::lock_guard<std::mutex> lock(mutex);
  return files.insert(file).first->c_str();
}

// Captures Catch2's failures while installed as the context's result capture; forwards everything
// else (passing assertions, sections, messages) to the capture it replaced.
class Catch2Capture final : public HostCapture, public Catch::IResultCapture {
 public:
  Catch2Capture() : previous_(&Catch::getResultCapture()) {
    Catch::getCurrentMutableContext().setResultCapture(this);
  }
  Catch2Capture(const Catch2Capture&) = delete;
  Catch2Capture& operator=(const Catch2Capture&) = delete;
  ~Catch2Capture() override { stop(); }

  std::size_t size() const noexcept override { return results_.size(); }
  HostResult at(std::size_t i) const override { return results_.at(i); }
  void stop() noexcept override {
    if (previous_ == nullptr) return;
    Catch::getCurrentMutableContext().setResultCapture(previous_);
    previous_ = nullptr;
  }

  bool sectionStarted(Catch::SectionInfo const& info, Catch::Counts& assertions) override {
    return previous_->sectionStarted(info, assertions);
  }
  void sectionEnded(Catch::SectionEndInfo const& info) override { previous_->sectionEnded(info); }
  void sectionEndedEarly(Catch::SectionEndInfo const& info) override {
    previous_->sectionEndedEarly(info);
  }
  auto acquireGeneratorTracker(Catch::StringRef name, Catch::SourceLineInfo const& line_info)
      -> Catch::IGeneratorTracker& override {
    return previous_->acquireGeneratorTracker(name, line_info);
  }
#if defined(CATCH_CONFIG_ENABLE_BENCHMARKING)
  void benchmarkPreparing(std::string const& name) override {
    previous_->benchmarkPreparing(name);
  }
  void benchmarkStarting(Catch::BenchmarkInfo const& info) override {
    previous_->benchmarkStarting(info);
  }
  void benchmarkEnded(Catch::BenchmarkStats<> const& stats) override {
    previous_->benchmarkEnded(stats);
  }
  void benchmarkFailed(std::string const& error) override {
    previous_->benchmarkFailed(error);
  }
#endif
  void pushScopedMessage(Catch::MessageInfo const& message) override {
    previous_->pushScopedMessage(message);
  }
  void popScopedMessage(Catch::MessageInfo const& message) override {
    previous_->popScopedMessage(message);
  }
  void emplaceUnscopedMessage(Catch::MessageBuilder const& builder) override {
    previous_->emplaceUnscopedMessage(builder);
  }
  void handleFatalErrorCondition(Catch::StringRef message) override {
    previous_->handleFatalErrorCondition(message);
  }

  void handleExpr(Catch::AssertionInfo const& info, Catch::ITransientExpression const& expr,
                  Catch::AssertionReaction& reaction) override {
    const bool negated = Catch::isFalseTest(info.resultDisposition);
    if (expr.getResult() != negated) {
      previous_->handleExpr(info, expr, reaction);
      return;
    }
    std::ostringstream expansion;
    expr.streamReconstructedExpression(expansion);
    record(info, in_macro(info) + "\nwith expansion:\n  " + expansion.str(), reaction);
  }
  void handleMessage(Catch::AssertionInfo const& info, Catch::ResultWas::OfType type,
                     Catch::StringRef const& message, Catch::AssertionReaction& reaction) override {
    if (type != Catch::ResultWas::ExplicitFailure) {
      previous_->handleMessage(info, type, message, reaction);
      return;
    }
    record(info, "explicitly with message:\n  " + std::string(message), reaction);
  }
  void handleUnexpectedExceptionNotThrown(Catch::AssertionInfo const& info,
                                          Catch::AssertionReaction& reaction) override {
    record(info, in_macro(info) + "\nbecause no exception was thrown where one was expected",
           reaction);
  }
  void handleUnexpectedInflightException(Catch::AssertionInfo const& info,
                                         std::string const& message,
                                         Catch::AssertionReaction& reaction) override {
    record(info, in_macro(info) + "\ndue to unexpected exception with message:\n  " + message,
           reaction);
  }
  void handleIncomplete(Catch::AssertionInfo const& info) override {
    previous_->handleIncomplete(info);
  }
  void handleNonExpr(Catch::AssertionInfo const& info, Catch::ResultWas::OfType type,
                     Catch::AssertionReaction& reaction) override {
    if (Catch::isOk(type)) {
      previous_->handleNonExpr(info, type, reaction);
      return;
    }
    record(info, in_macro(info), reaction);
  }
  bool lastAssertionPassed() override {
    return previous_->lastAssertionPassed();
  }
  void assertionPassed() override {
    previous_->assertionPassed();
  }
  std::string getCurrentTestName() const override {
    return previous_->getCurrentTestName();
  }
  const Catch::AssertionResult* getLastResult() const override {
    return previous_->getLastResult();
  }
  void exceptionEarlyReported() override {
    previous_->exceptionEarlyReported();
  }

 private:
  static std::string in_macro(Catch::AssertionInfo const& info) {
    if (info.macroName.empty()) return std::string(info.capturedExpression);
    return std::string(info.macroName) + "( " + std::string(info.capturedExpression) + " )";
  }

  // Holds a failure back; REQUIRE (a Normal disposition) still ends the body by its exception.
  void record(Catch::AssertionInfo const& info, std::string message,
              Catch::AssertionReaction& reaction) {
    const bool fatal = (info.resultDisposition & Catch::ResultDisposition::Normal) != 0;
    results_.push_back(
        HostResult{fatal ? HostResult::Kind::fatal_failure : HostResult::Kind::failure,
                   info.lineInfo.file != nullptr ? info.lineInfo.file : "",
                   static_cast<int>(info.lineInfo.line), std::move(message)});
    reaction.shouldThrow = fatal;
  }

  Catch::IResultCapture* previous_;
  std::vector<HostResult> results_;
};

// Catch2 as the host of an exploration, for the test case that runs BUBBLE_CATCH_TEST_CASE's body.
class Catch2Host final : public TestHost {
 public:
  Catch2Host(const char* file, int line) : file_(file), line_(line) {}

  std::string_view name() const noexcept override { return "Catch2"; }
  std::unique_ptr<HostCapture> capture() override { return std::make_unique<Catch2Capture>(); }
  void rereport(const HostResult& result) override {
    if (result.failed()) {
      fail(result.file.empty() ? nullptr : result.file.c_str(), result.line, result.message);
    } else if (result.skipped() || !result.message.empty()) {
      warn(result.file.empty() ? nullptr : result.file.c_str(), result.line, result.message);
    }
  }
  void report_failure(const char* file, int line, const std::string& message) override {
    fail(file, line, message);
    // The console reporter wraps long lines: the lines to copy are printed as they are too.
    std::istringstream lines(message);
    std::string text;
    for (std::string l; std::getline(lines, l);) {
      if (l.rfind("replay: ", 0) == 0 || l.rfind("shrunk to ", 0) == 0) text += l + "\n";
    }
    if (!text.empty()) Catch::cout() << text << std::flush;
  }
  void report_skip(const char* file, int line, const std::string& message) override {
    warn(file, line, message);
  }
  bool is_fatal_assertion(const std::exception_ptr& e) const override {
    try {
      std::rethrow_exception(e);
    } catch (const Catch::TestFailureException&) {
      return true;
    } catch (...) {
      return false;
    }
  }
  const char* test_file() const override { return file_; }
  int test_line() const override { return line_; }
  std::optional<std::string> test_key() const override {
    return Catch::getResultCapture().getCurrentTestName();
  }
  std::string replay_command() const override {
    // A Catch2 test spec: a backslash makes the next character plain.
    std::string spec;
    for (const char c : Catch::getResultCapture().getCurrentTestName()) {
      if (c == '\\' || c == ',' || c == '[' || c == ']' || c == '"' || c == '~' || c == '*') {
        spec += '\\';
      }
      spec += c;
    }
    return shell_word(self_executable()) + " " + shell_word(spec);
  }

 private:
  static void report(const char* file, int line, Catch::ResultWas::OfType type,
                     const std::string& message) {
    Catch::AssertionHandler handler(
        Catch::StringRef(""),
        Catch::SourceLineInfo(catch2_interned(file != nullptr ? file : "unknown file"),
                              static_cast<std::size_t>(line < 0 ? 0 : line)),
        Catch::StringRef(""), Catch::ResultDisposition::ContinueOnFailure);
    handler.handleMessage(type, message);
    handler.complete();
  }
  static void fail(const char* file, int line, const std::string& message) {
    report(file, line, Catch::ResultWas::ExplicitFailure, message);
  }
  static void warn(const char* file, int line, const std::string& message) {
    report(file, line, Catch::ResultWas::Warning, message);
  }

  const char* file_;
  int line_;
};

}  // namespace detail

// Runs `body` as BUBBLE_CATCH_TEST_CASE does (run_hosted_test with Catch2 as the host), with
// Options::intercept_std = `intercept_std`, reporting at `file`:`line`. Call it from a Catch2
// test case, on its thread, outside any bubble.
inline ExploreOutcome run_catch2_test(void (*body)(), bool intercept_std, const char* file,
                                      int line, const EnvLookup& env = process_environment()) {
  detail::Catch2Host host(file, line);
  Options options;
  options.intercept_std = intercept_std;
  return run_hosted_test(
      host, [body](Runtime&) { body(); }, options, env);
}

}  // namespace bubble::testing

#define BUBBLE_CATCH_CONCAT_INNER_(a, b) a##b
#define BUBBLE_CATCH_CONCAT_(a, b) BUBBLE_CATCH_CONCAT_INNER_(a, b)
#if defined(CATCH_CONFIG_PREFIX_ALL)
#define BUBBLE_CATCH_TEST_CASE_MACRO_ CATCH_TEST_CASE
#else
#define BUBBLE_CATCH_TEST_CASE_MACRO_ TEST_CASE
#endif

#define BUBBLE_CATCH_TEST_CASE_IMPL_(body, intercept_std, ...)                          \
  static void body();                                                                   \
  BUBBLE_CATCH_TEST_CASE_MACRO_(__VA_ARGS__) {                                          \
    (void)::bubble::testing::run_catch2_test(&body, intercept_std, __FILE__, __LINE__); \
  }                                                                                     \
  static void body()

#define BUBBLE_CATCH_TEST_CASE(...)                                                          \
  BUBBLE_CATCH_TEST_CASE_IMPL_(BUBBLE_CATCH_CONCAT_(bubble_catch_body_, __COUNTER__), false, \
                               __VA_ARGS__)

#define BUBBLE_STD_CATCH_TEST_CASE(...)                                                     \
  BUBBLE_CATCH_TEST_CASE_IMPL_(BUBBLE_CATCH_CONCAT_(bubble_catch_body_, __COUNTER__), true, \
                               __VA_ARGS__)

#pragma once

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <bubble/bubble.hpp>
#include <bubble/gen/schedule.hpp>
#include <bubble/runtime.hpp>
#include <bubble/testing/case.hpp>
#include <bubble/testing/case_search.hpp>

// Running a bubble inside a RapidCheck property.
namespace bubble::testing {

// Runs `root` as the root thread of a new bubble (bubble::run(options, root)) from a property (a
// RapidCheck property, or one checked by bubble::testing::check), and turns a failing run into a
// failure of the property's current case, so that the case shrinks and its counterexample is
// printed:
//   - a bubble::RunFailure (deadlock, exhausted budget, an exception derived from std::exception
//     escaping a bubble thread, BUBBLE_ASSERT's CaseFailure among them) fails the case with a
//     CaseFailure whose message is the failure's, with its last line, the bubble's
//     "replay: BUBBLE_STRATEGY=..." line, replaced by the case schedule line below;
//   - a GoogleTest failure (EXPECT_*, ASSERT_*) on a bubble thread during the run is held back
//     and fails the case (a CaseFailure) instead of the test directly, with its message and the
//     case schedule line;
//   - an exception that is not a std::exception (RapidCheck's RC_ASSERT, RC_FAIL, RC_PRE,
//     RC_SUCCEED in any bubble thread) goes on unchanged, so that RapidCheck's runners keep its
//     meaning; its message then carries no case schedule line (the FailedRunRecorder has it).
// A CaseFailure is a std::runtime_error: RapidCheck reports it as a failure with its message.
// The case schedule line is kCaseScheduleLabel followed by the strategy that replays the bubble
// run (a seeded strategy itself, a choices strategy as the picks recorded up to the failure).
// Inside a case that strategy alone reproduces nothing: the case's generated inputs come from
// the property's generators, so the whole case is reproduced by its reproduce string (check()'s
// CheckResult::reproduce, or RapidCheck's RC_PARAMS="reproduce=...") or by rerunning with the
// same seed; the strategy replays the run only inside that case (Options::strategy).
// A run without Options::name is named "bubble", so that its messages do not depend on how many
// bubbles the process ran before: a case replayed in a fresh process reports the same text.
// Other exceptions (bad options: std::invalid_argument; called inside a bubble: std::logic_error)
// propagate unchanged. Returns the run's result when it succeeds.
//
// Must be called on the property's thread, outside any bubble.
RunResult run_property(const Options& options, std::function<void(Runtime&)> root);

// The last bubble run of run_property that failed on this thread while a FailedRunRecorder
// was alive: what replays it inside its case, and its trace.
struct FailedRun {
  // The strategy of the case schedule line (replays the run only inside its case).
  Strategy strategy;
  // True when the recorder traces and the run ended with a bubble::RunFailure, which carries
  // the trace (an exception that is not a std::exception, such as RapidCheck's RC_ASSERT, ends
  // a run with none).
  bool traced = false;
  // The run's trace as Trace::text() and Trace::chrome_json() (empty unless `traced`).
  std::string trace_text;
  std::string trace_chrome;
};

// While alive, records the failed runs of run_property on the thread that created it (the last
// one only; a run ended by an exception that is not a std::exception counts as failed). With
// `trace`, run_property records a trace of every run (Options::trace), so that a failed run's trace
// is kept. Recorders nest: the innermost one records. Not copyable.
class FailedRunRecorder {
 public:
  explicit FailedRunRecorder(bool trace = false);
  ~FailedRunRecorder();
  FailedRunRecorder(const FailedRunRecorder&) = delete;
  FailedRunRecorder& operator=(const FailedRunRecorder&) = delete;

  // Returns the last failed run recorded and forgets it (nullopt when none failed since).
  std::optional<FailedRun> take();

  // The innermost recorder alive on this thread, or nullptr (used by run_property).
  static FailedRunRecorder* current() noexcept;
  bool traces() const noexcept { return trace_; }
  void record(FailedRun run) { last_ = std::move(run); }

 private:
  bool trace_;
  FailedRunRecorder* outer_;
  std::optional<FailedRun> last_;
};

// The label of the case schedule line of run_property's failures.
inline const std::string kCaseScheduleLabel =
    "bubble schedule of this case (replays the run only with the generated values above; "
    "reproduce the whole case with its reproduce string): BUBBLE_STRATEGY=";

// Draws a schedule from bubble::gen::schedule(shape) (`*gen`, so it is part of the case: shown
// in the counterexample and shrunk), then calls run_property with `options` whose strategy is
// that schedule (Strategy::choices; options.replay is cleared). Call it from a property.
RunResult run_with_generated_schedule(std::function<void(Runtime&)> root, Options options = {},
                                      gen::ScheduleShape shape = {});

}  // namespace bubble::testing

namespace bubble::testing::detail {

// The case of a BUBBLE_PROP whose body takes `Args` (see BUBBLE_PROP).
template <class... Args>
void run_prop_case(void (*body)(Args...)) {
  if constexpr (sizeof...(Args) == 0) {
    if (skip_unsearchable_property()) return;
    (void)run_with_generated_schedule([body](Runtime&) { body(); });
  } else {
    static_assert(((!std::is_lvalue_reference_v<Args> ||
                    std::is_const_v<std::remove_reference_t<Args>>)&&...),
                  "BUBBLE_PROP: a parameter may be a value or a const reference: each run of the "
                  "case gets its own copy of the generated inputs");
    const auto inputs = *rc::gen::arbitrary<std::tuple<std::decay_t<Args>...>>();
    run_case([body, &inputs](Runtime&) { std::apply(body, std::tuple(inputs)); });
  }
}

}  // namespace bubble::testing::detail

// BUBBLE_PROP(Suite, Name) { body } and BUBBLE_PROP(Suite, Name, (parameters)) { body } define a
// RapidCheck property as a GoogleTest test (RC_GTEST_PROP) whose body runs as the root thread of a
// bubble. The body uses bubble::current_runtime() and states the property with RC_ASSERT or
// BUBBLE_ASSERT (in any bubble thread). A failure shrinks the inputs (and the schedule, when it
// was generated); with BUBBLE_ASSERT the message ends with the case schedule line (see
// run_property); RapidCheck's reproduce string reproduces the case.
//
// With parameters, as RC_GTEST_PROP's, RapidCheck generates the inputs (rc::Arbitrary of each
// parameter's type) before the bubble runs, and the body runs through run_case: under a generated
// schedule that is part of the case ("choices:0,0,1 (1 preemption)" in the counterexample), or,
// with BUBBLE_EXHAUSTIVE=k, under every schedule within k preemptions, each run with its own copy
// of the inputs (a parameter is a value or a const reference). Without parameters the body draws
// its own inputs with `*rc::gen::...` inside the bubble (that works on any bubble thread) under a
// generated schedule; such a property cannot be searched, and BUBBLE_EXHAUSTIVE skips it with a
// message that says so.
//
//   // Property: concurrent increments under a Mutex are never lost.
//   BUBBLE_PROP(Counter, NoLostUpdates, (std::uint8_t threads)) {
//     ...
//     RC_ASSERT(counter == threads);
//   }
#define BUBBLE_PROP(suite, name, ...) \
  BUBBLE_PROP_IMPL_(suite, name, BUBBLE_PROP_FIRST_(__VA_ARGS__ __VA_OPT__(, )()))
#define BUBBLE_PROP_FIRST_(first, ...) first
#define BUBBLE_PROP_IMPL_(suite, name, parameters)                                 \
  static void suite##_##name##_bubble_prop_body_ parameters;                       \
  RC_GTEST_PROP(suite, name, ()) {                                                 \
    ::bubble::testing::detail::run_prop_case(&suite##_##name##_bubble_prop_body_); \
  }                                                                                \
  static void suite##_##name##_bubble_prop_body_ parameters

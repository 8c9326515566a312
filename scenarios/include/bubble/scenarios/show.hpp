#pragma once

#include <ostream>
#include <string>

#include <rapidcheck.h>

#include <bubble/strategy.hpp>
#include <bubble/time.hpp>

// Values that RapidCheck prints readably in counterexamples. RapidCheck prints a value through a
// `showValue(const T&, std::ostream&)` found by argument-dependent lookup, or `<???>` when there is
// none; std::chrono durations have none (and namespace std must not get one), so generated
// durations are wrapped in DurationValue, and every generated struct of the suites has a
// showValue that names each field and prints durations with their unit.
namespace bubble::scenarios {

// A Duration as "150ms", "1.5s", "250us", "0s" (bubble::format_duration).
std::string show_duration(Duration d);

// A generated Duration: converts to Duration, and prints as show_duration does.
struct DurationValue {
  Duration value{};
  operator Duration() const noexcept { return value; }  // NOLINT: implicit, a plain wrapper
  friend bool operator==(const DurationValue&, const DurationValue&) = default;
};
void showValue(const DurationValue& d, std::ostream& os);

// Whole milliseconds in [lo_ms, hi_ms], shrinking towards lo_ms. Throws std::invalid_argument
// naming both bounds when lo_ms > hi_ms or lo_ms < 0.
rc::Gen<DurationValue> milliseconds_in(int lo_ms, int hi_ms);

// A generated scheduling strategy, printed as its BUBBLE_STRATEGY text ("random:17").
struct StrategyValue {
  Strategy value{};
};
void showValue(const StrategyValue& s, std::ostream& os);

// A strategy for one generated case: a generated choices schedule (shrinks towards fifo; one case
// in four), the random strategy (one in two), or PCT of depth 2 or 3 (one in four), each with a
// generated seed. Random and PCT preempt at
// every decision with some probability, which finds races that need several preemptions in a
// row; choices schedules shrink best.
rc::Gen<StrategyValue> case_strategy();

}  // namespace bubble::scenarios

#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <rapidcheck.h>

#include <bubble/testing/case.hpp>
#include <bubble/testing/property.hpp>

// A property checker over RapidCheck's public generators: generates cases, shrinks a failing one
// to a minimal case, and names it by a reproduce string that replays it at once.
namespace bubble::testing {

// How check() runs a property.
struct CheckParams {
  // The seed of the cases: the same seed (and the same `cases` and `max_size`) generates the
  // same cases, in the same order.
  std::uint64_t seed = 0;
  // How many cases must pass for the property to hold (>= 1).
  int cases = 100;
  // The largest generation size (>= 0), RapidCheck's kNominalSize by default. Case sizes grow
  // with the cases passed: case k (0-based) of N is generated at size k * (max_size + 1) / N,
  // plus the cases discarded so far, at most max_size.
  int max_size = rc::kNominalSize;
  // check() gives up after more than cases * max_discard_ratio discarded cases (>= 0).
  int max_discard_ratio = 10;
  // If set, the only case run is the one this reproduce string names (CheckResult::reproduce,
  // from a check with the same property), without shrinking; seed and cases are not used. A
  // string that is not a reproduce string throws std::invalid_argument naming it.
  std::optional<std::string> reproduce;
  // Record the trace of every bubble run of run_property (FailedRunRecorder with tracing), so
  // that the failing run's trace is kept.
  bool trace = false;
  // Called after each case and each shrink tried, with the cases generated so far (discards
  // included) and the shrinks tried so far. Optional.
  std::function<void(int cases, int shrinks_tried)> progress;
};

// What check() found.
struct CheckResult {
  enum class Verdict {
    passed,  // `cases` cases passed.
    failed,  // A case failed; the fields below describe its minimal shrink.
    gave_up  // Too many cases were discarded before `cases` passed.
  };
  Verdict verdict = Verdict::passed;
  int cases_passed = 0;   // Cases that passed (before the failure, when one failed).
  int discarded = 0;      // Cases discarded (rc::GenerationFailure).
  int shrinks = 0;        // Shrinks accepted on the way to the minimal case.
  int shrinks_tried = 0;  // Shrinks tried, accepted or not.
  // For a failure: the values the minimal case drew with draw(), "<type>:\n<value>" each.
  std::vector<std::string> counterexample;
  // For a failure: why the minimal case failed (CaseFailure's message, or what escaped); for
  // gave_up, why the discarded cases were discarded (the last one's reason).
  std::string description;
  // For a failure: the string that replays the minimal case (CheckParams::reproduce), "<seed>:
  // <case>:<size>:<shrink path>"; it depends only on the case, never on the process.
  std::string reproduce;
  // For a failure whose minimal case ran a bubble through run_property and failed there: that
  // run, as FailedRunRecorder records it.
  std::optional<FailedRun> run;

  bool passed() const noexcept { return verdict == Verdict::passed; }

  // The counterexample, one "<type>:\n<value>\n\n" per drawn value, followed by the
  // description; nothing in it depends on how many cases this process tried.
  std::string case_message() const;
  // A report in RapidCheck's style: "OK, passed N tests" (plus discards), or "Falsifiable after
  // N tests and M shrinks\n\n" followed by case_message(), or "Gave up after N tests\n\n" and
  // the description.
  std::string report() const;
};

namespace detail {

// How one evaluation of the property ended.
struct CaseOutcome {
  enum class Kind { passed, failed, discarded };
  Kind kind = Kind::passed;
  std::string description;
  std::vector<std::string> shown;
  std::optional<FailedRun> run;
};

// Runs `body` once as a case: never throws; a CaseFailure or any other exception fails the case,
// an rc::GenerationFailure discards it.
CaseOutcome evaluate_case(const std::function<void()>& body);

// check() over the generator of case outcomes.
CheckResult check_cases(const rc::Gen<CaseOutcome>& cases, const CheckParams& params);

}  // namespace detail

// Checks `property`, a callable taking no arguments that draws its inputs with `*gen` or draw()
// and states what must hold with BUBBLE_ASSERT/BUBBLE_FAIL (or throws any exception), on
// generated cases: with the cases, seed and sizes of `params`, until a case fails or `cases`
// cases passed. A failing case is shrunk by taking, repeatedly, the first of its shrinks that
// still fails, until none does (RapidCheck's own search); the result names the minimal case and
// its reproduce string. A case fails when the property throws (a CaseFailure, a
// std::exception, anything else); an rc::GenerationFailure (a generator that could not produce a
// value) discards it. Must be called outside any bubble. Bad params (cases < 1, max_size < 0,
// max_discard_ratio < 0) throw std::invalid_argument naming the field and its value.
template <class Property>
CheckResult check(Property&& property, const CheckParams& params) {
  static_assert(std::is_invocable_v<const std::decay_t<Property>&>,
                "bubble::testing::check: the property takes no arguments (draw inputs with *gen)");
  return detail::check_cases(
      rc::gen::exec([p = std::decay_t<Property>(std::forward<Property>(property))] {
        return detail::evaluate_case([&p] { p(); });
      }),
      params);
}

}  // namespace bubble::testing

#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace bubble::scenarios {

// The known-bad limiters kept as exhibits (scenarios/limiter_exhibit_variants.hpp), each with the
// limiter-suite property that must find its bug.
enum class LimiterExhibit {
  // A ticket booth driven by a Ticker: two tickets together after a stall. Found by the booth
  // property (tickets exactly one interval apart after each hand-off).
  ticker_booth,
  // A RateLimiter that refunds a refused job's token into whatever interval it is now: a submit
  // that waited for room across a boundary lets that interval admit n + 1. Found by "at most n
  // per window".
  refund_into_next_interval,
  // A RateLimiter that never refunds a refused job's token. Found by "exactly n per window while
  // a submit waits".
  forgotten_refund,
};

// The name of an exhibit, e.g. "ticker_booth".
const char* to_string(LimiterExhibit exhibit) noexcept;

// The outcome of running an exhibit's property with RapidCheck.
struct ExhibitHunt {
  bool found = false;        // the property failed
  int cases_to_failure = 0;  // generated cases run until the first failure (1-based)
  int first_size = 0;        // the size of the first failing case and of the shrunk one: calls
  int shrunk_size = 0;       //   or takes, plus limiters and preemptions
  std::string first_counterexample;  // the failing cases, printed as in RapidCheck's report
  std::string shrunk_counterexample;
  std::string report;  // the suite's log of the property: RapidCheck's report of the failure
  // Runs the shrunk counterexample again in a fresh bubble with tracing on and returns the
  // trace's text (empty function if nothing was found).
  std::function<std::string()> replay;
};

// Runs the exhibit's property for at most max_cases generated cases from RapidCheck seed `seed`,
// shrinking the first failure. Throws std::invalid_argument if max_cases < 1.
ExhibitHunt hunt_exhibit(LimiterExhibit exhibit, std::uint64_t seed, int max_cases);

}  // namespace bubble::scenarios

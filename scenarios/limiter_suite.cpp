// Scenario suite "limiter": properties of the RateLimiter, the TokenBucket, the ConcurrencyLimiter
// and the TicketBooth over generated workloads and generated schedules, each run in a bubble
// (exact virtual time). The properties themselves are in limiter_properties.hpp.
#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/limiter/ticket_booth.hpp>
#include <bubble/scenarios/property.hpp>
#include <bubble/scenarios/suites.hpp>

#include <string>

#include "limiter_booth_property.hpp"
#include "limiter_properties.hpp"

namespace bubble::scenarios {
namespace {

SuiteResult run_limiter_suite(const SuiteOptions& options, std::ostream& log) {
  SuiteResult result;
  const std::string suite = "limiter";
  check_property(suite, "rate limiter admits at most n per window (backpressure, refunds)", options,
                 result, log, [] { rate_limiter_at_most_n_per_window<RateLimiter>(); });
  check_property(suite, "rate limiter admits exactly n per window while a submit waits", options,
                 result, log, [] { rate_limiter_exactly_n_while_backlogged<RateLimiter>(); });
  check_property(suite,
                 "rate limiter agrees with its model (submit, try_submit, time, cancel, stop)",
                 options, result, log, [] { rate_limiter_matches_its_model(); });
  // Property: once stop() has returned, no token is spent or added and every call that starts
  // returns limiter_stopped, whatever the schedule of the submits racing it.
  check_property(suite, "rate limiter stop admits nothing once it has returned", options, result,
                 log, [] { rate_limiter_stop_races_submits(); });
  check_property(suite, "token bucket agrees with golang.org/x/time/rate and burst + rate * t",
                 options, result, log, [] { token_bucket_agrees_with_go(); });
  check_property(suite, "concurrency limiter admits as a weighted FIFO, never above its limit",
                 options, result, log, [] { concurrency_limiter_is_a_weighted_fifo(); });
  check_property(suite, "ticket booth hands out tickets exactly one interval after each hand-off",
                 options, result, log, [] { ticket_booth_spaces_tickets_exactly<TicketBooth>(); });
  return result;
}

}  // namespace

ScenarioSuite limiter_suite() {
  return {"limiter",
          "RateLimiter at most and exactly n per window and its model, TokenBucket = x/time/rate, "
          "ConcurrencyLimiter weighted FIFO, TicketBooth spacing",
          run_limiter_suite};
}

}  // namespace bubble::scenarios

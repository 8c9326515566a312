// Scenario suite "limiter": properties of the RateLimiter, the TicketBooth and the TokenBucket over
// generated workloads and generated schedules, each run in a bubble (exact virtual time).
#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/gen/schedule.hpp>
#include <bubble/pool.hpp>
#include <bubble/rate_limiter.hpp>
#include <bubble/scenarios/property.hpp>
#include <bubble/scenarios/suites.hpp>
#include <bubble/testing/property.hpp>
#include <bubble/thread.hpp>
#include <bubble/ticket_booth.hpp>
#include <bubble/token_bucket.hpp>

#include <rapidcheck.h>

#include "limiter_properties.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <vector>

namespace bubble::scenarios {
namespace {

using namespace std::chrono_literals;

// Property: a TicketBooth(window, n) never hands out two tickets less than window / n apart, and
// after the taker has been idle it holds no saved-up tickets: a taker that comes back after a
// pause gets one ticket at once and the next one exactly one interval later.
void ticket_booth_spaces_tickets(const Schedule& schedule) {
  const int n = *rc::gen::inRange(1, 10);
  const auto window = std::chrono::milliseconds(*rc::gen::inRange(n, 1000));
  const auto pauses = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 2000));
  testing::run_property({.strategy = schedule.to_strategy()}, [&](Runtime& rt) {
    TicketBooth booth(rt, window, n);
    std::vector<TimePoint> tickets;
    for (const int pause_ms : pauses) {
      rt.sleep_for(std::chrono::milliseconds(pause_ms));
      RC_ASSERT(!booth.take(Context::background()));
      tickets.push_back(rt.now());
      // An eager second take right after: exactly one interval later, never sooner.
      RC_ASSERT(!booth.take(Context::background()));
      tickets.push_back(rt.now());
      RC_ASSERT(tickets.back() - tickets[tickets.size() - 2] == booth.interval());
    }
    for (std::size_t i = 1; i < tickets.size(); ++i) {
      RC_ASSERT(tickets[i] - tickets[i - 1] >= booth.interval());
    }
    booth.stop();
  });
}

// Property: a TokenBucket(rate, burst) never allows more than burst + rate * (t1 - t0) tokens in
// any span [t0, t1] of its decisions (the token-bucket conformance bound).
void token_bucket_conforms(const Schedule& schedule) {
  const int rate = *rc::gen::inRange(1, 100);
  const int burst = *rc::gen::inRange(1, 10);
  const auto requests = *rc::gen::container<std::vector<std::pair<int, int>>>(
      rc::gen::pair(rc::gen::inRange(0, 100), rc::gen::inRange(1, burst + 1)));
  testing::run_property({.strategy = schedule.to_strategy()}, [&](Runtime& rt) {
    TokenBucket bucket(rt, rate, burst);
    std::vector<std::pair<Duration, int>> allowed;
    const TimePoint start = rt.now();
    for (const auto& [gap_ms, tokens] : requests) {
      rt.sleep_for(std::chrono::milliseconds(gap_ms));
      if (bucket.allow(tokens)) allowed.emplace_back(rt.now() - start, tokens);
    }
    for (std::size_t i = 0; i < allowed.size(); ++i) {
      long long sum = 0;
      for (std::size_t j = i; j < allowed.size(); ++j) {
        sum += allowed[j].second;
        const double span_s =
            std::chrono::duration<double>(allowed[j].first - allowed[i].first).count();
        RC_ASSERT(static_cast<double>(sum) <= burst + rate * span_s + 1e-9);
      }
    }
  });
}

SuiteResult run_limiter_suite(const SuiteOptions& options, std::ostream& log) {
  SuiteResult result;
  const std::string suite = "limiter";
  check_property(suite, "rate limiter admits at most n per window (backpressure, refunds)", options,
                 result, log, [] { rate_limiter_at_most_n_per_window<RateLimiter>(); });
  check_property(suite, "rate limiter admits exactly n per window while a submit waits", options,
                 result, log, [] { rate_limiter_exactly_n_while_backlogged<RateLimiter>(); });
  check_property(suite, "ticket booth never issues two tickets within an interval", options, result,
                 log, [](const Schedule& s) { ticket_booth_spaces_tickets(s); });
  check_property(suite, "token bucket never exceeds burst + rate * t", options, result, log,
                 [](const Schedule& s) { token_bucket_conforms(s); });
  return result;
}

}  // namespace

ScenarioSuite limiter_suite() {
  return {"limiter",
          "RateLimiter at most n per interval, TicketBooth spacing, TokenBucket conformance",
          run_limiter_suite};
}

}  // namespace bubble::scenarios

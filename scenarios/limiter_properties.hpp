#pragma once

// The limiter suite's properties, each a function of the implementation under test, so that the
// suite runs them against the library and the exhibit tests run them against known-bad variants.
// Every property is a RapidCheck testable (no arguments; it draws its inputs with `*gen`, which
// are printed with their names and units in a counterexample). Private to the scenarios library.
#include <bubble/limiter/rate_limiter.hpp>

#include <rapidcheck.h>

#include "limiter_rate_run.hpp"
#include "limiter_rate_workload.hpp"

namespace bubble::scenarios {

// Property: a RateLimiter never admits more than n jobs per refill window, with every refusal
// and refund path in play (small pools with backpressure, submit and try_submit mixed, context
// deadlines, tenant caps, stop() while submits wait, the pool shutting down, two limiters on one
// pool); a refused job never runs; stop() wakes waiting submits with limiter_stopped at exactly
// that instant. (See check_rate_observations for the conditions.)
template <class Limiter>
void rate_limiter_at_most_n_per_window() {
  const RateWorkload w = testing::draw(backpressure_workload());
  RateObservations obs;
  (void)run_rate_workload<Limiter>(w, {}, obs);
  check_rate_observations(w, obs, /*exact=*/false);
}

// Property: while a submit waits for a token, a RateLimiter admits exactly n jobs per window —
// no fewer (a limiter that refuses too much or loses a refund) and no more — with immediate pool
// refusals (tenant_limit, closed) refunded, context deadlines, stop() and shutdown in play.
template <class Limiter>
void rate_limiter_exactly_n_while_backlogged() {
  const RateWorkload w = testing::draw(backlog_workload());
  RateObservations obs;
  (void)run_rate_workload<Limiter>(w, {}, obs);
  check_rate_observations(w, obs, /*exact=*/true);
}

// Property: every decision of a TokenBucket — allow, reserve (with its delay), cancel, and wait
// (with its return instant and error: exceeds_burst, would_exceed_deadline, cancelled while
// waiting) — equals that of a pure model of golang.org/x/time/rate's Limiter, in both directions
// (allow(n) succeeds exactly when the model has n tokens; reservation delays are Go's, truncated
// to the nanosecond, at rates such as 3/s whose token period is not a whole number of
// nanoseconds); and the tokens usable by any time t never exceed burst + rate * t.
void token_bucket_agrees_with_go();

// Property: a ConcurrencyLimiter with several takers (weights 1..limit, hold times, deadlines
// while waiting) never has more than its limit in flight, and admits each taker at exactly the
// instant a weighted FIFO semaphore without overtaking would (or lets it give up at its
// deadline).
void concurrency_limiter_is_a_weighted_fifo();

// Property (model-based, rc::state commands): a RateLimiter feeding a pool, driven by the
// commands submit, try_submit, advance time, cancel a waiting submit's context, shut the pool
// down and stop the limiter, agrees after every command with a model of its tokens and of every
// waiting submit's fate.
void rate_limiter_matches_its_model();

// Property: submits and try_submits race stop() under generated schedules: once stop() has
// returned, the bucket's tokens never change again and every call that starts returns
// limiter_stopped; a call that returns limiter_stopped never runs its job; an accepted job runs
// exactly once; the accepted calls spent exactly the tokens the bucket lost.
void rate_limiter_stop_races_submits();

}  // namespace bubble::scenarios

#pragma once

#include <bubble/scenarios/pool_under_test.hpp>
#include <bubble/scenarios/proof.hpp>

// The claims the proofs suite proves (see prove() in proof.hpp), each on every workload of a small
// configuration that its Proof::configuration states.
namespace bubble::scenarios {

// The RateLimiter admits at most n per window: on every workload of one RateLimiter (n = 1 per
// 10 ms) feeding a pool of one worker and a queue of one, with 1-4 submits and try_submits by one
// submitter or one by each of two, and stop() at the first refill (a single call) or never, every
// run meets the limiter suite's conditions
// (check_rate_observations: at most n per window, refunds within the window's budget, every call
// ends with a documented result, calls after stop() refused). Default bound: 1 preemption.
Proof rate_limiter_proof();
// Shutdown never loses an accepted job: on every workload of a pool of 2 workers and a queue of 2,
// with 1-4 jobs of 10 ms by one submitter, all handed over by submit,
// try_submit or submit_within, and a shutdown at 0 ms (racing the submits through the lock-free
// inbox) that drains, cancels at a 5 ms deadline or at once, or the destructor without shutdown,
// every run of `impl` meets the pool suite's conditions (pool_case_body: each accepted job
// reports exactly one outcome, refused jobs never run, submits end by the shutdown instant,
// counters agree). Default bound: 1 preemption.
Proof shutdown_proof(const PoolImplementation& impl);

}  // namespace bubble::scenarios

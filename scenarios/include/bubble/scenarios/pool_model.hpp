#pragma once

#include <bubble/scenarios/pool_under_test.hpp>

// A model-based test of a pool (RapidCheck's rc::state): a pure model of a pool with one tenant
// and one priority predicts, command by command, what every submit returns, the queue depth, the
// busy workers, the counters and each job's outcome.
namespace bubble::scenarios {

// The body of a RapidCheck property: draws a pool (1-3 workers, capacity 1-3, and for
// implementations that honour it a PoolOptions::room_to_resume of 0-capacity) and a sequence of
// commands — submit, try_submit and submit_within (max_wait 0-30 ms), each with the background
// context or one of two cancellable contexts; cancel a context; advance time 1-40 ms; shutdown
// with a grace of 0-60 ms — and runs them, in a bubble under fifo, against the pool `impl` makes,
// checking after each command that the pool and the model agree. Jobs work 0-30 ms, watching
// their context. After every command the bubble settles (bubble::wait), so the model need not
// order events at one instant; timeouts are drawn a microsecond past whole milliseconds (one more
// for each later timeout), so no timeout ever coincides with the end of a job.
void check_pool_against_model(const PoolImplementation& impl);

}  // namespace bubble::scenarios

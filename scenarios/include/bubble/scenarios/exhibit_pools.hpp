#pragma once

#include <bubble/scenarios/pool_under_test.hpp>

// Known-bad pools, kept here (never in the library) as exhibits: each is a small pool with one
// deliberate, realistic flaw, and the pool suite's workload property must find it. They honour
// workers, queue_capacity, the three submit kinds, submitter contexts, shutdown with a deadline
// and the destructor, and count outcomes like bubble::Pool; they ignore tenants, priorities and
// expected durations (their PoolImplementation says so, and the generators leave those out).
namespace bubble::scenarios {

enum class PoolFlaw {
  none,                       // the same small pool without a flaw (the exhibits' control)
  closes_before_draining,     // shutdown drops the queued jobs instead of letting workers drain
  reads_closed_outside_lock,  // submit reads `closed` before taking the lock, racing shutdown
};
const char* to_string(PoolFlaw flaw) noexcept;

// The small pool with `flaw`, named "exhibit pool (<flaw>)".
PoolImplementation exhibit_pool(PoolFlaw flaw);

}  // namespace bubble::scenarios

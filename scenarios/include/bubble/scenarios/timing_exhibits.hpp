#pragma once

#include <functional>
#include <ostream>

#include <rapidcheck.h>

#include <bubble/runtime.hpp>
#include <bubble/scenarios/show.hpp>

// Two classic timing bugs, each written the right way and the tempting wrong way (the exhibit).
// The timing-bugs suite's properties run the right versions under generated schedules; the
// scenario tests run the same properties on the wrong versions and require them to fail.
namespace bubble::scenarios {

// A generated case: how many threads take part, and the schedule.
struct RaceCase {
  int threads = 2;               // consumers waiting for a notification, or buyers of a ticket
  int capacity = 1;              // tickets on sale (check-then-act)
  DurationValue producer_delay;  // the producer of the notification sleeps this long first
  StrategyValue strategy;
};
void showValue(const RaceCase& c, std::ostream& os);

// 1-4 threads, 1-3 tickets, a producer delay of 0-2 ms (0 half of the time), any strategy.
rc::Gen<RaceCase> race_case();

// Property: every consumer waiting on a CondVar for a flag the producer sets and broadcasts
// wakes and sees the flag. With `predicate_loop` the consumers wait as `while (!ready)
// cv.wait(lk)`; without it they call cv.wait(lk) unconditionally, and a consumer that reaches the
// wait after the broadcast misses its wake-up. Consumers give up after 1 s (the producer takes at
// most 2 ms), and the body then throws PropertyViolation ("lost wake-up: ...").
std::function<void(Runtime&)> lost_wakeup_body(bool predicate_loop, const RaceCase& c);

// Property: `threads` buyers each buy one ticket if any is left; no more than `capacity` are ever
// sold. With `locked` the check and the sale happen under one Mutex; without it the buyer checks,
// then sells (a scheduling point between them), and two buyers can sell the last ticket twice:
// the body throws PropertyViolation.
std::function<void(Runtime&)> check_then_act_body(bool locked, const RaceCase& c);

}  // namespace bubble::scenarios

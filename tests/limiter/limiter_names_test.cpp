// The limiters name what they own ("concurrency_limiter.slots", "ticket_booth.tickets",
// "ticket_booth.pause", "rate_limiter.tokens", "rate_limiter.refill", the threads "ticket_booth"
// and "rate_limiter/refill"), and those names
// reach a bubble's failure reports.

#include <bubble/bubble.hpp>
#include <bubble/context.hpp>
#include <bubble/limiter/concurrency_limiter.hpp>
#include <bubble/limiter/rate_limiter.hpp>
#include <bubble/limiter/ticket_booth.hpp>
#include <bubble/pool/pool.hpp>
#include <bubble/runtime.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "../support/failure_text.hpp"

namespace {

using bubble::test_support::failure_of;
using bubble::test_support::line_without_location;

using namespace std::chrono_literals;
using bubble::Context;
using bubble::Runtime;

// A second acquire of a one-slot limiter whose slot is never released deadlocks on its slots.
TEST(LimiterNames, ConcurrencyLimiterSlotsInADeadlockReport) {
  const std::string m = failure_of([](Runtime& rt) {
    bubble::ConcurrencyLimiter limiter(1, rt);  // object #1
    (void)limiter.acquire(Context::background());
    auto second = rt.spawn("second", [&] { (void)limiter.acquire(Context::background()); });
    second->join();
  });
  EXPECT_NE(m.find("bubble: deadlock: "), std::string::npos) << m;
  EXPECT_EQ(line_without_location(m, "  thread #2 "),
            "  thread #2 \"second\": blocked on WeightedSemaphore::acquire "
            "\"concurrency_limiter.slots\" (object #1)")
      << m;
}

// A taker waits for the booth's next ticket, an hour away; the run's virtual-time budget of a
// minute ends it first, and the report lists the taker on the booth's channel and the booth's own
// thread.
TEST(LimiterNames, TicketBoothTakerAndThreadInAFailureReport) {
  const std::string m = failure_of(
      [](Runtime& rt) {
        bubble::TicketBooth booth(1h, 1, rt);     // Its channel: object #1.
        (void)booth.take(Context::background());  // The first ticket comes at once.
        auto taker = rt.spawn("taker", [&] { (void)booth.take(Context::background()); });
        taker->join();
      },
      {.max_virtual_time = 1min});
  EXPECT_NE(m.find("max_virtual_time"), std::string::npos) << m;
  EXPECT_EQ(line_without_location(m, "  thread #3 "),
            "  thread #3 \"taker\": blocked on Channel::receive \"ticket_booth.tickets\" (object "
            "#1)")
      << m;
  // The booth's thread waits for its pause between tickets, on the timer it names.
  EXPECT_NE(line_without_location(m, "  thread #2 \"ticket_booth\": blocked on ")
                .find("\"ticket_booth.pause\""),
            std::string::npos)
      << m;
}

// A submit waiting for the next interval's token (an hour away, past the run's virtual-time
// budget) waits on the limiter's condition variable; the pool's idle worker on the pool's.
TEST(LimiterNames, RateLimiterTokensInAFailureReport) {
  const std::string m = failure_of(
      [](Runtime& rt) {
        bubble::Pool pool({.workers = 1}, rt);
        bubble::RateLimiter limiter(pool, 1, 1h);
        (void)limiter.submit(Context::background(), [](const Context&) {});
        auto waiting = rt.spawn(
            "waiting", [&] { (void)limiter.submit(Context::background(), [](const Context&) {}); });
        waiting->join();
      },
      {.max_virtual_time = 1min});
  EXPECT_NE(m.find("max_virtual_time"), std::string::npos) << m;
  EXPECT_EQ(
      line_without_location(m, "  thread #4 "),
      "  thread #4 \"waiting\": blocked on CondVar::wait \"rate_limiter.tokens\" (object #16)")
      << m;
  EXPECT_EQ(line_without_location(m, "  thread #2 "),
            "  thread #2 \"pool/worker-0\": blocked on CondVar::wait \"pool.work\" (object #2)")
      << m;
  // The refill thread waits for its next tick, on the ticker it names.
  EXPECT_NE(line_without_location(m, "  thread #3 \"rate_limiter/refill\": blocked on ")
                .find("\"rate_limiter.refill\""),
            std::string::npos)
      << m;
}

}  // namespace

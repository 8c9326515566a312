// A first fake-clock test with Catch2 (docs/CATCH2-AND-DOCTEST.md): the body runs in a bubble, the
// timer fires after exactly two virtual seconds, and no real time passes. Link
// bubble::testing_catch2. Run it as any Catch2 program; explore 500 schedules of every bubble test
// case with
//   BUBBLE_SCHEDULES=500 ./examples_catch2_tests
// and a failing one prints the line that replays it:
//   replay: BUBBLE_STRATEGY=random:17 ./examples_catch2_tests 'a timer fires after exactly its ...'
#define CATCH_CONFIG_MAIN
#include <bubble/testing/catch2.hpp>
#include <bubble/timer.hpp>

using namespace std::chrono_literals;

BUBBLE_CATCH_TEST_CASE("a timer fires after exactly its duration", "[timer]") {
  bubble::Runtime& rt = bubble::current_runtime();
  const bubble::TimePoint start = rt.now();
  bubble::Timer timer(2s, rt);
  const auto fired = timer.channel().receive();  // blocks until the timer fires
  REQUIRE(fired.has_value());
  CHECK(*fired - start == 2s);    // the time the timer fired at, exactly
  CHECK(rt.now() - start == 2s);  // and the clock did not move further
}
